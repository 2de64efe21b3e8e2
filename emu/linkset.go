package emu

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
)

// FindLink resolves a link reference: its index ("3"), one of its ends
// ("h1:h1-eth0"), or its two nodes ("h1-s1" or "h1,s1").
func FindLink(spec *topo.Spec, ref string) (int, error) {
	if i, err := strconv.Atoi(ref); err == nil {
		if i < 0 || i >= len(spec.Links) {
			return -1, fmt.Errorf("link %d does not exist (the lab has links 0..%d)", i, len(spec.Links)-1)
		}
		return i, nil
	}
	match := -1
	var hits []string
	for i, l := range spec.Links {
		ok := ref == l.A.String() || ref == l.B.String()
		for _, sep := range []string{"-", ","} {
			ok = ok || ref == l.A.Node+sep+l.B.Node || ref == l.B.Node+sep+l.A.Node
		}
		if ok {
			match = i
			hits = append(hits, fmt.Sprintf("%d (%s <-> %s)", i, l.A, l.B))
		}
	}
	switch len(hits) {
	case 0:
		return -1, fmt.Errorf("no link %q (give an index from `emuctl ls`, an end such as h1:h1-eth0, or two nodes such as h1-s1)", ref)
	case 1:
		return match, nil
	}
	return -1, fmt.Errorf("link %q is ambiguous: %s; give its index", ref, strings.Join(hits, ", "))
}

// SetLink changes the shaping of link i of a running lab in the given
// direction(s) ("a->b", "b->a" or "" for both): kernel links get their
// qdiscs replaced, userspace links are updated in place by the supervisor.
// Only the keys set in change are changed.
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
	k := -1
	for j := range st.Links {
		if st.Links[j].Index == i {
			k = j
		}
	}
	if k < 0 {
		caps := tc.Probe()
		if !caps.Netem {
			return nil, fmt.Errorf("link %d was created unshaped, and this kernel has no sch_netem to shape it in place (%s); give it link parameters in the topology (e.g. delay: 0ms with a rate, or any loss) so it gets a link engine at up", i, caps.Reasons["netem"])
		}
		l := st.Spec.Links[i]
		st.Links = append(st.Links, LinkState{Index: i, Name: l.A.String() + " <-> " + l.B.String(), Backend: BackendNetem})
		k = len(st.Links) - 1
	}
	ls := st.Links[k]
	a, b := ls.AtoB, ls.BtoA
	switch dir {
	case "", "both":
		change(&a)
		change(&b)
	case "a->b":
		change(&a)
	case "b->a":
		change(&b)
	default:
		return nil, fmt.Errorf("direction %q (valid: a->b, b->a, both)", dir)
	}
	if err := errors.Join(a.Validate(), b.Validate()); err != nil {
		return nil, err
	}
	switch ls.Backend {
	case BackendEngine:
		if _, err := supervisorCall(lab, ctlRequest{Op: "update", Link: i, AtoB: &a, BtoA: &b}); err != nil {
			return nil, err
		}
	case BackendNetem, BackendShaper:
		l := st.Spec.Links[i]
		for _, end := range []struct {
			ep topo.Endpoint
			d  tc.Dir
		}{{l.A, a}, {l.B, b}} {
			if err := applyKernelEnd(st, end.ep, ls.Backend, end.d); err != nil {
				return nil, err
			}
		}
	}
	ls.AtoB, ls.BtoA = a, b
	st.Links[k] = ls
	if err := writeState(st); err != nil {
		return nil, err
	}
	return &ls, nil
}

func applyKernelEnd(st *State, ep topo.Endpoint, backend string, d tc.Dir) error {
	ns, h, name, err := openEnd(st, ep) // an ovs switch's port is in the root namespace
	if err != nil {
		return err
	}
	defer ns.Close()
	defer h.Close()
	link, err := h.LinkByName(name)
	if err != nil {
		return fmt.Errorf("%s: %w", ep, err)
	}
	if err := tc.SetGSOLimits(h, link); err != nil {
		return err
	}
	plan, err := kernelPlan(backend, d, link.Attrs().MTU)
	if err != nil {
		return fmt.Errorf("%s: %w", ep, err)
	}
	return tc.ApplyKernel(ns, link, plan)
}

