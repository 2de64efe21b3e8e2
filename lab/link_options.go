package lab

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/units"
)

// LinkOption is one setting of a link, with typed values (package units,
// time.Duration). The same options describe a link to Topology.Link and
// DefaultLink and change a running one with Lab.SetLink; the few that
// cannot change at run time (MTU, IP, Backend, QueueBDP) are refused by
// SetLink with a message saying so. Values are checked when the topology
// is resolved (Spec) or the link is changed, never when the option is made.
type LinkOption struct {
	call string
	// key/val go under the link's link: block; onEntry puts them on the
	// link itself (mtu, ip) instead.
	key     string
	val     any
	onEntry func(l *mapping, call string)
	// dir and sub: AtoB/BtoA, holding options for one direction.
	dir string
	sub []LinkOption
	// set applies the option to a running link's direction; nil when it
	// cannot change at run time.
	set func(*tc.Dir)
}

func param(call, key string, val any, set func(*tc.Dir)) LinkOption {
	return LinkOption{call: call, key: key, val: value(val), set: set}
}

// Rate limits the link to r on the wire (Ethernet header included): TCP's
// best goodput through it is r × 1448/1514.
func Rate(r units.BitRate) LinkOption {
	return param("Rate("+r.String()+")", "rate", r, func(d *tc.Dir) { d.Rate = r })
}

// Delay adds a one-way delay: a link with Delay(5ms) adds 10 ms to a
// round trip across it.
func Delay(d time.Duration) LinkOption {
	return param("Delay("+units.FormatDuration(d)+")", "delay", d, func(x *tc.Dir) { x.Delay = d })
}

// Jitter varies the delay by j (uniformly ± j unless JitterDist says
// otherwise); it needs a Delay.
func Jitter(j time.Duration) LinkOption {
	return param("Jitter("+units.FormatDuration(j)+")", "jitter", j, func(x *tc.Dir) { x.Jitter = j })
}

// JitterDist sets the jitter's distribution: "uniform", "normal" or "pareto".
func JitterDist(dist string) LinkOption {
	return param("JitterDist("+strconv.Quote(dist)+")", "jitter_dist", dist, func(x *tc.Dir) { x.JitterDist = dist })
}

// Reorder lets jitter reorder packets (by default it keeps their order).
func Reorder() LinkOption {
	return param("Reorder()", "reorder", true, func(x *tc.Dir) { x.Reorder = true })
}

// Loss drops each frame with probability p (Bernoulli).
func Loss(p units.Percent) LinkOption {
	return param("Loss("+p.String()+")", "loss", p, func(x *tc.Dir) { x.Loss, x.GE = p, nil })
}

// GilbertElliott drops frames in bursts (netem's loss gemodel).
func GilbertElliott(g units.GilbertElliott) LinkOption {
	return param("GilbertElliott("+g.String()+")", "ge", g.String(), func(x *tc.Dir) { x.GE, x.Loss = &g, 0 })
}

// Duplicate sends each frame twice with probability p.
func Duplicate(p units.Percent) LinkOption {
	return param("Duplicate("+p.String()+")", "duplicate", p, func(x *tc.Dir) { x.Duplicate = p })
}

// Corrupt flips a bit of each frame with probability p.
func Corrupt(p units.Percent) LinkOption {
	return param("Corrupt("+p.String()+")", "corrupt", p, func(x *tc.Dir) { x.Corrupt = p })
}

// Queue bounds the bottleneck queue of each direction to n packets
// (full-size frames). Without a queue a rated direction gets
// max(100 packets, 1 BDP).
func Queue(n int) LinkOption {
	return param(fmt.Sprintf("Queue(%d)", n), "queue", n, func(x *tc.Dir) { x.QueuePackets, x.QueueBytes = n, 0 })
}

// QueueBytes bounds the bottleneck queue to b bytes.
func QueueBytes(b units.Bytes) LinkOption {
	return param(fmt.Sprintf("QueueBytes(%db)", int64(b)), "queue", b, func(x *tc.Dir) { x.QueueBytes, x.QueuePackets = b, 0 })
}

// QueueBDP bounds the bottleneck queue to m times the bandwidth-delay
// product (rate × the link's round-trip delay); it needs Rate and Delay.
// Only when the lab is built: a running link takes Queue or QueueBytes.
func QueueBDP(m float64) LinkOption {
	return param(fmt.Sprintf("QueueBDP(%g)", m), "queue", strconv.FormatFloat(m, 'g', -1, 64)+"bdp", nil)
}

