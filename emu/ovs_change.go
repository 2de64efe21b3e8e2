package emu

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/emuctl/emuctl/ovs"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Open vSwitch switches in run-time changes (change.go).
//
// A change that adds an ovs switch, or a link with an end on one, plans
// its OVS part before anything changes (ovsPlanKeeping: the lab's
// recorded bridges and ports keep their names and OpenFlow ports, only
// the new ones are named), so a name that is taken or a qos the link's
// shaping excludes is refused up front. The change's deployer then does
// what up does for those ports alone: the links phase creates each new
// switch-side end in the root namespace under its OVS name (journalled
// first, marked, renamed to a topology name only once marked), the
// shaping phase shapes, and the change's ovs phase moves the ends the
// links phase could not make there, adds the new rows — new bridges
// whole, new ports to the lab's bridges — in one transaction, waits for
// ovs-vswitchd to attach them, marks new bridge devices and puts
// emuctl's FIFOs under new HTB classes. The new bridges and ports are in
// the state before any of that, so `down` and `clean` know them after a
// kill -9 at any instant (they find rows and devices by marker anyway).
//
// A removal deletes the rows first (one transaction: the ports, or the
// bridge with its ports), waits for ovs-vswitchd to let go, then the
// port devices in the root namespace (marked ones only) and a removed
// bridge's device, if ovs-vswitchd left it.

// ovsChangePlan is what a change adds to the lab's Open vSwitch.
type ovsChangePlan struct {
	planned  *ovsPlanned // the lab's OVS as it will be: kept and new
	sub      *ovs.Lab    // the rows to add: new bridges whole, new ports of kept bridges
	existing []string    // bridges of sub the lab has already
	// set while the change runs, read by its rollback
	acquired   bool // the change picked (maybe started) the lab's Open vSwitch: emuctl's embedded pair
	transacted bool // the rows may exist
}

// newBridges are the plan's new bridges (node names).
func (p *ovsChangePlan) newBridges() []OVSBridgeState {
	var out []OVSBridgeState
	for _, b := range p.planned.bridges {
		if p.planned.added[b.Node] {
			out = append(out, b)
		}
	}
	return out
}

// newPorts are the plan's new ports, on new and kept bridges alike.
func (p *ovsChangePlan) newPorts() []OVSPortState {
	var out []OVSPortState
	for _, b := range p.planned.bridges {
		for _, ps := range b.Ports {
			if p.planned.added[b.Node+":"+ps.Iface] {
				out = append(out, ps)
			}
		}
	}
	return out
}

// ovsTouched reports whether a change adds or removes an ovs switch or
// a link with an end on one.
func ovsTouched(spec *topo.Spec, nodes []string, links []int) bool {
	return touches(spec, nodes, links, isOVS)
}

// touches says whether one of the nodes, or a node at an end of one of
// the links, is one that is.
func touches(spec *topo.Spec, nodes []string, links []int, is func(*topo.Node) bool) bool {
	for _, n := range nodes {
		if sn := spec.Node(n); sn != nil && is(sn) {
			return true
		}
	}
	for _, li := range links {
		for _, ep := range []topo.Endpoint{spec.Links[li].A, spec.Links[li].B} {
			if sn := spec.Node(ep.Node); sn != nil && is(sn) {
				return true
			}
		}
	}
	return false
}

// ovsChangeRefused refuses, before anything changes, what a change
// cannot do to Open vSwitch switches: removing a real adapter's port (it
// would have to go home first).
func ovsChangeRefused(st *State, diff labDiff) error {
	if st.OVS == nil {
		return nil
	}
	old := st.Spec
	for _, n := range diff.delNodes {
		if sn := old.Node(n); sn != nil && isOVS(sn) {
			for _, ifc := range sn.Interfaces {
				if ifc.External != nil {
					return fmt.Errorf("switch %s has a real adapter (%s, %s): ovs switches with real adapters cannot be removed at run time; bring the lab up again without it", n, ifc.Name, ifc.External.HostName)
				}
			}
		}
	}
	return nil
}

