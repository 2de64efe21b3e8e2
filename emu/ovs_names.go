package emu

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/emuctl/emuctl/ovs"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
)

// Names of OVS devices (names: topology).
//
// Every lab's bridges and ports share one namespace (the root one) and one
// database, so by default they get unique hashed names. A switch with
// names: topology gets exactly its own name for the bridge and its
// interfaces' names for the ports, as under Mininet, so `ovs-vsctl get
// Interface s1-eth1 ofport` and `ovs-ofctl dump-flows s1` work with the
// topology's names; one lab at a time may hold such a name. `up` refuses
// before anything changes when a name is taken by anything that is not
// the lab's (preflight), checks again when it plans (the ovs phase's
// start) and once more just before the OVS transaction.
//
// No port device of emuctl's ever carries a topology name unmarked: a
// port's veth end is created in the root namespace under a unique name
// (journalled, as for names: unique), marked, and only then renamed;
// ports that arrive from a switch's namespace already carry the lab's
// marker. So everything that finds a lab's devices by marker (down,
// clean, the leak checks) finds these too, and a device named like a
// switch or port that does not carry the marker is never deleted. The
// bridge devices are ovs-vswitchd's: unmarked for a moment after it
// creates them, they are left to ovs-vswitchd (deleting the rows) rather
// than deleted by name (see ovsTeardown).

// nameHolder says who holds a name a switch with names: topology needs:
// a description for messages and, when it is an emuctl lab's, the lab.
type nameHolder struct {
	desc string
	lab  string
}

// nameHolders maps the names in use in ovs-vswitchd's namespace and
// database to their holders.
type nameHolders map[string]nameHolder

// rootHolders lists the devices of the root namespace.
func rootHolders() nameHolders {
	h := nameHolders{}
	for _, l := range rootLinks() {
		h[l.Attrs().Name] = deviceHolder(l)
	}
	return h
}

func deviceHolder(l netlink.Link) nameHolder {
	a := l.Attrs()
	if lab, ok := labFromMarker(a.Alias); ok {
		return nameHolder{desc: fmt.Sprintf("a %s device in the root namespace of emuctl lab %s (alias %q)", l.Type(), lab, a.Alias), lab: lab}
	}
	return nameHolder{desc: fmt.Sprintf("a %s device in the root namespace that is not emuctl's", l.Type())}
}

// addDB adds the names of one OVS database; a device of the same name
// says more and is kept.
func (h nameHolders) addDB(ep string, names map[string]ovs.NameUse) {
	for n, u := range names {
		if _, ok := h[n]; ok {
			continue
		}
		if lab, ok := labFromMarker(u.Marker); ok {
			h[n] = nameHolder{desc: fmt.Sprintf("a %s in the Open vSwitch database %s of emuctl lab %s", u.Table, ep, lab), lab: lab}
		} else {
			h[n] = nameHolder{desc: fmt.Sprintf("a %s in the Open vSwitch database %s that is not emuctl's", u.Table, ep)}
		}
	}
}

// addDBAt adds the names of the database at ep.
func (h nameHolders) addDBAt(ctx context.Context, ep string) error {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := ovs.Dial(dctx, ep)
	if err != nil {
		return err
	}
	defer c.Close()
	names, err := c.Names(dctx)
	if err != nil {
		return err
	}
	h.addDB(ep, names)
	return nil
}

// topologyNamed lists the ovs switches of this machine with names:
// topology.
func topologyNamed(spec *topo.Spec) []*topo.Node {
	var out []*topo.Node
	for i := range spec.Nodes {
		n := &spec.Nodes[i]
		if isOVS(n) && spec.Here(n.Name) && n.OVS.TopologyNames() {
			out = append(out, n)
		}
	}
	return out
}

// topologyDeviceNames is every name a switch with names: topology gives a
// device: its own (the bridge) and its interfaces' (real adapters keep
// their host names, which are not the lab's to take).
func topologyDeviceNames(n *topo.Node) []string {
	out := []string{n.Name}
	for _, ifc := range n.Interfaces {
		if ifc.External == nil {
			out = append(out, ifc.Name)
		}
	}
	return out
}

