package topo

import (
	"net/netip"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	tcpKeys = []string{"congestion_control", "sack", "timestamps", "window_scaling", "ecn",
		"no_metrics_save", "rmem", "wmem", "recovery", "early_retrans", "backlog_ack_defer", "sysctls", "routes"}
	tcpRouteKeys = []string{"to", "quickack", "initcwnd", "initrwnd", "congctl"}
)

// profileSysctls maps the sysctls a TCP profile sets to its keys.
var profileSysctls = map[string]string{
	"net.ipv4.tcp_congestion_control": "congestion_control", "net.ipv4.tcp_sack": "sack",
	"net.ipv4.tcp_timestamps": "timestamps", "net.ipv4.tcp_window_scaling": "window_scaling",
	"net.ipv4.tcp_ecn": "ecn", "net.ipv4.tcp_no_metrics_save": "no_metrics_save",
	"net.ipv4.tcp_rmem": "rmem", "net.ipv4.tcp_wmem": "wmem",
	"net.ipv4.tcp_recovery": "recovery", "net.ipv4.tcp_early_retrans": "early_retrans",
	"net.ipv4.tcp_backlog_ack_defer": "backlog_ack_defer",
}

// MaxInitWindow bounds tcp.routes initcwnd and initrwnd (segments).
const MaxInitWindow = 1024

// tcp decodes a tcp: block. Every field is checked; unknown keys are errors.
func (d *dec) tcp(n *yaml.Node, path string) *TCPProfile {
	t := &TCPProfile{}
	for _, e := range d.fields(n, path, tcpKeys) {
		p := joinPath(path, e.Key)
		switch e.Key {
		case "congestion_control":
			if s, ok := d.str(e.V, p, "a congestion control name such as cubic or bbr"); ok {
				if !validAlgName(s) {
					d.errorf(at(e.V, p), "congestion control %q is not valid: use a kernel name such as cubic, reno or bbr (lower-case letters, digits, '_')", clip(s))
				} else {
					t.CongestionControl = s
					t.CongestionControlAt = d.where(at(e.V, p))
				}
			}
		case "sack":
			t.SACK = d.optBool(e.V, p)
		case "timestamps":
			t.Timestamps = d.optBool(e.V, p)
		case "window_scaling":
			t.WindowScaling = d.optBool(e.V, p)
		case "no_metrics_save":
			t.NoMetricsSave = d.optBool(e.V, p)
		case "ecn":
			t.ECN = d.ecn(e.V, p)
		case "recovery":
			t.Recovery = d.optInt(e.V, p, 0, 7)
		case "early_retrans":
			t.EarlyRetrans = d.optInt(e.V, p, 0, 4)
		case "backlog_ack_defer":
			t.BacklogACKDefer = d.optBool(e.V, p)
		case "rmem":
			t.Rmem = d.memTriple(e.V, p)
		case "wmem":
			t.Wmem = d.memTriple(e.V, p)
		case "sysctls":
			t.Sysctls = d.sysctls(e.V, p)
			for _, kv := range t.Sysctls {
				if own, ok := profileSysctls[kv.Key]; ok {
					d.errorf(at(e.V, p), "%s is set by tcp.%s: use that key instead of sysctls", kv.Key, own)
				}
			}
		case "routes":
			for i, item := range d.list(e.V, p, false) {
				if r, ok := d.tcpRoute(item, idx(p, i)); ok {
					r.Optional = strings.HasPrefix(path, "defaults.")
					t.Routes = append(t.Routes, r)
				}
			}
		}
	}
	return t
}

// where renders a location as "file:line:col: path" (or "file: path" for
// generated input) for messages given after decoding, at deploy time.
func (d *dec) where(l loc) string {
	if l.line == 0 {
		return posString(d.file, l)
	}
	return posString(d.file, l) + ": " + l.path
}

