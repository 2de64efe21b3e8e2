package emu

import (
	"fmt"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/tc/engine"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
)

// engineLink is a link through the userspace link engine: node A <-veth->
// [ea  engine  eb] <-veth-> node B, the engine ends in the link's own
// namespace (made by the namespaces phase), the engine a goroutine of the
// lab's supervisor (started by the shaping phase once every engine link
// exists), changed at run time over the supervisor's socket.
type engineLink struct{}

func (engineLink) create(d *deployer, li int) error {
	ls, _ := d.linkStateFor(li)
	return d.createEngineLink(d.spec.Links[li], li, ls)
}

// shape: the supervisor, started once for every engine link by the
// shaping phase, applies the parameters.
func (engineLink) shape(*deployer, int) error { return nil }

// localUpdate, set inside the supervisor process, updates one of its own
// engines directly (a schedule's steps) instead of over its socket.
var localUpdate func(li int, a, b tc.Dir) error

func (engineLink) change(st *State, li int, a, b tc.Dir) error {
	var err error
	if localUpdate != nil {
		err = localUpdate(li, a, b)
	} else {
		_, err = supervisorCall(st.Lab, ctlRequest{Op: "update", Link: li, AtoB: &a, BtoA: &b})
	}
	if err != nil {
		return err
	}
	setShaped(st, li, BackendEngine, a, b)
	return nil
}

func (engineLink) show(st *State, li int, info *LinkInfo, stats map[int]engine.Stats) {
	showShaped(st, li, info)
	if s, ok := stats[li]; ok {
		info.Stats = &s
	}
	l := st.Spec.Links[li]
	readEnds(st, info, l.A, l.B, false)
}

func (engineLink) name() string { return "engine" }

func (engineLink) verifiable() bool { return true }

// createEngineLink builds A <-veth-> [ea  engine  eb] <-veth-> B for a
// userspace link: the node ends keep their names, MACs and addresses; the
// engine ends live in the link's namespace.
func (d *deployer) createEngineLink(l topo.Link, li int, ls LinkState) error {
	ln := d.linkNodes[li]
	if ln == nil {
		return fmt.Errorf("link namespace %s missing", ls.Netns)
	}
	for k, end := range []struct {
		ep  topo.Endpoint
		eif string
	}{{l.A, engineIfA}, {l.B, engineIfB}} {
		if !d.spec.Here(end.ep.Node) { // cut between machines: the far port is the tunnel (link_vxlan.go)
			if err := d.createCutEnginePort(li, end.eif, linkMTU(d.spec, l), ln); err != nil {
				return err
			}
			continue
		}
		n := d.nodes[end.ep.Node]
		ifc := findIface(n.spec, end.ep.Iface)
		la := netlink.NewLinkAttrs()
		la.Name = ifc.Name
		la.Alias = d.marker
		la.HardwareAddr = parseMAC(ifc.MAC)
		if !n.root() { // the machine's namespace allocates its own indexes
			la.Index = d.ifindex(li, 1+k)
		}
		if ifc.MTU > 0 {
			la.MTU = ifc.MTU
		}
		if n.bridge != 0 {
			la.MasterIndex = n.bridge
		}
		v := netlink.NewVeth(la)
		v.PeerName = end.eif
		v.PeerNamespace = netlink.NsFd(int(ln.ns))
		if ifc.MTU > 0 {
			v.PeerMTU = uint32(ifc.MTU)
		}
		if err := n.h.LinkAdd(v); err != nil {
			return fmt.Errorf("create veth %s: %w", end.ep, err)
		}
		if err := d.finishEnd(n, ifc, true); err != nil {
			return err
		}
		el, err := ln.h.LinkByName(end.eif)
		if err != nil {
			return err
		}
		if err := ln.h.LinkSetAlias(el, d.marker); err != nil {
			return err
		}
		if err := ln.h.LinkSetUp(el); err != nil {
			return err
		}
	}
	return nil
}