// planOVSChange plans what a change adds to the lab's Open vSwitch (nil:
// nothing), reading the names in use on the host and in the database
// the lab uses (or would use), and changing nothing.
func planOVSChange(ctx context.Context, st *State, spec *topo.Spec, links []LinkState, diff labDiff) (*ovsChangePlan, error) {
	if !ovsTouched(spec, diff.addNodes, diff.addLinks) {
		return nil, nil
	}
	taken := rootHolders()
	ep := ""
	switch {
	case st.OVS != nil:
		ep = st.OVS.DB
	case !ownOVS(spec):
		if e, err := systemOVS(ctx); err == nil {
			ep = e
		}
	}
	if ep == "" {
		if e := embeddedOVS(); len(e.Running()) == 2 && pingOVS(ctx, e.Endpoint()) == nil {
			ep = e.Endpoint()
		}
	}
	if ep != "" {
		if err := taken.addDBAt(ctx, ep); err != nil {
			return nil, fmt.Errorf("open vswitch %s: list the names in use: %w; nothing was changed", ep, err)
		}
	}
	var keep []OVSBridgeState
	if st.OVS != nil {
		keep = st.OVS.Bridges
	}
	d := &deployer{spec: spec, marker: Marker(st.Lab), st: &State{Links: links}}
	planned, err := d.ovsPlanKeeping(taken, kernelDatapath(), keep)
	if err != nil {
		return nil, fmt.Errorf("%w; nothing was changed", err)
	}
	p := &ovsChangePlan{planned: planned, sub: &ovs.Lab{Marker: planned.lab.Marker}}
	for _, b := range planned.lab.Bridges {
		if planned.added[b.Node] {
			p.sub.Bridges = append(p.sub.Bridges, b)
			continue
		}
		nb := b
		nb.Ports = nil
		for _, pt := range b.Ports {
			if planned.added[b.Node+":"+pt.Iface] {
				nb.Ports = append(nb.Ports, pt)
			}
		}
		if len(nb.Ports) > 0 {
			p.sub.Bridges = append(p.sub.Bridges, nb)
			p.existing = append(p.existing, b.Name)
		}
	}
	return p, nil
}

// ovsPrepareChange is ovsPrepare for a run-time change: the lab's Open
// vSwitch (picked now when the lab had no ovs switch), the plan recorded
// in the state before anything is made.
func (d *deployer) ovsPrepareChange(ctx context.Context) error {
	p := d.ovsChg
	if d.ovs != nil || p == nil {
		return nil
	}
	if d.st.OVS == nil {
		_, err := acquireOVS(ctx, ownOVS(d.spec), func(o *OVSState) error {
			d.stMu.Lock()
			d.st.OVS = o
			d.stMu.Unlock()
			return d.save()
		})
		if err != nil {
			return err
		}
		p.acquired = d.st.OVS.Embedded
	}
	group := d.st.OVS.Group
	if group == 0 {
		group = ovsGroup(d.spec.Name)
	}
	od := &ovsDeploy{lab: p.sub, born: p.planned.born, group: group, netdev: map[string]bool{}, ports: map[string]*OVSPortState{}, inRoot: map[string]bool{}}
	d.stMu.Lock()
	d.st.OVS.Bridges = slices.Clone(p.planned.bridges)
	d.st.OVS.Group = group
	for bi := range d.st.OVS.Bridges {
		b := &d.st.OVS.Bridges[bi]
		b.Ports = slices.Clone(b.Ports)
		od.netdev[b.Node] = b.Datapath == ovs.DatapathNetdev
		for pi := range b.Ports {
			ps := &b.Ports[pi]
			od.gso = od.gso || ps.QoS == ovs.QoSHTB
			if p.planned.added[b.Node+":"+ps.Iface] {
				od.ports[b.Node+":"+ps.Iface] = ps
			}
		}
	}
	d.stMu.Unlock()
	d.ovs = od
	d.log.Debug("ovs change planned", "bridges", len(p.newBridges()), "ports", len(od.ports))
	return d.save()
}