// SetLinkState brings both node-side ends of link i down or up (a cable
// pulled or plugged back).
func SetLinkState(lab string, i int, up bool) error {
	st, err := ReadState(lab)
	if err != nil {
		return err
	}
	l := st.Spec.Links[i]
	for _, ep := range []topo.Endpoint{l.A, l.B} {
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

// LinkInfo is what `emuctl link show` prints for one link.
type LinkInfo struct {
	Index   int       `json:"index"`
	A       string    `json:"a"`
	B       string    `json:"b"`
	Backend string    `json:"backend"`
	AtoB    tc.Dir    `json:"a_to_b"`
	BtoA    tc.Dir    `json:"b_to_a"`
	StateA  string    `json:"state_a"`
	StateB  string    `json:"state_b"`
	Stats   *tc.Stats `json:"engine_stats,omitempty"`
	Qdiscs  []string  `json:"qdiscs,omitempty"` // installed tree per end (kernel backends)
	Warning string    `json:"warning,omitempty"`
}

// ShowLinks describes every link of a lab: backend, parameters in force,
// interface states, engine counters or installed qdiscs.
func ShowLinks(lab string) ([]LinkInfo, error) {
	st, err := ReadState(lab)
	if err != nil {
		return nil, err
	}
	shaped := map[int]LinkState{}
	for _, ls := range st.Links {
		shaped[ls.Index] = ls
	}
	var stats map[int]tc.Stats
	for _, p := range st.Procs {
		if p.Command == "supervisor" {
			if resp, err := supervisorCall(lab, ctlRequest{Op: "stats"}); err == nil {
				stats = resp.Stats
			}
		}
	}
	var out []LinkInfo
	for i, l := range st.Spec.Links {
		li := LinkInfo{Index: i, A: l.A.String(), B: l.B.String(), Backend: "none"}
		if ls, ok := shaped[i]; ok {
			li.Backend, li.AtoB, li.BtoA, li.Warning = ls.Backend, ls.AtoB, ls.BtoA, ls.Warning
			if s, ok := stats[i]; ok {
				s := s
				li.Stats = &s
			}
		}
		readEnds(st, &li, l.A, l.B, li.Backend == BackendNetem || li.Backend == BackendShaper)
		out = append(out, li)
	}
	return append(out, wirelessHops(st)...), nil
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

// wirelessHops describes each station's wireless hop for ShowLinks (index
// -1; `link set` names it by the station): its shaping in force, the
// interface states and the qdiscs on the station's and the AP's wireless
// egress (wifi.go).
func wirelessHops(st *State) []LinkInfo {
	hops := map[string]WiFiHop{}
	for _, h := range st.WiFiHops {
		hops[h.Station] = h
	}
	var out []LinkInfo
	for i := range st.Spec.Nodes {
		n := &st.Spec.Nodes[i]
		if n.Station == nil {
			continue
		}
		ap := st.Spec.Node(n.Station.AP)
		li := LinkInfo{Index: -1, A: n.Name + ":" + n.Station.Iface, B: ap.Name + ":" + ap.AP.Iface, Backend: "none (wireless)"}
		h, shaped := hops[n.Name]
		shaped = shaped && !(h.Up.IsZero() && h.Down.IsZero())
		if shaped {
			li.Backend, li.AtoB, li.BtoA = BackendNetem+" (wireless)", h.Up, h.Down
		}
		readEnds(st, &li, topo.Endpoint{Node: n.Name, Iface: n.Station.Iface}, topo.Endpoint{Node: ap.Name, Iface: ap.AP.Iface}, shaped)
		out = append(out, li)
	}
	return out
}
