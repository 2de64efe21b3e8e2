package lab

import (
	"context"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
)

// A running lab grows and shrinks through the rules of its topology:
// each change is an edit of the lab's topology loaded again (names,
// interface names, addresses from the lab's plan, routes) and built by
// the same code as Up, for what it adds alone; nothing already built
// changes. A failed add leaves the lab as it was. Changes by several
// programs at once run one after the other (the lab's lock).

// NodeKindOption chooses what AddNode adds.
type NodeKindOption struct {
	kind       topo.NodeKind
	switchType string
	ovsNames   string
	keys       string
	external   bool
	ap         string
	pos        *[3]float64
}

// AsRouter adds a router (a host with IP forwarding on).
func AsRouter() NodeKindOption { return NodeKindOption{kind: topo.KindRouter} }

// AsSwitch adds a switch of the given type ("" for the lab's default,
// "linux-bridge", or "ovs").
func AsSwitch(typ string) NodeKindOption {
	return NodeKindOption{kind: topo.KindSwitch, switchType: typ}
}

// AsOVSSwitch adds an Open vSwitch switch whose bridge and ports carry
// the topology's names on the host (names: topology, "topology") or
// unique ones ("" or "unique", the default).
func AsOVSSwitch(names string) NodeKindOption {
	return NodeKindOption{kind: topo.KindSwitch, switchType: topo.SwitchOVS, ovsNames: names}
}

// AsStation adds a Wi-Fi station that joins access point ap ("": the
// lab's one AP, or NodeKeys' wifi: {ap: ...}), on either Wi-Fi backend
// (a roaming or multi-link one is refused, saying why; an ad hoc or mesh
// member joins its network: NodeKeys("{wifi: {adhoc: NAME}}")); the
// change returns once it is associated. Its position, fixed
// rate or mobility: AtPosition, NodeKeys("{wifi: {rate: 54mbit}}").
func AsStation(ap string) NodeKindOption { return NodeKindOption{kind: "station", ap: ap} }

// AsAP adds a Wi-Fi access point: a bridge between its radio and the
// links AddLink gives it (NodeKeys("{wifi: {routed: true}}"): a router).
// Its network and channel come from NodeKeys, the file's keys
// ("{wifi: {ssid: two, mode: g, channel: 11, rate: 54mbit}}"), its place
// from AtPosition. Access points join and leave running labs on both
// Wi-Fi backends (on mac80211_hwsim the change returns once its hostapd
// has the BSS up; a multi-link one, or one a roaming station's network
// would gain, is refused, saying why); RemoveNode takes one away once no
// station uses it.
func AsAP() NodeKindOption { return NodeKindOption{kind: "ap"} }

// AtPosition places a Wi-Fi node (metres).
func AtPosition(x, y, z float64) NodeKindOption { return NodeKindOption{pos: &[3]float64{x, y, z}} }

// NodeKeys gives more of the node's keys, as the topology file writes
// them, in a YAML (or JSON) flow mapping: `{fail_mode: secure, datapath:
// netdev}` for an ovs switch, `{sysctls: {net.ipv4.tcp_ecn: 1}}`. They
// are checked as `up` checks the file's; what they set wins over the
// other options.
func NodeKeys(mapping string) NodeKindOption { return NodeKindOption{keys: mapping} }

// AllowExternal is up's --allow-external for a node added at run time:
// one of kind root (NodeKeys("{kind: root}")), the machine's own
// namespace, where the lab's links to it will have their ends.
func AllowExternal() NodeKindOption { return NodeKindOption{external: true} }

// AddNode adds a node to the running lab: a host unless an option says
// router, switch, station or access point. It has no link until AddLink gives it one (a
// station has its wireless hop to its access point at once).
func (l *Lab) AddNode(ctx context.Context, name string, kind ...NodeKindOption) error {
	req := topo.NodeRequest{Name: name, Kind: topo.KindHost}
	opts := l.opts()
	for _, k := range kind {
		opts.AllowExternal = opts.AllowExternal || k.external
		if k.kind != "" {
			req.Kind, req.SwitchType, req.OVSNames, req.AP = k.kind, k.switchType, k.ovsNames, k.ap
		}
		if k.pos != nil {
			req.Position = k.pos
		}
		if k.keys != "" {
			req.Entry = k.keys
		}
	}
	return callError("AddNode("+strconv.Quote(name)+")", l.changed(emu.AddNode(ctx, l.name, req, opts)))
}

// AddLink joins two nodes of the running lab and returns the new link's
// index. An end is "node" or "node:iface" (default: the node's next
// <node>-eth<N>); options are those of Topology.Link (Rate, Delay, Loss,
// Queue, AtoB/BtoA, MTU, IP, LinkField("link.trace", "up.trace")...), or
// AddLinkKeys' flat keys (a mahimahi trace: replayed on the link engine
// from when the link comes up, as at Up). Addresses not given come from
// the lab's plan; routes follow.
func (l *Lab) AddLink(ctx context.Context, a, b string, opts ...LinkOption) (int, error) {
	args := []string{strconv.Quote(a), strconv.Quote(b)}
	entry := &mapping{}
	for _, o := range opts {
		args = append(args, o.call)
		o.applyEntry(entry, "")
	}
	req := topo.LinkRequest{A: a, B: b}
	if len(entry.entries) > 0 {
		req.Entry = flow(entry)
	}
	st, err := emu.AddLink(ctx, l.name, req, l.opts())
	if err != nil {
		return -1, callError("AddLink("+strings.Join(args, ", ")+")", err)
	}
	l.spec = st.Spec
	return len(st.Spec.Links) - 1, nil
}

// RemoveLink removes a link, named as SetLink names it (index, end, or
// its two nodes); later links move down one index.
func (l *Lab) RemoveLink(ctx context.Context, link string) error {
	st, err := emu.ReadState(l.name) // another program may have changed it
	if err != nil {
		return err
	}
	i, err := emu.FindLink(st.Spec, link)
	if err != nil {
		return err
	}
	return l.changed(emu.RemoveLink(ctx, l.name, i, l.opts()))
}

// RemoveNode removes a node and every link that ends on it; its
// processes stop.
func (l *Lab) RemoveNode(ctx context.Context, name string) error {
	return l.changed(emu.RemoveNode(ctx, l.name, name, l.opts()))
}

// Topology is the lab as it stands now — what was added or removed at
// run time included — as a topology file `emuctl up` accepts.
func (l *Lab) Topology() ([]byte, error) { return emu.Topology(l.name) }

func (l *Lab) opts() emu.Options { return emu.Options{Log: l.log} }

// changed keeps the Lab's Spec in step with the lab after a change.
func (l *Lab) changed(st *emu.State, err error) error {
	if err != nil {
		return err
	}
	l.spec = st.Spec
	return nil
}

// callError names the Go call in a topology error.
func callError(call string, err error) error { return topo.Named(err, call) }