// ovsChangeSwitches is the change's ovs phase (ovsSwitches for the new
// bridges and ports alone).
func (d *deployer) ovsChangeSwitches(ctx context.Context) error {
	if d.ovs == nil || d.ovsChg == nil {
		return nil
	}
	o := d.st.OVS
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	c, err := ovs.Dial(dctx, o.DB)
	cancel()
	if err != nil {
		return err
	}
	defer c.Close()
	root, err := netlink.NewHandleAt(hostNetns, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer root.Close()
	moved, err := d.ovsMovePorts(ctx, root)
	if err != nil {
		return err
	}
	if err := d.topologyNamesFree(ctx, c, o.DB); err != nil {
		return err
	}
	t0 := time.Now()
	d.ovsChg.transacted = true
	cfg, err := c.Add(ctx, d.ovs.lab, d.ovsChg.existing)
	if err != nil {
		return fmt.Errorf("open vswitch (%s): %w", o.DB, err)
	}
	var names []string
	for _, b := range d.ovsChg.newBridges() {
		names = append(names, b.Name)
	}
	for _, ps := range d.ovs.ports {
		names = append(names, ps.Name)
	}
	if err := d.ovsApplied(ctx, c, root, o, cfg, d.ovsChg.newBridges(), names); err != nil {
		return err
	}
	d.log.Debug("ovs change applied", "bridges", len(d.ovsChg.newBridges()), "ports", len(d.ovs.ports), "moved", moved, "took", time.Since(t0))
	return d.ovsWaitSpanningTree(ctx, c)
}

// ovsUndoChange takes out what a failed change added to Open vSwitch:
// its rows, its port devices in the root namespace (the lab's, or
// journalled and unmarked) and its bridges' devices. The caller restores
// the state.
func ovsUndoChange(st *State, p *ovsChangePlan, log *slog.Logger) []error {
	var errs []error
	var bridges, ports []string
	for _, b := range p.newBridges() {
		bridges = append(bridges, b.Name)
	}
	for _, ps := range p.newPorts() {
		ports = append(ports, ps.Name)
	}
	if p.transacted && st.OVS != nil {
		if err := removeOVSRows(st.OVS.DB, Marker(st.Lab), bridges, ports, log); err != nil {
			errs = append(errs, err)
		}
	}
	var devs []string
	for _, ps := range p.newPorts() {
		if !ps.External {
			devs = append(devs, ps.Name)
		}
	}
	for _, b := range p.planned.born {
		devs = append(devs, b)
	}
	if err := deleteRootDevices(st.Lab, devs, true, log); err != nil {
		errs = append(errs, err)
	}
	if err := deleteBridgeDevices(st.Lab, bridges, log); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// removeOVSRows deletes the named bridges and ports of the lab from the
// database at ep in one transaction and waits for ovs-vswitchd.
func removeOVSRows(ep, marker string, bridges, ports []string, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
	c, err := ovs.Dial(dctx, ep)
	dcancel()
	if err != nil {
		return fmt.Errorf("open vswitch %s: %w", ep, err)
	}
	defer c.Close()
	n, cfg, err := c.Remove(ctx, marker, bridges, ports)
	if err != nil {
		return fmt.Errorf("open vswitch %s: remove %s: %w", ep, strings.Join(append(bridges, ports...), ", "), err)
	}
	if n == 0 {
		return nil
	}
	log.Debug("ovs rows removed", "bridges", bridges, "ports", ports, "rows", n)
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	defer wcancel()
	return c.WaitApplied(wctx, cfg)
}

// deleteRootDevices deletes the named devices of the root namespace
// that carry the lab's marker — and, with journalled, those without any
// alias that the lab's journal says it was about to make (an end not yet
// marked). A device marked by anyone else is never touched.
func deleteRootDevices(lab string, names []string, journalled bool, log *slog.Logger) error {
	if len(names) == 0 {
		return nil
	}
	var intents []string
	if journalled {
		intents = readJournal(lab).RootLinks
	}
	var errs []error
	for _, name := range names {
		l, err := netlink.LinkByName(name)
		if err != nil {
			continue
		}
		a := l.Attrs().Alias
		if ml, ok := labFromMarker(a); !(ok && ml == lab) && !(a == "" && slices.Contains(intents, name)) {
			continue
		}
		if err := netlink.LinkDel(l); err != nil && !errors.Is(err, unix.ENODEV) {
			errs = append(errs, fmt.Errorf("delete %s: %w", name, err))
			continue
		}
		log.Debug("ovs port device deleted", "dev", name)
	}
	return errors.Join(errs...)
}

// deleteBridgeDevices waits for ovs-vswitchd to remove the devices of
// the named bridges (it does once it has applied their rows' deletion,
// some a little later), then deletes what is left of them that carries
// the lab's bridge marker.
func deleteBridgeDevices(lab string, names []string, log *slog.Logger) error {
	if len(names) == 0 {
		return nil
	}
	marked := func(name string) netlink.Link {
		l, err := netlink.LinkByName(name)
		if err != nil {
			return nil
		}
		if ml, ok := labFromMarker(l.Attrs().Alias); ok && ml == lab && strings.Contains(l.Attrs().Alias, " ovs-bridge=") {
			return l
		}
		return nil
	}
	left := func() bool { return slices.ContainsFunc(names, func(n string) bool { return marked(n) != nil }) }
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && left(); {
		time.Sleep(20 * time.Millisecond)
	}
	var errs []error
	for _, n := range names {
		if l := marked(n); l != nil {
			if err := netlink.LinkDel(l); err != nil && !errors.Is(err, unix.ENODEV) {
				errs = append(errs, fmt.Errorf("delete bridge device %s: %w", n, err))
				continue
			}
			log.Debug("bridge device deleted", "dev", n)
		}
	}
	return errors.Join(errs...)
}

// ovsRemoveParts takes out the Open vSwitch part of what a change
// removes: the ports of removed links and the bridges of removed ovs
// switches (rows, then devices), and drops them from the lab's state.
func ovsRemoveParts(st *State, diff labDiff, log *slog.Logger) error {
	if st.OVS == nil {
		return nil
	}
	old := st.Spec
	dropNode := map[string]bool{}
	dropPort := map[string]bool{} // node:iface
	for _, n := range diff.delNodes {
		dropNode[n] = true
	}
	for _, li := range diff.delLinks {
		l := old.Links[li]
		dropPort[l.A.String()] = true
		dropPort[l.B.String()] = true
	}
	var bridges, ports, devs []string
	var keep []OVSBridgeState
	for _, b := range st.OVS.Bridges {
		if dropNode[b.Node] {
			bridges = append(bridges, b.Name)
		}
		nb := b
		nb.Ports = nil
		for _, p := range b.Ports {
			if dropNode[b.Node] || dropPort[b.Node+":"+p.Iface] {
				ports = append(ports, p.Name)
				if !p.External {
					devs = append(devs, p.Name)
				}
				continue
			}
			nb.Ports = append(nb.Ports, p)
		}
		if !dropNode[b.Node] {
			keep = append(keep, nb)
		}
	}
	if len(bridges)+len(ports) == 0 {
		return nil
	}
	var errs []error
	if err := removeOVSRows(st.OVS.DB, Marker(st.Lab), bridges, ports, log); err != nil {
		errs = append(errs, err)
	}
	if err := deleteRootDevices(st.Lab, devs, false, log); err != nil {
		errs = append(errs, err)
	}
	if err := deleteBridgeDevices(st.Lab, bridges, log); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return err // the state keeps them: down removes them by marker
	}
	if st.OVS.ExecRunDir != "" {
		for _, b := range bridges {
			for _, b2 := range st.OVS.Bridges {
				if b2.Name == b {
					for _, suf := range []string{".mgmt", ".snoop"} {
						os.Remove(filepath.Join(st.OVS.ExecRunDir, b2.Node+suf))
					}
				}
			}
		}
	}
	st.OVS.Bridges = keep
	return nil
}

// cloneOVS copies a lab's OVS record, for a change's rollback.
func cloneOVS(o *OVSState) *OVSState {
	if o == nil {
		return nil
	}
	c := *o
	c.Bridges = slices.Clone(o.Bridges)
	for i := range c.Bridges {
		c.Bridges[i].Ports = slices.Clone(c.Bridges[i].Ports)
	}
	return &c
}
