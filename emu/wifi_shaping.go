package emu

// The wireless hops' shaping: a station's uplink on its egress, its
// downlink on the AP's egress towards it, set at deploy and at run time.

import (
	"fmt"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
)

// wirelessShaping records every station's hop and installs the shaping:
// uplinks on the stations' wireless egress, downlinks on the AP's wireless
// egress with one plan per station picked by its MAC
// (tc.ApplyPerDestination); netem, or TBF for rate-only hops on kernels
// without netem.
func (d *deployer) wirelessShaping(wnodes []*node) error {
	var hops []WiFiHop
	for _, n := range wnodes {
		st := n.spec.Station
		if st == nil || st.Adhoc != "" { // an ad hoc member: no hop to an AP
			continue
		}
		h := WiFiHop{Station: n.spec.Name, AP: st.AP}
		if st.Params != nil {
			up, dn := st.Params.Dir(true), st.Params.Dir(false)
			rtt, mtu := up.Delay+dn.Delay, findIface(n.spec, st.Iface).MTU
			h.Up, h.Down = toDir(up, rtt, mtu), toDir(dn, rtt, mtu)
		}
		hops = append(hops, h)
	}
	d.stMu.Lock()
	d.st.WiFiHops = hops
	d.stMu.Unlock()
	for _, h := range hops {
		li := hopIndex(d.spec, h.Station)
		if err := d.kindOf(li).shape(d, li); err != nil {
			return err
		}
	}
	return nil
}

func hasQueue(d tc.Dir) bool { return d.QueuePackets > 0 || d.QueueBytes > 0 }

// hopPlan plans one direction of a wireless hop for an interface of mtu
// (netem: the kernel has sch_netem, else TBF); nil for an unshaped
// direction.
func hopPlan(dir tc.Dir, mtu int, netem bool) (*tc.KernelPlan, error) {
	if dir.IsZero() && !hasQueue(dir) {
		return nil, nil
	}
	if err := dir.Validate(); err != nil {
		return nil, err
	}
	if netem {
		return tc.PlanKernel(dir, mtu)
	}
	return tc.PlanShaper(dir, mtu)
}

// applyUplink (re)installs a station's uplink on its wireless egress (none
// removes it).
func applyUplink(st *State, h WiFiHop, netem bool) error {
	n := st.Spec.Node(h.Station)
	ns, nh, name, err := openEnd(st, topo.Endpoint{Node: n.Name, Iface: n.Station.Iface})
	if err != nil {
		return fmt.Errorf("station %s: %w", n.Name, err)
	}
	defer ns.Close()
	defer nh.Close()
	link, err := nh.LinkByName(name)
	if err != nil {
		return fmt.Errorf("station %s: %w", n.Name, err)
	}
	kp, err := hopPlan(h.Up, link.Attrs().MTU, netem)
	if err != nil {
		return fmt.Errorf("station %s: uplink: %w", n.Name, err)
	}
	if kp == nil {
		kp = &tc.KernelPlan{}
	}
	if err := tc.ApplyKernel(ns, link, kp); err != nil {
		return fmt.Errorf("station %s: uplink: %w", n.Name, err)
	}
	return nil
}

// applyDownlinks (re)builds an AP's per-station downlink tree from the
// recorded hops.
func applyDownlinks(st *State, ap string, netem bool) error {
	a := st.Spec.Node(ap)
	ns, nh, name, err := openEnd(st, topo.Endpoint{Node: ap, Iface: a.AP.Iface})
	if err != nil {
		return fmt.Errorf("access point %s: %w", ap, err)
	}
	defer ns.Close()
	defer nh.Close()
	link, err := nh.LinkByName(name)
	if err != nil {
		return fmt.Errorf("access point %s: %w", ap, err)
	}
	var dests []tc.DestPlan
	for _, h := range st.WiFiHops {
		if h.AP != ap {
			continue
		}
		kp, err := hopPlan(h.Down, link.Attrs().MTU, netem)
		if err != nil {
			return fmt.Errorf("station %s: downlink: %w", h.Station, err)
		}
		if kp == nil {
			continue
		}
		sn := st.Spec.Node(h.Station)
		dests = append(dests, tc.DestPlan{MAC: parseMAC(findIface(sn, sn.Station.Iface).MAC), Plan: kp})
	}
	if err := tc.ApplyPerDestination(ns, link, dests); err != nil {
		return fmt.Errorf("access point %s: downlink shaping: %w", ap, err)
	}
	return nil
}

// FindWirelessHop resolves a wireless hop reference — the station
// ("sta1"), its interface ("sta1:sta1-wlan0") or station and AP ("sta1-ap1",
// "ap1-sta1") — to the station's name; ok is false when ref names none.
func FindWirelessHop(spec *topo.Spec, ref string) (string, bool) {
	for i := range spec.Nodes {
		n := &spec.Nodes[i]
		if n.Station == nil {
			continue
		}
		for _, sep := range []string{"-", ","} {
			if ref == n.Name+sep+n.Station.AP || ref == n.Station.AP+sep+n.Name {
				return n.Name, true
			}
		}
		if ref == n.Name || ref == n.Name+":"+n.Station.Iface {
			return n.Name, true
		}
	}
	return "", false
}

// SetWirelessHop changes a station's wireless hop in a running lab: dir is
// "a->b" (uplink), "b->a" (downlink) or "" for both; only what change sets
// is changed (SetLink on the hop's link index).
func SetWirelessHop(lab, station, dir string, change func(*tc.Dir)) (*WiFiHop, error) {
	st, err := ReadState(lab)
	if err != nil {
		return nil, err
	}
	li := hopIndex(st.Spec, station)
	if li < 0 {
		return nil, fmt.Errorf("lab %s has no wireless hop of station %q", lab, station)
	}
	ls, err := SetLink(lab, li, dir, change)
	if err != nil {
		return nil, err
	}
	return &WiFiHop{Station: station, AP: st.Spec.Node(station).Station.AP, Up: ls.AtoB, Down: ls.BtoA}, nil
}