// topologyNameConflicts reports, one line per switch with names:
// topology, the names it needs that taken holds, with who holds each and
// what would work.
func topologyNameConflicts(spec *topo.Spec, taken nameHolders) []string {
	var out []string
	for _, n := range topologyNamed(spec) {
		var names []string
		var holders []nameHolder
		for _, name := range topologyDeviceNames(n) {
			if h, ok := taken[name]; ok {
				names, holders = append(names, name), append(holders, h)
			}
		}
		if len(names) > 0 {
			out = append(out, nameConflict(spec.Name, n, names, holders))
		}
	}
	return out
}

// maxConflictsShown bounds the taken names one refusal describes.
const maxConflictsShown = 4

func nameConflict(lab string, n *topo.Node, names []string, holders []nameHolder) string {
	where := ""
	if n.OVS.NamesAt != "" {
		where = n.OVS.NamesAt + ": "
	}
	var who []string
	var labs []string
	user, self := false, false
	for i, name := range names {
		h := holders[i]
		switch {
		case h.lab == "":
			user = true
		case h.lab == lab:
			self = true
		case !slices.Contains(labs, h.lab):
			labs = append(labs, h.lab)
		}
		if i < maxConflictsShown {
			who = append(who, name+" by "+h.desc)
		}
	}
	if len(names) > maxConflictsShown {
		who = append(who, fmt.Sprintf("and %d more", len(names)-maxConflictsShown))
	}
	fixes := []string{"rename the switch", "set names: unique (the default) on it"}
	if user {
		fixes = append(fixes, "remove what is not emuctl's, if it is yours")
	}
	for _, l := range labs {
		fixes = append(fixes, fmt.Sprintf("take lab %s down first (emuctl down %s)", l, l))
	}
	if self {
		fixes = append(fixes, "run emuctl clean (an earlier run of this lab left them)")
	}
	fix := strings.Join(fixes[:len(fixes)-1], ", ") + ", or " + fixes[len(fixes)-1]
	needs := "a name that is taken"
	if len(names) > 1 {
		needs = "names that are taken"
	}
	return fmt.Sprintf("%sswitch %s (names: topology) needs %s: %s; %s", where, n.Name, needs, strings.Join(who, ", "), fix)
}

// ovsNamePreflight checks, before anything changes, that the names the
// lab's switches with names: topology need are free: in the root
// namespace, and in the database of the Open vSwitch the lab would use
// when one is running (a database emuctl has yet to start is empty).
func ovsNamePreflight(spec *topo.Spec) []string {
	if len(topologyNamed(spec)) == 0 {
		return nil
	}
	taken := rootHolders()
	ctx := context.Background()
	if !ownOVS(spec) {
		if ep, err := systemOVS(ctx); err == nil {
			if err := taken.addDBAt(ctx, ep); err != nil {
				return []string{fmt.Sprintf("open vswitch %s: list the names in use: %v", ep, err)}
			}
			return topologyNameConflicts(spec, taken)
		}
	}
	if e := embeddedOVS(); len(e.Running()) == 2 {
		// A remnant that does not answer is restarted empty by up.
		taken.addDBAt(ctx, e.Endpoint())
	}
	return topologyNameConflicts(spec, taken)
}

// unmarkedTopologyBridge reports whether a device named like one of the
// lab's bridges with names: topology exists without a marker: ovs-vswitchd
// made it and the lab had not marked it yet (a deploy killed in between),
// or it is not the lab's at all. Either way only ovs-vswitchd may remove
// it (by the lab's rows going), never emuctl by its name.
func unmarkedTopologyBridge(st *State) bool {
	if st.OVS == nil {
		return false
	}
	unmarked := map[string]bool{}
	for _, l := range rootLinks() {
		if l.Attrs().Alias == "" {
			unmarked[l.Attrs().Name] = true
		}
	}
	for _, b := range st.OVS.Bridges {
		if b.Names == topo.OVSNamesTopology && unmarked[b.Name] {
			return true
		}
	}
	return false
}
