package emu

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/tc/engine"
	"github.com/emuctl/emuctl/topo"
)

// Links, whatever they are made of, go through one interface. A link kind
// is one way emuctl builds a link, with a file of its own:
//
//   - link_veth.go: a veth pair between two nodes, unshaped or shaped by
//     kernel qdiscs on each end's egress (netem, or TBF/HTB alone);
//   - link_engine.go: two veth pairs through the userspace link engine in
//     the link's own namespace, run by the lab's supervisor;
//   - link_ovs.go: a veth pair with an Open vSwitch switch at an end,
//     whose end lives in the root namespace as an OVS port;
//   - link_wifi.go: a station's wireless hop to its access point, made by
//     the Wi-Fi phase (hwsim radios or the engine's veth ports), shaped by
//     qdiscs on the station's and the AP's wireless egress.
//
// The deploy phases (links, shaping, wifi), `link set/show/up/down` and
// verify ask each link's kind (picked in kind.go: kindOf) and never look
// at backends themselves.
// Teardown needs no kind: everything a kind makes carries the lab's marker
// or lives in the lab's namespaces, and teardown finds it by discovery
// (teardown.go, ovs_teardown.go).
//
// Link indexes: the topology's links are 0..len(spec.Links)-1; the
// wireless hops follow, one per station in node order (hopIndex).
type linkKind interface {
	// create makes the link's interfaces (the links phase).
	create(d *deployer, li int) error
	// shape applies its parameters once every link exists (the shaping
	// phase; a wireless hop's in the wifi phase, after association).
	shape(d *deployer, li int) error
	// change applies new parameters to a running lab's link (link set);
	// the caller records them in the state.
	change(st *State, li int, a, b tc.Dir) error
	// show fills link show's view: interface states and the kind's
	// counters (engine) or installed qdiscs (kernel).
	show(st *State, li int, info *LinkInfo, stats map[int]engine.Stats)
	// verifiable says whether verify can measure the link end to end.
	verifiable() bool
	// name is the kind as link show prints it.
	name() string
}

// queueLimits are the bounds in force of a wired link's two directions.
func queueLimits(spec *topo.Spec, li int, a, b tc.Dir) [2]QueueLimit {
	var out [2]QueueLimit
	if li >= len(spec.Links) {
		return out // a wireless hop: the medium's queues
	}
	mtu := LinkMTU(spec, li)
	for k, d := range []tc.Dir{a, b} {
		if d.Trace != nil {
			out[k] = QueueLimit{Packets: d.QueuePackets, Bytes: int64(d.QueueBytes)}
			continue
		}
		p, by := d.QueueLimits(mtu)
		out[k] = QueueLimit{Packets: p, Bytes: by}
	}
	return out
}

// linkCount is the number of links of a Spec, wireless hops included.
func linkCount(spec *topo.Spec) int { return len(spec.Links) + len(stations(spec)) }

// stations are a Spec's station nodes, in node order: wireless hop k is
// stations(spec)[k]'s.
func stations(spec *topo.Spec) []*topo.Node {
	var out []*topo.Node
	for i := range spec.Nodes {
		if spec.Nodes[i].Station != nil && spec.Nodes[i].Station.Adhoc == "" { // an ad hoc member has no hop
			out = append(out, &spec.Nodes[i])
		}
	}
	return out
}

// hopIndex is the link index of a station's wireless hop (-1: none).
func hopIndex(spec *topo.Spec, station string) int {
	for k, n := range stations(spec) {
		if n.Name == station {
			return len(spec.Links) + k
		}
	}
	return -1
}

// hopStation is the station of wireless hop li (nil: li is not one).
func hopStation(spec *topo.Spec, li int) *topo.Node {
	st := stations(spec)
	if k := li - len(spec.Links); k >= 0 && k < len(st) {
		return st[k]
	}
	return nil
}

// linkEnds are link li's two interfaces: A and B as written, or a
// wireless hop's station and access point.
func linkEnds(spec *topo.Spec, li int) (a, b topo.Endpoint) {
	if li < len(spec.Links) {
		return spec.Links[li].A, spec.Links[li].B
	}
	n := hopStation(spec, li)
	ap := spec.Node(n.Station.AP)
	return topo.Endpoint{Node: n.Name, Iface: n.Station.Iface}, topo.Endpoint{Node: ap.Name, Iface: ap.AP.Iface}
}

