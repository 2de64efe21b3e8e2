package emu

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/emuctl/emuctl/tc"
)

// `link set` on a lab over several machines: the controller works out the
// link's new parameters (from those in force: its own record, else the
// Spec's) and hands them to the worker of each machine with an end of the
// link (__emuctl_worker linkset); a worker changes what it sends — both
// directions of a link inside its machine, one direction of a cut link —
// through the link's kind, as a lone lab's link set does. A cut
// direction's delay is given less the underlay's one-way delay measured at
// up (cluster_underlay.go), and refused below it.

// linkSetRequest is what a worker gets on stdin: the link's parameters in
// both directions, as the link is to behave (a cut direction's delay
// already less the underlay's).
type linkSetRequest struct {
	AtoB tc.Dir `json:"a_to_b"`
	BtoA tc.Dir `json:"b_to_a"`
}

// clusterChangeLink is changeLink on a controller's state.
func clusterChangeLink(st *State, i int, dir string, change func(*tc.Dir)) (*LinkState, error) {
	spec := st.Spec
	if i < 0 || i >= len(spec.Links) {
		return nil, fmt.Errorf("link %d does not exist (the lab has links 0..%d)", i, len(spec.Links)-1)
	}
	l := spec.Links[i]
	ls, ok := findLinkState(st.Links, i)
	if !ok {
		planned, _ := planLinks(spec, tc.Caps{}) // the Spec's parameters, as up planned them
		ls, ok = findLinkState(planned, i)
		ls.Backend = "cluster"
	}
	if !ok {
		ls = LinkState{Index: i, Name: l.A.String() + " <-> " + l.B.String(), Backend: "cluster"}
	}
	a, b := ls.AtoB, ls.BtoA
	if err := changeDirs(dir, &a, &b, change); err != nil {
		return nil, err
	}
	c := spec.Cluster
	req := linkSetRequest{AtoB: a, BtoA: b}
	var machines []string
	if cut := c.CutOf(i); cut != nil {
		for _, d := range []struct {
			dir      *tc.Dir
			name     string
			from, to string
		}{{&req.AtoB, "a->b", cut.A, cut.B}, {&req.BtoA, "b->a", cut.B, cut.A}} {
			if d.dir.Delay == 0 {
				continue
			}
			if u, ok := underlayPath(st.Underlay, d.from, d.to); ok { // as at up
				if least := u.RTT/2 + 3*u.Sigma/2; d.dir.Delay < least {
					return nil, fmt.Errorf("link %d %s: delay %v is below the underlay's own one-way delay from machine %s to %s (%v + 3σ = %v)", i, d.name, d.dir.Delay, d.from, d.to, u.RTT/2, least)
				}
				d.dir.Delay -= u.OneWay()
			}
		}
		machines = []string{cut.A, cut.B}
	} else {
		machines = []string{c.Nodes[l.A.Node]}
	}
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var errs []string
	for _, name := range machines {
		if _, err := runWorker(context.Background(), st.Lab, *c.Machine(name), in, "linkset", st.Lab, fmt.Sprint(i)); err != nil {
			errs = append(errs, fmt.Sprintf("machine %s: %v", name, err))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("link %d: %s", i, strings.Join(errs, "; "))
	}
	setShaped(st, i, "cluster", a, b)
	ls, _ = findLinkState(st.Links, i)
	return &ls, nil
}

// workerLinkSet changes link li on this machine to the parameters on
// stdin: what this machine sends of them (a cut link's other direction is
// the other machine's).
func workerLinkSet(lab, link string) error {
	var li int
	if _, err := fmt.Sscan(link, &li); err != nil {
		return fmt.Errorf("link %q: %w", link, err)
	}
	var req linkSetRequest
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		return fmt.Errorf("worker: reading the link's parameters: %w", err)
	}
	unlock, err := lockLab(lab)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := ReadState(lab)
	if err != nil {
		return err
	}
	if li < 0 || li >= len(st.Spec.Links) {
		return fmt.Errorf("link %d does not exist", li)
	}
	l := st.Spec.Links[li]
	a, b := req.AtoB, req.BtoA
	switch here := [2]bool{st.Spec.Here(l.A.Node), st.Spec.Here(l.B.Node)}; here {
	case [2]bool{true, false}:
		b = tc.Dir{}
	case [2]bool{false, true}:
		a = tc.Dir{}
	case [2]bool{false, false}:
		return fmt.Errorf("link %d has no end on machine %s", li, st.Spec.Cluster.Slice)
	}
	if err := kindOf(st.Spec, st.Links, li).change(st, li, a, b); err != nil {
		return err
	}
	return writeState(st)
}

// change of a cut link's kernel end: this machine's end gets its
// direction's plan (netem in place on a link made unshaped, where the
// kernel has it).
func (k vxlanLink) change(st *State, li int, a, b tc.Dir) error {
	ls, shaped := findLinkState(st.Links, li)
	backend := ls.Backend
	if !shaped {
		caps := tc.Probe()
		if !caps.Netem {
			return fmt.Errorf("link %d was created unshaped, and this machine's kernel has no sch_netem to shape it in place (%s); give it link parameters in the topology so it gets a link engine at up", li, caps.Reasons["netem"])
		}
		backend = BackendNetem
	}
	ep, isA := localEnd(st.Spec, li)
	d := b
	if isA {
		d = a
	}
	if err := applyKernelEnd(st, ep, backend, d); err != nil {
		return err
	}
	setShaped(st, li, backend, a, b)
	return nil
}

// clusterSetLinkState is link up/down on a controller's state: each
// machine with an end of the link sets its end (a cut link's VXLAN
// device, or the node's veth to its engine).
func clusterSetLinkState(st *State, i int, up bool) error {
	c := st.Spec.Cluster
	l := st.Spec.Links[i]
	machines := []string{c.Nodes[l.A.Node]}
	if m := c.Nodes[l.B.Node]; m != machines[0] {
		machines = append(machines, m)
	}
	state := "down"
	if up {
		state = "up"
	}
	var errs []string
	for _, name := range machines {
		if _, err := runWorker(context.Background(), st.Lab, *c.Machine(name), nil, "linkstate", st.Lab, fmt.Sprint(i), state); err != nil {
			errs = append(errs, fmt.Sprintf("machine %s: %v", name, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("link %d: %s", i, strings.Join(errs, "; "))
	}
	return nil
}
