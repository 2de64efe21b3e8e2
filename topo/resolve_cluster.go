package topo

import (
	"fmt"
	"strings"
)

// unshapedWeight is an unshaped link's weight in automatic placement:
// faster than any shaped link, so placement cuts shaped links first.
const unshapedWeight = 100e9

// resolveCluster checks machines:, placement: and the nodes' machine:
// keys, places the nodes placement: auto leaves free, and numbers the
// cut links' tunnels.
func (r *resolver) resolveCluster() {
	rc := r.doc.cluster
	if rc == nil || len(rc.machines) == 0 {
		for _, rn := range r.doc.nodes {
			if rn.machine != "" {
				r.d.errorf(rn.machineLoc, "machine: needs a machines: mapping at the top level naming %q (e.g. machines: {%s: {ssh: local, underlay: 192.168.100.1}})", clip(rn.machine), clip(rn.machine))
			}
		}
		if rc != nil && rc.placement != "" && len(rc.machines) == 0 && rc.machinesLoc.line == 0 {
			r.d.errorf(rc.placementLoc, "placement: needs a machines: mapping at the top level")
		}
		return
	}
	c := &Cluster{Port: rc.port, VNIBase: rc.vniBase, Nodes: map[string]string{}, Placement: rc.placement}
	names := make([]string, 0, len(rc.machines))
	index := map[string]int{}
	byUnderlay := map[string]string{}
	for _, m := range rc.machines {
		m.m.Pos = posString(r.d.file, m.loc)
		if other, dup := byUnderlay[m.m.Underlay.String()]; dup {
			r.d.errorf(m.underlayLoc, "underlay %s is also machine %s's: each machine needs its own underlay address", m.m.Underlay, other)
		}
		byUnderlay[m.m.Underlay.String()] = m.m.Name
		index[m.m.Name] = len(names)
		names = append(names, m.m.Name)
		c.Machines = append(c.Machines, m.m)
	}
	pinned := make([]int, len(r.spec.Nodes))
	anyPinned := false
	for i, rn := range r.doc.nodes {
		pinned[i] = -1
		if rn.machine == "" {
			continue
		}
		anyPinned = true
		mi, ok := index[rn.machine]
		if !ok {
			r.d.errorf(rn.machineLoc, "unknown machine %q %s", clip(rn.machine), choices("known", rn.machine, names))
			continue
		}
		pinned[i] = mi
	}
	if c.Placement == "" {
		c.Placement = "auto"
		if anyPinned {
			c.Placement = "explicit"
		}
	}
	for i, rn := range r.doc.nodes {
		n := &r.spec.Nodes[i]
		switch {
		case c.Placement == "explicit" && rn.machine == "":
			r.d.errorf(rn.loc, "node %s is on no machine: with placement: explicit every node needs machine: (one of %s), or set placement: auto", rn.name, strings.Join(names, ", "))
		case rn.wifiKind != "":
			r.d.errorf(rn.loc, "node %s: Wi-Fi nodes are not supported in a lab over several machines yet", rn.name)
		}
		for _, ifc := range n.Interfaces {
			if ifc.External != nil {
				r.d.errorf(rn.loc, "node %s: real adapters (external:) are not supported in a lab over several machines yet", rn.name)
				break
			}
		}
	}
	if r.d.failed() {
		r.refuseSchedules()
		return
	}
	var edges []WEdge
	for _, l := range r.spec.Links {
		w := unshapedWeight
		if p := l.Params; p != nil {
			rate := max(p.Dir(true).Rate, p.Dir(false).Rate)
			if rate > 0 {
				w = float64(rate)
			}
		}
		edges = append(edges, WEdge{A: r.byName[l.A.Node], B: r.byName[l.B.Node], W: w})
	}
	part := Partition(len(r.spec.Nodes), len(names), edges, pinned)
	if c.Placement == "explicit" {
		part = pinned
	}
	for i, n := range r.spec.Nodes {
		c.Nodes[n.Name] = names[part[i]]
	}
	for li, l := range r.spec.Links {
		ma, mb := c.Nodes[l.A.Node], c.Nodes[l.B.Node]
		if ma == mb {
			continue
		}
		c.Cuts = append(c.Cuts, Cut{Link: li, VNI: c.VNIBase + len(c.Cuts), A: ma, B: mb})
		mtu := defaultMTU
		if ifc := r.spec.Node(l.A.Node).iface(l.A.Iface); ifc != nil && ifc.MTU > 0 {
			mtu = ifc.MTU
		}
		var low []string
		need := mtu + VXLANOverhead
		for _, m := range []*Machine{c.Machine(ma), c.Machine(mb)} {
			if m.MTU > 0 && m.MTU < need {
				low = append(low, fmt.Sprintf("machine %s's is %d", m.Name, m.MTU))
			}
		}
		if len(low) > 0 {
			r.d.errorf(r.rawOf[li].loc, "link %s <-> %s crosses machines %s and %s: its MTU %d needs an underlay MTU of at least %d for VXLAN (+%d bytes), and %s: raise the underlay's mtu: to %d, or lower this link's mtu: to %d",
				l.A, l.B, ma, mb, mtu, need, VXLANOverhead, joinAnd(low), need, minMTU(c, ma, mb)-VXLANOverhead)
		}
	}
	if last := c.VNIBase + len(c.Cuts) - 1; len(c.Cuts) > 0 && last >= 1<<24 {
		r.d.errorf(rc.vniLoc, "vni_base %d leaves no room for %d tunnels: VNIs end at %d (use %d or less)", c.VNIBase, len(c.Cuts), 1<<24-1, 1<<24-len(c.Cuts))
	}
	r.refuseSchedules()
	for i, n := range r.spec.Nodes {
		if n.Kind == KindRoot {
			r.d.errorf(r.doc.nodes[i].loc, "%s is of kind root, the machine's own namespace, which a lab over several machines does not have: give it a namespace (kind: host), or bring the lab up on one machine", n.Name)
		}
	}
	r.spec.Cluster = c
}

// refuseSchedules: a schedule changes links at run time, which a lab over
// several machines cannot do yet.
func (r *resolver) refuseSchedules() {
	for _, s := range r.doc.schedules {
		r.d.errorf(s.loc, "schedule %s: schedules are not supported in a lab over several machines yet (a link's parameters are fixed at up there)", s.name)
	}
}

// minMTU is the smaller known underlay MTU of two machines.
func minMTU(c *Cluster, a, b string) int {
	ma, mb := c.Machine(a).MTU, c.Machine(b).MTU
	switch {
	case ma == 0:
		return mb
	case mb == 0:
		return ma
	}
	return min(ma, mb)
}

// iface returns the node's interface of that name, or nil.
func (n *Node) iface(name string) *Interface {
	for i := range n.Interfaces {
		if n.Interfaces[i].Name == name {
			return &n.Interfaces[i]
		}
	}
	return nil
}

func joinAnd(ss []string) string {
	switch len(ss) {
	case 0:
		return ""
	case 1:
		return ss[0]
	}
	out := ss[0]
	for _, s := range ss[1 : len(ss)-1] {
		out += ", " + s
	}
	return out + " and " + ss[len(ss)-1]
}
