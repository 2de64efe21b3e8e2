package emu

import (
	"errors"
	"fmt"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/tc/engine"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Links of a lab over several machines (cluster.go), as a worker sees
// them:
//
//   - vxlanLink: a cut link's end on this machine. The node's interface
//     is a VXLAN device (unicast to the other machine's underlay address,
//     the link's VNI, no learning, MTU = the link's), created from the
//     machine's root namespace — where its UDP socket stays — directly
//     into the node's namespace, so it never exists unmarked outside a
//     marked namespace. A kernel-shaped cut link is shaped on this end's
//     egress only: each direction on its sending machine, before
//     encapsulation. (A cut link on the userspace engine is an engineLink
//     whose far engine port is the VXLAN device: createEngineLink.)
//   - remoteLink: a link with no end here; another machine builds it.
//   - clusterLink: any link in the controller's record, whose parts live
//     on the machines: link show/set/verify say so.
type vxlanLink struct{ kernel bool }

// clusterKind is link li's kind in a lab over several machines, or nil
// for a link this machine builds as any other (both ends here, not on
// the engine across a cut).
func clusterKind(spec *topo.Spec, links []LinkState, li int) linkKind {
	c := spec.Cluster
	if c == nil || li >= len(spec.Links) {
		return nil
	}
	if c.Slice == "" {
		return clusterLink{}
	}
	l := spec.Links[li]
	a, b := spec.Here(l.A.Node), spec.Here(l.B.Node)
	ls, shaped := findLinkState(links, li)
	switch {
	case !a && !b:
		return remoteLink{}
	case a && b, shaped && ls.Backend == BackendEngine:
		return nil
	}
	return vxlanLink{kernel: shaped && (ls.Backend == BackendNetem || ls.Backend == BackendShaper)}
}

// localEnd is the end of cut link li on this machine and its direction
// (AtoB when it is A).
func localEnd(spec *topo.Spec, li int) (ep topo.Endpoint, isA bool) {
	l := spec.Links[li]
	if spec.Here(l.A.Node) {
		return l.A, true
	}
	return l.B, false
}

func (k vxlanLink) create(d *deployer, li int) error {
	ep, _ := localEnd(d.spec, li)
	n := d.nodes[ep.Node]
	ifc := findIface(n.spec, ep.Iface)
	if ifc == nil {
		return errors.New("spec inconsistency: endpoint not found")
	}
	if err := d.createTunnel(li, ifc.Name, ifc.MAC, ifc.MTU, n.ns); err != nil {
		return err
	}
	return d.finishEnd(n, ifc, false)
}

// createTunnel makes cut link li's VXLAN device named name in the
// namespace into, its socket in this machine's root namespace.
func (d *deployer) createTunnel(li int, name, mac string, mtu int, into netns.NsHandle) error {
	c := d.spec.Cluster
	cut := c.CutOf(li)
	if cut == nil {
		return fmt.Errorf("link %d is not cut between machines", li)
	}
	there := cut.B
	if there == c.Slice {
		there = cut.A
	}
	here, peer := c.Machine(c.Slice), c.Machine(there)
	if mtu <= 0 {
		mtu = 1500
	}
	la := netlink.NewLinkAttrs()
	la.Name, la.MTU, la.HardwareAddr = name, mtu, parseMAC(mac)
	la.Namespace = netlink.NsFd(int(into))
	vx := &netlink.Vxlan{LinkAttrs: la, VxlanId: cut.VNI, SrcAddr: here.Underlay.AsSlice(), Group: peer.Underlay.AsSlice(), Port: c.Port, Learning: false}
	h, err := netlink.NewHandleAt(hostNetns, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.LinkAdd(vx); err != nil {
		return fmt.Errorf("vxlan %d to machine %s (%s): %w", cut.VNI, peer.Name, peer.Underlay, err)
	}
	d.log.Debug("vxlan created", "link", li, "vni", cut.VNI, "remote", peer.Underlay)
	return nil
}

func (k vxlanLink) shape(d *deployer, li int) error {
	if !k.kernel {
		return nil
	}
	ls, _ := d.linkStateFor(li)
	ep, isA := localEnd(d.spec, li)
	dir := ls.BtoA
	if isA {
		dir = ls.AtoB
	}
	n := d.nodes[ep.Node]
	if err := with(func() error { return d.shapeEnd(n, ep, dir, ls.Backend) }, n); err != nil {
		return fmt.Errorf("link %d (%s): %w", li, ls.Name, err)
	}
	return nil
}

func (k vxlanLink) show(st *State, li int, info *LinkInfo, _ map[int]engine.Stats) {
	showShaped(st, li, info)
	l := st.Spec.Links[li]
	readEnds(st, info, l.A, l.B, k.kernel)
}

func (vxlanLink) name() string { return "vxlan" }

func (vxlanLink) verifiable() bool { return false }

var errClusterLinkSet = errors.New("this link is changed through the lab's controller (emuctl link set on the machine that ran up)")

// remoteLink is a link another machine builds.
type remoteLink struct{}

func (remoteLink) create(*deployer, int) error                       { return nil }
func (remoteLink) shape(*deployer, int) error                        { return nil }
func (remoteLink) change(*State, int, tc.Dir, tc.Dir) error          { return errClusterLinkSet }
func (remoteLink) show(*State, int, *LinkInfo, map[int]engine.Stats) {}
func (remoteLink) name() string                                      { return "remote" }
func (remoteLink) verifiable() bool                                  { return false }

// clusterLink is a link in the controller's record.
type clusterLink struct{}

func (clusterLink) create(*deployer, int) error              { return nil }
func (clusterLink) shape(*deployer, int) error               { return nil }
func (clusterLink) change(*State, int, tc.Dir, tc.Dir) error { return errClusterLinkSet }
func (clusterLink) show(st *State, li int, info *LinkInfo, _ map[int]engine.Stats) {
	c := st.Spec.Cluster
	l := st.Spec.Links[li]
	if !showShaped(st, li, info) { // not changed since up: the Spec's parameters
		planned, _ := planLinks(st.Spec, tc.Caps{})
		if ls, ok := findLinkState(planned, li); ok {
			info.AtoB, info.BtoA = ls.AtoB, ls.BtoA
		}
	}
	info.Backend = "machine " + c.Nodes[l.A.Node]
	if cut := c.CutOf(li); cut != nil {
		info.Backend = fmt.Sprintf("vxlan %d: %s <-> %s", cut.VNI, cut.A, cut.B)
	}
	info.StateA, info.StateB = "remote", "remote"
}
func (clusterLink) name() string     { return "cluster" }
func (clusterLink) verifiable() bool { return false }

// createCutEnginePort makes the far port of an engine link cut between
// machines: the VXLAN device, named as the engine port it stands for, in
// the link's namespace.
func (d *deployer) createCutEnginePort(li int, eif string, mtu int, ln *node) error {
	if err := d.createTunnel(li, eif, "", mtu, ln.ns); err != nil {
		return err
	}
	el, err := ln.h.LinkByName(eif)
	if err != nil {
		return err
	}
	if err := ln.h.LinkSetAlias(el, d.marker); err != nil {
		return err
	}
	return ln.h.LinkSetUp(el)
}

// sliceLinks keeps, on a worker, the shaped links with an end on its
// machine, a cut link's direction that the other machine sends left
// unshaped here (each direction is shaped on its sending machine).
func sliceLinks(spec *topo.Spec, links []LinkState) []LinkState {
	if spec.Cluster == nil || spec.Cluster.Slice == "" {
		return links
	}
	var out []LinkState
	for _, ls := range links {
		l := spec.Links[ls.Index]
		a, b := spec.Here(l.A.Node), spec.Here(l.B.Node)
		switch {
		case !a && !b:
			continue
		case a && !b:
			ls.BtoA = tc.Dir{}
		case b && !a:
			ls.AtoB = tc.Dir{}
		}
		out = append(out, ls)
	}
	return out
}

// LinkMTU is link li's MTU (its A end's, else its B end's; 1500 when
// neither sets one).
func LinkMTU(spec *topo.Spec, li int) int { return linkMTU(spec, spec.Links[li]) }

// linkMTU is link l's MTU (its A end's; 1500 when not set).
func linkMTU(spec *topo.Spec, l topo.Link) int {
	for _, ep := range []topo.Endpoint{l.A, l.B} {
		if n := spec.Node(ep.Node); n != nil {
			if ifc := findIface(n, ep.Iface); ifc != nil && ifc.MTU > 0 {
				return ifc.MTU
			}
		}
	}
	return 1500
}

// isTunnel reports whether a node's interface is a cut link's VXLAN end,
// which reports no carrier (operstate unknown) once up.
func (d *deployer) isTunnel(n *node, iface string) bool {
	if d.spec.Cluster == nil {
		return false
	}
	for li, l := range d.spec.Links {
		for _, ep := range []topo.Endpoint{l.A, l.B} {
			if ep.Node == n.spec.Name && ep.Iface == iface {
				_, ok := d.kindOf(li).(vxlanLink)
				return ok
			}
		}
	}
	return false
}

// tunnelPreflight checks, on a worker before anything is made, that this
// machine reaches every other machine it has a tunnel to, through a
// device whose MTU carries the link's frames plus VXLAN's 50 bytes: with
// less the kernel would lower the path MTU (to 1450 at 1500) and TCP
// would silently use a smaller MSS.
func tunnelPreflight(spec *topo.Spec) []string {
	c := spec.Cluster
	if c == nil || c.Slice == "" {
		return nil
	}
	h, err := netlink.NewHandleAt(hostNetns, unix.NETLINK_ROUTE)
	if err != nil {
		return []string{err.Error()}
	}
	defer h.Close()
	here := c.Machine(c.Slice)
	var errs []string
	for _, cut := range c.Cuts {
		if cut.A != c.Slice && cut.B != c.Slice {
			continue
		}
		peer := c.Machine(cut.A)
		if cut.A == c.Slice {
			peer = c.Machine(cut.B)
		}
		routes, err := h.RouteGet(peer.Underlay.AsSlice())
		if err != nil || len(routes) == 0 {
			errs = append(errs, fmt.Sprintf("machine %s has no route to machine %s's underlay address %s: %v", here.Name, peer.Name, peer.Underlay, err))
			continue
		}
		l, err := h.LinkByIndex(routes[0].LinkIndex)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		mtu := l.Attrs().MTU
		if routes[0].MTU > 0 && routes[0].MTU < mtu {
			mtu = routes[0].MTU
		}
		if need := linkMTU(spec, spec.Links[cut.Link]) + topo.VXLANOverhead; mtu < need {
			errs = append(errs, fmt.Sprintf("machine %s reaches machine %s through %s with MTU %d, and link %s <-> %s (VNI %d) needs %d: raise the underlay's MTU or lower the link's mtu: to %d",
				here.Name, peer.Name, l.Attrs().Name, mtu, spec.Links[cut.Link].A, spec.Links[cut.Link].B, cut.VNI, need, mtu-topo.VXLANOverhead))
		}
	}
	return errs
}
