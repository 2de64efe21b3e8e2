package topo

import (
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// sysctls decodes "key: value" pairs. Keys use dots or slashes (slashes are
// normalised to dots, as sysctl(8) does); only net.* sysctls are allowed,
// since the others are not per network namespace and would change the host.
func (d *dec) sysctls(n *yaml.Node, path string) []KV {
	var out []KV
	seen := map[string]bool{}
	for _, e := range d.entries(n, path) {
		p := joinPath(path, keyPath(e.Key))
		key := normaliseSysctl(e.Key)
		switch {
		case !validSysctl(key):
			d.errorf(at(e.K, p), "%q is not a sysctl name (e.g. net.ipv4.tcp_sack or net/ipv4/tcp_sack)", clip(e.Key))
			continue
		case !strings.HasPrefix(key, "net."):
			d.errorf(at(e.K, p), "%s is not per network namespace: setting it in a node would change the whole host (only net.* sysctls are allowed)", key)
			continue
		case seen[key]:
			d.errorf(at(e.K, p), "sysctl %s is set twice", key)
			continue
		}
		seen[key] = true
		val, ok := d.sysctlValue(e.V, p)
		if ok {
			out = append(out, KV{Key: key, Value: val})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func (d *dec) sysctlValue(n *yaml.Node, path string) (string, bool) {
	n = deref(n)
	if n != nil && n.Kind == yaml.SequenceNode { // "4096 131072 6291456"
		parts := make([]string, 0, len(n.Content))
		for i, item := range n.Content {
			s, ok := d.scalar(item, idx(path, i), "a number or word")
			if !ok {
				return "", false
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, " "), len(parts) > 0
	}
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		if n.Value == "true" || n.Value == "True" || n.Value == "TRUE" {
			return "1", true
		}
		return "0", true
	}
	s, ok := d.scalar(n, path, "a value (number, word or list of numbers)")
	if ok && strings.ContainsAny(s, "\n\x00") {
		d.errorf(at(n, path), "a sysctl value must be one line")
		return "", false
	}
	return s, ok
}

// normaliseSysctl turns "net/ipv4/conf/eth0.100/rp_filter" into
// "net.ipv4.conf.eth0/100.rp_filter": with slashes, dots inside a
// component become slashes, as sysctl(8) does.
func normaliseSysctl(k string) string {
	if !strings.Contains(k, "/") {
		return k
	}
	b := []byte(strings.Trim(k, "/"))
	for i, c := range b {
		switch c {
		case '/':
			b[i] = '.'
		case '.':
			b[i] = '/'
		}
	}
	return string(b)
}

func validSysctl(k string) bool {
	parts := strings.Split(k, ".")
	if len(parts) < 2 || len(k) > 256 {
		return false
	}
	for _, p := range parts {
		if p == "" || p == ".." {
			return false
		}
		for _, c := range p {
			if !(c == '_' || c == '-' || c == '/' || c == '@' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return false
			}
		}
	}
	return true
}

func (d *dec) env(n *yaml.Node, path string) []KV {
	var out []KV
	for _, e := range d.entries(n, path) {
		p := joinPath(path, keyPath(e.Key))
		if !validEnvName(e.Key) {
			d.errorf(at(e.K, p), "%q is not an environment variable name: use letters, digits and '_', not starting with a digit", clip(e.Key))
			continue
		}
		v := deref(e.V)
		if isNull(v) {
			out = append(out, KV{Key: e.Key})
			continue
		}
		if s, ok := d.scalar(v, p, "a string"); ok {
			if strings.ContainsRune(s, 0) {
				d.errorf(at(v, p), "an environment value cannot contain NUL bytes")
				continue
			}
			out = append(out, KV{Key: e.Key, Value: s})
		}
	}
	return out
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