// Backend pins what implements the link: "auto" (default), "kernel" or
// "userspace". Only when the lab is built.
func Backend(b string) LinkOption {
	return param("Backend("+strconv.Quote(b)+")", "backend", b, nil)
}

// AtoB applies opts to the direction from the link's first end to its
// second only.
func AtoB(opts ...LinkOption) LinkOption {
	return LinkOption{call: "AtoB(" + optCalls(opts) + ")", dir: "a->b", sub: opts}
}

// BtoA applies opts to the direction from the link's second end to its
// first only.
func BtoA(opts ...LinkOption) LinkOption {
	return LinkOption{call: "BtoA(" + optCalls(opts) + ")", dir: "b->a", sub: opts}
}

// MTU sets the MTU of both ends (default 1500). Only when the lab is built.
func MTU(n int) LinkOption {
	return LinkOption{call: fmt.Sprintf("MTU(%d)", n), onEntry: func(l *mapping, call string) {
		l.set([]string{"mtu"}, value(n), call)
	}}
}

// IP gives node's end of the link these addresses ("10.0.0.1/24",
// "fd00::1/64"); the other interfaces are addressed automatically. Only
// when the lab is built.
func IP(node string, addrs ...string) LinkOption {
	q := make([]string, len(addrs))
	for i, a := range addrs {
		q[i] = strconv.Quote(a)
	}
	call := "IP(" + strings.Join(append([]string{strconv.Quote(node)}, q...), ", ") + ")"
	return LinkOption{call: call, onEntry: func(l *mapping, call string) {
		var v any = value(addrs)
		if len(addrs) == 1 {
			v = addrs[0]
		}
		l.child("ip", call).set([]string{node}, v, call)
	}}
}

// LinkString sets the link's parameters from one --link string
// ("rate=10mbit,delay=5ms,loss=1%,queue=100"), the syntax of emuctl's
// --link flags and of a topology's link: string; not combined with other
// shaping options of the same link.
func LinkString(s string) LinkOption {
	return LinkOption{call: "LinkString(" + strconv.Quote(s) + ")", onEntry: func(l *mapping, call string) {
		l.set([]string{"link"}, s, call)
	}}
}

// Name names the link (link set, schedules and link del take the name).
func Name(name string) LinkOption {
	return LinkOption{call: "Name(" + strconv.Quote(name) + ")", onEntry: func(l *mapping, call string) {
		l.set([]string{"name"}, name, call)
	}}
}

// LinkField sets any key of the link's entry by its dotted path, in the
// file's syntax: LinkField("link", map[string]any{"rate": "10mbit",
// "b->a": map[string]any{"delay": "20ms"}}), LinkField("link.queue",
// "codel ecn"). Checked like the file.
func LinkField(path string, v any) LinkOption {
	return LinkOption{call: fmt.Sprintf("LinkField(%q, %s)", path, flow(value(v))), onEntry: func(l *mapping, call string) {
		l.set(strings.Split(path, "."), value(v), call)
	}}
}

// applyEntry puts o on a link entry of the topology.
func (o LinkOption) applyEntry(l *mapping, call string) {
	if o.onEntry != nil {
		o.onEntry(l, call)
		return
	}
	o.applyParams(l.child("link", call), call)
}

// applyParams puts o in a link: block (or a direction's block in it).
func (o LinkOption) applyParams(m *mapping, call string) {
	switch {
	case o.onEntry != nil:
		// MTU or IP where only shaping goes (DefaultLink, AtoB, a wireless
		// hop): written under its file key so topo names the mistake
		tmp := &mapping{}
		o.onEntry(tmp, call)
		m.entries = append(m.entries, tmp.entries...)
	case o.dir != "":
		sub := m.child(o.dir, call)
		for _, s := range o.sub {
			s.applyParams(sub, call)
		}
	default:
		m.set([]string{o.key}, o.val, call)
	}
}

// linkParams renders options as a link: block.
func linkParams(opts []LinkOption, call string) *mapping {
	m := &mapping{}
	for _, o := range opts {
		o.applyParams(m, call)
	}
	return m
}

func optCalls[O interface{ callText() string }](opts []O) string {
	parts := make([]string, len(opts))
	for i, o := range opts {
		parts[i] = o.callText()
	}
	return strings.Join(parts, ", ")
}

func (o LinkOption) callText() string { return o.call }
func (o NodeOption) callText() string { return o.call }
