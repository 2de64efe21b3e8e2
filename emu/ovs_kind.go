package emu

import "github.com/emuctl/emuctl/topo"

// ovsKind is a switch of type ovs (kind.go): its namespace holds nothing
// of the switch; its bridge and ports live in the machine's namespace,
// made in the lab-wide ovs phase in one OVSDB transaction (ovs.go), and
// a link with an end on it is an ovs link (link_ovs.go).
type ovsKind struct{ nsNode }

func (ovsKind) name() string                  { return "ovs switch" }
func (ovsKind) is(n *topo.Node) bool          { return isOVS(n) }
func (ovsKind) ownsIfaces() bool              { return false }
func (ovsKind) recordFirst() bool             { return true }
func (ovsKind) portLink(kernel bool) linkKind { return ovsLink{kernel: kernel} }

func (ovsKind) phases() []kindPhase {
	return []kindPhase{{
		name:    "ovs",
		plan:    ovsPreflight, // ovs_preflight.go
		upAfter: "shaping", up: (*deployer).ovsSwitches,
		changeAfter: "shaping", change: (*deployer).ovsChangeSwitches, // ovs_change.go
		prepare: (*deployer).ovsPrepare,
		undo:    ovsUndo,
		remove:  ovsRemoveParts,
	}}
}

// ovsUndo takes out what a failed change added to Open vSwitch.
func ovsUndo(d *deployer, _ labDiff) []error {
	if d.ovsChg == nil {
		return nil
	}
	return ovsUndoChange(d.st, d.ovsChg, d.log)
}
