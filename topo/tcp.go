package topo

import (
	"go.yaml.in/yaml/v3"
)

var tcpKeys = []string{"congestion_control", "sack", "timestamps", "window_scaling", "ecn",
	"no_metrics_save", "rmem", "wmem", "recovery", "early_retrans"}

// tcp decodes a tcp: block. Every field is checked; unknown keys are errors.
func (d *dec) tcp(n *yaml.Node, path string) *TCPProfile {
	t := &TCPProfile{}
	for _, e := range d.fields(n, path, tcpKeys) {
		p := joinPath(path, e.key)
		switch e.key {
		case "congestion_control":
			if s, ok := d.str(e.v, p, "a congestion control name such as cubic or bbr"); ok {
				if !validAlgName(s) {
					d.errorf(at(e.v, p), "congestion control %q is not valid: use a kernel name such as cubic, reno or bbr (lower-case letters, digits, '_')", clip(s))
				} else {
					t.CongestionControl = s
				}
			}
		case "sack":
			t.SACK = d.optBool(e.v, p)
		case "timestamps":
			t.Timestamps = d.optBool(e.v, p)
		case "window_scaling":
			t.WindowScaling = d.optBool(e.v, p)
		case "no_metrics_save":
			t.NoMetricsSave = d.optBool(e.v, p)
		case "ecn":
			t.ECN = d.optInt(e.v, p, 0, 2)
		case "recovery":
			t.Recovery = d.optInt(e.v, p, 0, 7)
		case "early_retrans":
			t.EarlyRetrans = d.optInt(e.v, p, 0, 4)
		case "rmem":
			t.Rmem = d.memTriple(e.v, p)
		case "wmem":
			t.Wmem = d.memTriple(e.v, p)
		}
	}
	return t
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
		if src.Rmem != nil {
			out.Rmem = append([]int(nil), src.Rmem...)
		}
		if src.Wmem != nil {
			out.Wmem = append([]int(nil), src.Wmem...)
		}
	}
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
