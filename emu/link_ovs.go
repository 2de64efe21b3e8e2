package emu

import (
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/tc/engine"
)

// ovsLink is a veth pair with an Open vSwitch switch at one or both ends
// (ovs.go): an unshaped (or engine-less) link's switch ends are created
// straight in the root namespace as OVS ports; a kernel-shaped one is made
// like a veth link, shaped in the switch's namespace, and its ends moved
// by the ovs phase, which puts the qdiscs back (reshapeMoved). Changes and
// reads reach the port wherever it lives (openEnd).
type ovsLink struct{ kernel bool }

func (k ovsLink) create(d *deployer, li int) error {
	if k.kernel {
		return d.createLink(d.spec.Links[li], li)
	}
	return d.createOVSLink(d.spec.Links[li], li)
}

func (k ovsLink) shape(d *deployer, li int) error { return kernelShape(d, li, k.kernel) }

func (k ovsLink) change(st *State, li int, a, b tc.Dir) error { return kernelChange(st, li, a, b) }

func (k ovsLink) show(st *State, li int, info *LinkInfo, stats map[int]engine.Stats) {
	vethLink(k).show(st, li, info, stats)
}

func (ovsLink) name() string { return "ovs" }

func (ovsLink) verifiable() bool { return true }
