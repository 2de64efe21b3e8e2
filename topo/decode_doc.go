package topo

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// document decodes the top-level mapping.
func (d *dec) document(root *yaml.Node) *rawDoc {
	doc := &rawDoc{addr: defaultAddressing(), routing: "auto"}
	var nodesV, linksV *yaml.Node
	for _, e := range d.entries(root, "") {
		switch {
		case strings.HasPrefix(e.Key, "x-"):
			continue // free for anchors, as in compose files
		case !slices.Contains(docKeys, e.Key):
			d.errorf(at(e.K, ""), "unknown key %q %s", clip(e.Key), choices("valid", e.Key, docKeys))
			continue
		}
		switch e.Key {
		case "version":
			v := deref(e.V)
			if v == nil || v.Kind != yaml.ScalarNode || v.Value != "1" {
				got := describe(e.V)
				if v != nil && v.Kind == yaml.ScalarNode {
					got = clip(v.Value)
				}
				d.errorf(at(e.V, "version"), "unsupported version %s (valid: 1)", got)
			}
		case "name":
			if s, ok := d.str(e.V, "name", "a lab name"); ok {
				if msg := checkLabName(s); msg != "" {
					d.errorf(at(e.V, "name"), "%s", msg)
				}
				doc.name, doc.nameLoc = s, at(e.V, "name")
			}
		case "addressing":
			d.addressing(e.V, &doc.addr)
		case "routing":
			if s, ok := d.oneOf(e.V, "routing", "routing mode", routingModes); ok {
				doc.routing, doc.routingLoc = s, at(e.V, "routing")
			}
		case "defaults":
			d.defaults(e.V, doc)
		case "machines", "placement", "tunnel":
			d.clusterTop(e, doc) // decode_cluster.go
		case "nodes":
			nodesV = e.V
			doc.nodesLoc = at(e.K, "nodes")
		case "links":
			linksV = e.V
		case "wifi":
			d.wifiTop(e.V, doc)
		case "schedules":
			d.schedules(e.V, doc)
		}
	}
	if nodesV == nil {
		d.errorf(at(root, ""), "no nodes: a topology needs a nodes: mapping (e.g. nodes: {h1: {}, h2: {}})")
	} else {
		d.nodes(nodesV, doc)
	}
	d.links(linksV, doc)
	return doc
}

func (d *dec) addressing(n *yaml.Node, a *rawAddressing) {
	const path = "addressing"
	for _, e := range d.fields(n, path, addressingKeys) {
		p := joinPath(path, e.Key)
		l := at(e.V, p)
		switch e.Key {
		case "pool":
			if pfx, ok := d.pool(e.V, p, false); ok {
				a.pool, a.poolLoc = pfx, l
			}
		case "pool6":
			if pfx, ok := d.pool(e.V, p, true); ok {
				a.pool6, a.pool6Loc = pfx, l
			}
		case "prefix":
			if v, ok := d.integer(e.V, p, 1, 30); ok {
				a.prefix, a.prefixLoc = int(v), l
			}
		case "p2p_prefix":
			if v, ok := d.integer(e.V, p, 1, 31); ok {
				a.p2p, a.p2pLoc = int(v), l
			}
		case "auto":
			if b, ok := d.boolean(e.V, p); ok {
				a.auto = b
			}
		}
	}
	for _, c := range []struct {
		key  string
		bits int
		l    loc
	}{{"prefix", a.prefix, a.prefixLoc}, {"p2p_prefix", a.p2p, a.p2pLoc}} {
		if c.bits >= a.pool.Bits() {
			continue
		}
		l := c.l
		if l.line == 0 { // the default does not fit a small pool
			l = a.poolLoc
		}
		d.errorf(l, "subnets of /%d (%s) do not fit in the pool %s: set %s to at least %d", c.bits, c.key, a.pool, c.key, a.pool.Bits())
	}
}