// tcpRoute decodes one tcp.routes entry {to, quickack, initcwnd, initrwnd,
// congctl}. Whether the node has such a route is checked once routes are
// known (checkTCPRoutes).
func (d *dec) tcpRoute(n *yaml.Node, path string) (TCPRoute, bool) {
	r := TCPRoute{at: at(n, path)}
	r.At = d.where(r.at)
	before := len(d.errs)
	set := false
	for _, f := range d.fields(n, path, tcpRouteKeys) {
		p := joinPath(path, f.Key)
		switch f.Key {
		case "to":
			r.toAt = at(f.V, p)
			s, ok := d.str(f.V, p, "all, default or a prefix such as 10.0.1.0/24")
			if !ok {
				continue
			}
			if s == "all" || s == "default" {
				r.To = s
				continue
			}
			pfx, err := netip.ParsePrefix(s)
			switch {
			case err != nil:
				d.errorf(at(f.V, p), "%q is not all, default or a prefix such as 10.0.1.0/24", clip(s))
			case pfx != pfx.Masked():
				d.errorf(at(f.V, p), "%s has host bits set: did you mean %s?", pfx, pfx.Masked())
			default:
				r.To = pfx.String()
			}
		case "quickack":
			if b, ok := d.boolean(f.V, p); ok {
				r.Quickack, set = b, set || b
			}
		case "initcwnd", "initrwnd":
			if v, ok := d.integer(f.V, p, 1, MaxInitWindow); ok {
				if f.Key == "initcwnd" {
					r.InitCwnd = int(v)
				} else {
					r.InitRwnd = int(v)
				}
				set = true
			}
		case "congctl":
			if s, ok := d.str(f.V, p, "a congestion control name such as cubic or bbr"); ok {
				if !validAlgName(s) {
					d.errorf(at(f.V, p), "congestion control %q is not valid: use a kernel name such as cubic, reno or bbr (lower-case letters, digits, '_')", clip(s))
				} else {
					r.Congctl, set = s, true
				}
			}
		}
	}
	if len(d.errs) > before {
		return r, false
	}
	if r.To == "" {
		d.errorf(r.at, "a tcp route needs to: (all, default or a prefix such as 10.0.1.0/24)")
		return r, false
	}
	if !set {
		d.errorf(r.at, "sets nothing: give quickack: true, initcwnd, initrwnd or congctl")
		return r, false
	}
	return r, true
}

// checkTCPRoutes verifies that each tcp.routes entry of the node (other
// than those from defaults) selects a route it has: an explicit or computed
// route, or a connected subnet.
func checkTCPRoutes(d *diag, nd *Node) {
	if nd.TCP == nil {
		return
	}
	have := map[string]bool{}
	var list []string
	add := func(p netip.Prefix) {
		s := p.String()
		if p.Bits() == 0 {
			s = "default"
		}
		if !have[s] {
			have[s] = true
			list = append(list, s)
		}
	}
	for _, r := range nd.Routes {
		add(r.Dst)
	}
	for _, ifc := range nd.Interfaces {
		for _, a := range ifc.Addrs {
			add(a.Masked())
		}
	}
	sort.Strings(list)
	// After other errors the computed routes are missing (resolution does
	// not route a topology with errors), so only connected subnets can be
	// judged; the rest is checked once the file is otherwise valid. Whether
	// errors came before this per-node pass is noted once, on the first
	// node, under a key no message can have.
	const key = "\x00tcp.routes: errors before the per-node checks"
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	partial, noted := d.seen[key]
	if !noted {
		partial = d.failed()
		d.seen[key] = partial
	}
	for _, r := range nd.TCP.Routes {
		if r.Optional || r.To == "all" || have[r.To] || partial {
			continue
		}
		what := "route to " + r.To
		if r.To == "default" {
			what = "default route"
		}
		d.errorf(r.toAt, "%s has no %s %s", nd.Name, what, choicesOrNone("its routes and connected subnets", r.To, list))
	}
}