func findLinkState(links []LinkState, li int) (LinkState, bool) {
	for _, ls := range links {
		if ls.Index == li {
			return ls, true
		}
	}
	return LinkState{}, false
}

// linkStateFor returns the recorded shaping of link i, if any.
func (d *deployer) linkStateFor(i int) (LinkState, bool) { return findLinkState(d.st.Links, i) }

// FindLink resolves a link reference: its index ("3"), its name, one of its ends
// ("h1:h1-eth0"), its two nodes ("h1-s1" or "h1,s1"), or a station's
// wireless hop (the station "sta1", its interface, or "sta1-ap1").
func FindLink(spec *topo.Spec, ref string) (int, error) {
	if i, err := strconv.Atoi(ref); err == nil {
		if i < 0 || i >= linkCount(spec) {
			return -1, fmt.Errorf("link %d does not exist (the lab has links 0..%d)", i, linkCount(spec)-1)
		}
		return i, nil
	}
	match := -1
	var hits []string
	for i := range linkCount(spec) {
		a, b := linkEnds(spec, i)
		ok := ref == a.String() || ref == b.String() || i < len(spec.Links) && spec.Links[i].Name != "" && ref == spec.Links[i].Name
		for _, sep := range []string{"-", ",", ":"} {
			ok = ok || ref == a.Node+sep+b.Node || ref == b.Node+sep+a.Node
		}
		if i >= len(spec.Links) {
			ok = ok || ref == a.Node // a station names its hop
		}
		if ok {
			match = i
			hits = append(hits, fmt.Sprintf("%d (%s <-> %s)", i, a, b))
		}
	}
	switch len(hits) {
	case 0:
		return -1, fmt.Errorf("no link %q (give an index from `emuctl link show`, an end such as h1:h1-eth0, two nodes such as h1-s1, or a station for its wireless hop)", ref)
	case 1:
		return match, nil
	}
	return -1, fmt.Errorf("link %q is ambiguous: %s; give its index", ref, strings.Join(hits, ", "))
}

// SetLink changes the parameters of link i of a running lab in the given
// direction(s) ("a->b", "b->a" or "" for both; a wireless hop's a->b is
// its uplink): the link's kind applies them (kernel qdiscs replaced, a
// userspace engine updated in place by the supervisor). Only the keys set
// in change are changed.
func SetLink(lab string, i int, dir string, change func(*tc.Dir)) (*LinkState, error) {
	unlock, err := lockLab(lab)
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, err := ReadState(lab)
	if err != nil {
		return nil, err
	}
	ls, err := changeLink(st, i, dir, change)
	if err != nil {
		return nil, err
	}
	if err := writeState(st); err != nil {
		return nil, err
	}
	return ls, nil
}

// changeDirs applies change to the directions dir names ("" or both,
// a->b (up), b->a (down)) and validates both.
func changeDirs(dir string, a, b *tc.Dir, change func(*tc.Dir)) error {
	switch dir {
	case "", "both":
		change(a)
		change(b)
	case "a->b", "up":
		change(a)
	case "b->a", "down":
		change(b)
	default:
		return fmt.Errorf("direction %q (valid: a->b, b->a, both)", dir)
	}
	return errors.Join(a.Validate(), b.Validate())
}

// changeLink is SetLink on a state read under the lab's lock; the caller
// writes the state back.
func changeLink(st *State, i int, dir string, change func(*tc.Dir)) (*LinkState, error) {
	if isController(st) {
		return clusterChangeLink(st, i, dir, change) // on the link's machines (cluster_linkset.go)
	}
	if i < 0 || i >= linkCount(st.Spec) {
		return nil, fmt.Errorf("link %d does not exist (the lab has links 0..%d)", i, linkCount(st.Spec)-1)
	}
	kind := kindOf(st.Spec, st.Links, i)
	a, b, err := kindParams(st, i)
	if err != nil {
		return nil, err
	}
	if err := changeDirs(dir, &a, &b, change); err != nil {
		return nil, err
	}
	if err := kind.change(st, i, a, b); err != nil {
		return nil, err
	}
	ls, _ := findLinkState(st.Links, i)
	if h := hopStation(st.Spec, i); h != nil {
		ls = LinkState{Index: i, Name: fmt.Sprintf("%s (wireless)", h.Name), Backend: "wireless", AtoB: a, BtoA: b}
	}
	return &ls, nil
}

