package emu

import (
	"fmt"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/tc/engine"
	"github.com/emuctl/emuctl/topo"
)

// vethLink is a veth pair between two nodes (deploy.go's createLink),
// unshaped, or shaped by kernel qdiscs on each end's egress: netem with its
// rate and queue, or TBF/HTB alone on kernels without netem.
type vethLink struct{ kernel bool }

func (k vethLink) create(d *deployer, li int) error { return d.createLink(d.spec.Links[li], li) }

func (k vethLink) shape(d *deployer, li int) error { return kernelShape(d, li, k.kernel) }

func (k vethLink) change(st *State, li int, a, b tc.Dir) error { return kernelChange(st, li, a, b) }

func (k vethLink) show(st *State, li int, info *LinkInfo, _ map[int]engine.Stats) {
	showShaped(st, li, info)
	l := st.Spec.Links[li]
	readEnds(st, info, l.A, l.B, k.kernel)
}

func (vethLink) name() string { return "veth" }

func (vethLink) verifiable() bool { return true }

// kernelShape installs a kernel-shaped link's qdiscs on both ends.
func kernelShape(d *deployer, li int, kernel bool) error {
	if !kernel {
		return nil
	}
	ls, _ := d.linkStateFor(li)
	if err := d.applyKernelShaping(ls); err != nil {
		return fmt.Errorf("link %d (%s): %w", ls.Index, ls.Name, err)
	}
	return nil
}

// kernelChange re-shapes a kernel link in place; an unshaped one gets
// netem where the kernel has it (a link made without parameters on a
// kernel without netem has no engine to change: say so).
func kernelChange(st *State, li int, a, b tc.Dir) error {
	ls, shaped := findLinkState(st.Links, li)
	backend := ls.Backend
	var caps tc.Caps
	probed := false
	if !shaped {
		caps, probed = tc.Probe(), true
		if !caps.Netem {
			return fmt.Errorf("link %d was created unshaped, and this kernel has no sch_netem to shape it in place (%s); give it link parameters in the topology (e.g. delay: 0ms with a rate, or any loss) so it gets a link engine at up", li, caps.Reasons["netem"])
		}
		backend = BackendNetem
	}
	if !a.AQM.IsDropTail() || !b.AQM.IsDropTail() {
		if !probed {
			caps = tc.Probe()
		}
		if err := kernelQueueErr(caps, a, b, 1500); err != nil {
			return fmt.Errorf("link %d is shaped by the kernel (%s), which cannot run this queue: %w; a link's backend is fixed at up: give it backend: userspace (or this queue) in the topology to change its discipline at run time", li, backend, err)
		}
	}
	l := st.Spec.Links[li]
	for _, end := range []struct {
		ep topo.Endpoint
		d  tc.Dir
	}{{l.A, a}, {l.B, b}} {
		if err := applyKernelEnd(st, end.ep, backend, end.d); err != nil {
			return err
		}
	}
	setShaped(st, li, backend, a, b)
	return nil
}

// applyKernelEnd replaces one end's qdiscs with the plan for d.
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