func validAlgName(s string) bool {
	if len(s) > 15 { // TCP_CA_NAME_MAX is 16 with the NUL
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

func (d *dec) optBool(n *yaml.Node, path string) *bool {
	if b, ok := d.boolean(n, path); ok {
		return &b
	}
	return nil
}

func (d *dec) optInt(n *yaml.Node, path string, lo, hi int64) *int {
	if v, ok := d.integer(n, path, lo, hi); ok {
		i := int(v)
		return &i
	}
	return nil
}

// ecn decodes tcp.ecn: the kernel's tcp_ecn mode (0 off, 1 request ECN
// on outgoing connections and accept it on incoming ones, 2 accept it
// only) or a boolean, which is what people write for "ECN on": true is 1
// and false is 0, as in sysctls:.
func (d *dec) ecn(n *yaml.Node, path string) *int {
	const valid = "0, 1, 2, true or false"
	v := deref(n)
	if v != nil && v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
		if b, ok := d.boolean(n, path); ok {
			i := 0
			if b {
				i = 1
			}
			return &i
		}
		return nil
	}
	var x int64
	if v == nil || v.Kind != yaml.ScalarNode || v.Tag != "!!int" || v.Decode(&x) != nil {
		d.errorf(at(n, path), "must be %s (1 or true: request ECN and accept it; 2: accept it only; 0 or false: off), got %s", valid, describe(n))
		return nil
	}
	if x < 0 || x > 2 {
		d.errorf(at(n, path), "%d is out of range (valid: %s)", x, valid)
		return nil
	}
	i := int(x)
	return &i
}

// memTriple decodes [min, default, max] socket buffer sizes in bytes.
func (d *dec) memTriple(n *yaml.Node, path string) []int {
	v := deref(n)
	if v == nil || v.Kind != yaml.SequenceNode || len(v.Content) != 3 {
		d.errorf(at(n, path), "must be a list of three byte counts [min, default, max] such as [4096, 131072, 6291456], got %s", describe(n))
		return nil
	}
	out := make([]int, 3)
	for i, item := range v.Content {
		x, ok := d.integer(item, idx(path, i), 1, 1<<31-1)
		if !ok {
			return nil
		}
		out[i] = int(x)
	}
	if out[0] > out[1] || out[1] > out[2] {
		d.errorf(at(n, path), "[%d, %d, %d] must satisfy min <= default <= max", out[0], out[1], out[2])
		return nil
	}
	return out
}

// mergeTCP returns def overlaid with t's set fields (either may be nil).
func mergeTCP(def, t *TCPProfile) *TCPProfile {
	if def == nil && t == nil {
		return nil
	}
	out := &TCPProfile{}
	for _, src := range []*TCPProfile{def, t} {
		if src == nil {
			continue
		}
		if src.CongestionControl != "" {
			out.CongestionControl = src.CongestionControl
		}
		out.SACK = pick(out.SACK, src.SACK)
		out.Timestamps = pick(out.Timestamps, src.Timestamps)
		out.WindowScaling = pick(out.WindowScaling, src.WindowScaling)
		out.NoMetricsSave = pick(out.NoMetricsSave, src.NoMetricsSave)
		out.ECN = pick(out.ECN, src.ECN)
		out.Recovery = pick(out.Recovery, src.Recovery)
		out.EarlyRetrans = pick(out.EarlyRetrans, src.EarlyRetrans)
		out.BacklogACKDefer = pick(out.BacklogACKDefer, src.BacklogACKDefer)
		if src.Rmem != nil {
			out.Rmem = append([]int(nil), src.Rmem...)
		}
		if src.Wmem != nil {
			out.Wmem = append([]int(nil), src.Wmem...)
		}
		if src.CongestionControlAt != "" {
			out.CongestionControlAt = src.CongestionControlAt
		}
		out.Sysctls = mergeKV(out.Sysctls, src.Sysctls)
		out.Routes = append(out.Routes, src.Routes...)
	}
	return out
}

// mergeKV returns base overlaid with over, by key, sorted by key.
func mergeKV(base, over []KV) []KV {
	if len(over) == 0 {
		return base
	}
	m := map[string]string{}
	for _, kv := range base {
		m[kv.Key] = kv.Value
	}
	for _, kv := range over {
		m[kv.Key] = kv.Value
	}
	out := make([]KV, 0, len(m))
	for k, v := range m {
		out = append(out, KV{Key: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// pick returns a copy of over when set, else cur.
func pick[T any](cur, over *T) *T {
	if over == nil {
		return cur
	}
	v := *over
	return &v
}
