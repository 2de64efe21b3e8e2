package emu

import (
	"context"
	"fmt"

	"github.com/emuctl/emuctl/ovs"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
)

// ovsPreflight checks what can be checked about a lab's ovs switches
// before anything changes: an Open vSwitch to use (a system one that
// answers, or the binaries to start emuctl's own), the names switches
// with names: topology need, datapath pins this kernel can honour, and
// one owner per port's qdiscs.
func ovsPreflight(spec *topo.Spec, links []LinkState) []string {
	if !specHasOVS(spec) {
		return nil
	}
	var errs []string
	if ownOVS(spec) {
		if _, err := ovs.Binaries(); err != nil {
			errs = append(errs, fmt.Sprintf("ovs switches on a local machine of a lab over several machines run in the machine's own Open vSwitch, which emuctl cannot start: %v", err))
		}
	} else if _, err := systemOVS(context.Background()); err != nil {
		if ep, explicit := systemOVSDB(); explicit {
			errs = append(errs, fmt.Sprintf("EMUCTL_OVS_DB=%s does not answer: %v", ep, err))
		} else if _, err := ovs.Binaries(); err != nil {
			errs = append(errs, fmt.Sprintf("ovs switches need Open vSwitch: no system Open vSwitch answers at %s and emuctl cannot start its own: %v", ovs.SystemDB, err))
		}
	}
	errs = append(errs, ovsNamePreflight(spec)...) // names: topology (ovs_names.go)
	kernel := kernelDatapath()
	shapedBy := map[int]string{}
	for _, ls := range links {
		if ls.Backend == BackendNetem || ls.Backend == BackendShaper {
			shapedBy[ls.Index] = ls.Backend
		}
	}
	for i := range spec.Nodes {
		n := &spec.Nodes[i]
		if !isOVS(n) {
			continue
		}
		if _, err := resolveDatapath(n.OVS, kernel); err != nil {
			errs = append(errs, fmt.Sprintf("switch %s: %v", n.Name, err))
		}
		if n.OVS == nil {
			continue
		}
		for _, p := range n.OVS.Ports {
			ifc := findIface(n, p.Iface)
			if p.QoS == nil || ifc == nil || ifc.Link < 0 {
				continue
			}
			if b, ok := shapedBy[ifc.Link]; ok {
				errs = append(errs, fmt.Sprintf("%s: %s:%s has a qos: but its link is shaped with %s qdiscs on the same port: a port's qdisc tree has one owner; give that link backend: userspace (it shapes in the link's own namespace and leaves the port to OVS) or put the qos on another port", p.Pos, n.Name, p.Iface, b))
			}
			errs = append(errs, ovsLeafErrs(n.Name, p)...)
		}
	}
	return errs
}

// ovsLeafErrs checks that the kernel has the discipline of every queue
// leaf of a port's QoS: they are kernel qdiscs under OVS's HTB classes,
// which the link engine cannot stand in for.
func ovsLeafErrs(node string, p topo.OVSPort) []string {
	var errs []string
	var caps *tc.Caps
	for k := range max(1, len(p.QoS.Queues)) {
		d := ovsLeafDir(p.QoS, k)
		if d == nil {
			continue
		}
		if caps == nil {
			c := tc.Probe()
			caps = &c
		}
		where := p.Pos
		if l := p.QoS.Leaf(k); l != nil && l.At != "" {
			where = l.At
		}
		disc := d.AQM.Name()
		if err := caps.Err(disc); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %s:%s qos queue %d: %s needs the kernel's %s qdisc under OVS's HTB class, and this kernel has none (%s); an OVS queue is a kernel qdisc, which the link engine cannot stand in for", where, node, p.Iface, k, disc, tc.KernelKind(disc), caps.Reasons[disc]))
			continue
		}
		if _, err := tc.LeafQdisc(*d, 1500, 0, 0); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %s:%s qos queue %d: %v", where, node, p.Iface, k, err))
		}
	}
	return errs
}