// kindParams are link i's parameters in force (zero: unshaped).
func kindParams(st *State, i int) (a, b tc.Dir, err error) {
	if n := hopStation(st.Spec, i); n != nil {
		for _, h := range st.WiFiHops {
			if h.Station == n.Name {
				return h.Up, h.Down, nil
			}
		}
		return a, b, fmt.Errorf("lab %s has no wireless hop of station %q", st.Lab, n.Name)
	}
	ls, _ := findLinkState(st.Links, i)
	return ls.AtoB, ls.BtoA, nil
}

// SetLinkState brings both ends of link i down or up (a cable pulled or
// plugged back).
func SetLinkState(lab string, i int, up bool) error {
	st, err := ReadState(lab)
	if err != nil {
		return err
	}
	return setLinkState(st, i, up)
}

func setLinkState(st *State, i int, up bool) error {
	if i < 0 || i >= linkCount(st.Spec) {
		return fmt.Errorf("link %d does not exist", i)
	}
	if hopStation(st.Spec, i) != nil {
		return fmt.Errorf("link %d is a wireless hop: pull it by moving the station out of range (emuctl wifi move) or stopping its wpa_supplicant", i)
	}
	if isController(st) {
		return clusterSetLinkState(st, i, up) // on the link's machines (cluster_linkset.go)
	}
	a, b := linkEnds(st.Spec, i)
	for _, ep := range []topo.Endpoint{a, b} {
		if !st.Spec.Here(ep.Node) {
			continue // a cut link's other end: its own machine's
		}
		ns, h, name, err := openEnd(st, ep)
		if err != nil {
			return err
		}
		link, err := h.LinkByName(name)
		if err == nil {
			if up {
				err = h.LinkSetUp(link)
			} else {
				err = h.LinkSetDown(link)
			}
		}
		h.Close()
		ns.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", ep, err)
		}
	}
	return nil
}

// ShowLinks describes every link of a lab, wireless hops included:
// backend, parameters in force, interface states, engine counters or
// installed qdiscs.
func ShowLinks(lab string) ([]LinkInfo, error) {
	st, err := ReadState(lab)
	if err != nil {
		return nil, err
	}
	stats := engineStats(st)
	var out []LinkInfo
	for i := range linkCount(st.Spec) {
		a, b := linkEnds(st.Spec, i)
		kind := kindOf(st.Spec, st.Links, i)
		li := LinkInfo{Index: i, Kind: kind.name(), A: a.String(), B: b.String(), Backend: "none"}
		kind.show(st, i, &li, stats)
		li.QueueLimits = queueLimits(st.Spec, i, li.AtoB, li.BtoA)
		out = append(out, li)
	}
	return out, nil
}

// readEnds fills a LinkInfo's interface states and, with qdiscs, the
// trees installed on both ends' egress.
func readEnds(st *State, li *LinkInfo, a, b topo.Endpoint, qdiscs bool) {
	for k, ep := range []topo.Endpoint{a, b} {
		state := "missing"
		if ns, h, name, err := openEnd(st, ep); err == nil {
			if link, err := h.LinkByName(name); err == nil {
				state = link.Attrs().OperState.String()
				if qdiscs {
					if s, err := tc.ReadBack(ns, link); err == nil {
						li.Qdiscs = append(li.Qdiscs, ep.String()+": "+s)
					}
				}
			}
			h.Close()
			ns.Close()
		}
		if k == 0 {
			li.StateA = state
		} else {
			li.StateB = state
		}
	}
}

// showShaped fills a wired link's recorded backend and parameters.
func showShaped(st *State, li int, info *LinkInfo) bool {
	ls, ok := findLinkState(st.Links, li)
	if ok {
		info.Backend, info.AtoB, info.BtoA, info.Warning = ls.Backend, ls.AtoB, ls.BtoA, ls.Warning
		info.AtoB.Trace, info.BtoA.Trace = ls.AtoB.Trace.Summary(), ls.BtoA.Trace.Summary() // not every opportunity
	}
	return ok
}

// setShaped records new parameters of a wired link.
func setShaped(st *State, li int, backend string, a, b tc.Dir) {
	for k := range st.Links {
		if st.Links[k].Index == li {
			st.Links[k].AtoB, st.Links[k].BtoA = a, b
			return
		}
	}
	l := st.Spec.Links[li]
	st.Links = append(st.Links, LinkState{Index: li, Name: l.A.String() + " <-> " + l.B.String(), Backend: backend, AtoB: a, BtoA: b})
}