// pool decodes an address pool: a network prefix of the right family.
func (d *dec) pool(n *yaml.Node, path string, v6 bool) (netip.Prefix, bool) {
	want, example := "an IPv4 prefix", "10.0.0.0/16"
	if v6 {
		want, example = "an IPv6 prefix", "fd00::/48"
	}
	s, ok := d.str(n, path, want+" such as "+example)
	if !ok {
		return netip.Prefix{}, false
	}
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil:
		d.errorf(at(n, path), "%q is not %s (e.g. %s)", clip(s), want, example)
	case p.Addr().Is4() == v6 || p.Addr().Is4In6():
		d.errorf(at(n, path), "%s is not %s (e.g. %s)", p, want, example)
	case p.Addr().IsMulticast() || p.Addr().IsLoopback() || p.Addr().IsLinkLocalUnicast() || p.Addr().IsUnspecified():
		d.errorf(at(n, path), "%s is not a unicast range (e.g. %s)", p, example)
	case p != p.Masked():
		d.errorf(at(n, path), "%s has host bits set: did you mean %s?", p, p.Masked())
	case !v6 && p.Bits() > 30:
		d.errorf(at(n, path), "pool %s is too small: use /30 or larger (e.g. %s)", p, example)
	case v6 && p.Bits() > 64:
		d.errorf(at(n, path), "pool6 %s is too small: subnets are /64, so use /64 or larger (e.g. %s)", p, example)
	default:
		return p, true
	}
	return netip.Prefix{}, false
}

func (d *dec) defaults(n *yaml.Node, doc *rawDoc) {
	const path = "defaults"
	for _, e := range d.fields(n, path, defaultsKeys) {
		p := joinPath(path, e.Key)
		switch e.Key {
		case "switch":
			if s, ok := d.oneOf(e.V, p, "switch type", switchTypes); ok {
				doc.defSwitch = s
			}
		case "link":
			doc.defLink, _, _ = d.linkBlock(e.V, p, false)
			doc.defLinkLoc = at(e.K, p)
		case "tcp":
			doc.defTCP = d.tcp(e.V, p)
			doc.defTCPLoc = at(e.K, p)
		}
	}
}

// checkLabName returns what is wrong with a lab name, or "".
func checkLabName(s string) string {
	if len(s) > 32 {
		return fmt.Sprintf("lab name %q is %d bytes: the limit is 32", clip(s), len(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		digitOrLower := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !digitOrLower && (i == 0 || c != '-' && c != '_') {
			return fmt.Sprintf("lab name %q is not valid: use lower-case letters, digits, '-' and '_', starting with a letter or digit (no dots: namespaces are <lab>.<node>)", clip(s))
		}
	}
	if s == "" {
		return "lab name is empty"
	}
	return ""
}

// labNameFrom derives a valid lab name from a file name or generator
// string: "topologies/My Lab.yaml" -> "my-lab", "tree,3,10" -> "tree3x10".
func labNameFrom(s string) string {
	base := s
	for i := len(base) - 1; i >= 0; i-- {
		if base[i] == '/' || base[i] == '\\' {
			base = base[i+1:]
			break
		}
	}
	for _, ext := range []string{".yaml", ".yml", ".YAML", ".YML"} {
		if len(base) > len(ext) && base[len(base)-len(ext):] == ext {
			base = base[:len(base)-len(ext)]
			break
		}
	}
	out := make([]byte, 0, len(base))
	for i := 0; i < len(base) && len(out) < 32; i++ {
		c := base[i]
		switch {
		case c >= 'A' && c <= 'Z':
			out = append(out, c+'a'-'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			out = append(out, c)
		case len(out) > 0 && out[len(out)-1] != '-' && out[len(out)-1] != '_':
			if c == '_' {
				out = append(out, '_')
			} else {
				out = append(out, '-')
			}
		}
	}
	for len(out) > 0 && (out[len(out)-1] == '-' || out[len(out)-1] == '_') {
		out = out[:len(out)-1]
	}
	if len(out) == 0 {
		return "lab"
	}
	return string(out)
}
