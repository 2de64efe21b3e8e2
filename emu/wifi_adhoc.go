package emu

// Ad hoc (IBSS) networks and 802.11s meshes on hwsim radios. The kernel
// runs both (wifi/join.go): a member's radio becomes an IBSS or mesh point
// interface before it comes up (createRadio), and joins its network once
// every radio exists; mac80211 then beacons, peers (an open mesh's peering
// manager) and, in a mesh, selects paths (HWMP) and forwards. Nothing is
// left running in userspace, so there is no daemon to supervise, and the
// radios go with the lab's namespaces as every other radio does. The
// engine backend's ad hoc networks are wifi_engine.go's.

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"golang.org/x/sys/unix"
)

// adhocIfType is the interface type of a member of network a.
func adhocIfType(a *topo.WiFiAdhoc) uint32 {
	if a.Mesh {
		return unix.NL80211_IFTYPE_MESH_POINT
	}
	return unix.NL80211_IFTYPE_ADHOC
}

// adhocJoinSpec is how a member of network a joins it: the network's
// channel, an IBSS at a fixed BSSID (one cell from the start, no merging).
func adhocJoinSpec(spec *topo.Spec, a *topo.WiFiAdhoc) wifi.JoinSpec {
	ch := a.Channel
	j := wifi.JoinSpec{Mesh: a.Mesh, ID: a.Name, FreqMHz: ch.FreqMHz, WidthMHz: ch.Width, NoHT: topo.LegacyMode(a.Mode)}
	if ch.Width > 20 {
		j.CenterFreq1MHz = topo.ChannelFreq(ch.Band, ch.CenterChannel)
	}
	if !a.Mesh {
		j.BSSID = wifi.AdhocBSSID(adhocNumber(spec, a.Name))
	}
	return j
}

// hwsimAdhocPreflight refuses, before anything is built, what the kernel's
// IBSS and mesh cannot be on hwsim radios.
func hwsimAdhocPreflight(spec *topo.Spec) []string {
	var errs []string
	for _, a := range spec.WiFiAdhoc {
		if a.Mode == topo.WiFiModeB {
			errs = append(errs, fmt.Sprintf("%s: ad hoc network %s is 802.11b: on hwsim radios mac80211's IBSS advertises every 2.4 GHz rate, OFDM included, so the cell would not be 802.11b only; use mode g, or the engine backend (wifi: {backend: engine}), whose medium keeps 802.11b", a.Pos, a.Name))
		}
	}
	return errs
}

// engineMeshRefusal refuses meshes when the lab would run on the engine.
func engineMeshRefusal(spec *topo.Spec) []string {
	for _, a := range spec.WiFiAdhoc {
		if a.Mesh {
			return []string{fmt.Sprintf("%s: mesh %s: this machine has no mac80211_hwsim (%v), so the lab would run on the engine backend: %s", a.Pos, a.Name, wifi.ProbeHwsim(), topo.MeshEngineRefusal)}
		}
	}
	return nil
}

// joinAdhocMembers makes every ad hoc and mesh member join its network and
// waits until each has (its interface's carrier: the IBSS joined or
// created, the mesh point started), then, as up waits for stations to
// associate, until each member has the members it hears as peers (the
// medium's links above the detection threshold; every member without a
// medium): an IBSS adds a peer when it hears its beacon, a mesh point
// once their peer link is established. A member out of everyone's range
// is joined all the same: it is alone in its cell. Peering that does not
// come within adhocPeerWait is logged, not fatal: a link at the edge of
// detection may never carry a beacon intact.
func (d *deployer) joinAdhocMembers(ctx context.Context, wnodes []*node) error {
	var members []*node
	for _, n := range wnodes {
		if n.spec.AdhocStation() {
			members = append(members, n)
		}
	}
	for _, n := range members {
		st := n.spec.Station
		a := d.spec.Adhoc(st.Adhoc)
		if err := wifi.Join(int(n.ns), st.Iface, adhocJoinSpec(d.spec, a)); err != nil {
			return fmt.Errorf("node %s: %w", n.spec.Name, err)
		}
	}
	deadline := time.Now().Add(WiFiTimeout())
	for _, n := range members {
		for {
			l, err := n.h.LinkByName(n.spec.Station.Iface)
			if err != nil {
				return fmt.Errorf("node %s: %w", n.spec.Name, err)
			}
			if l.Attrs().RawFlags&unix.IFF_LOWER_UP != 0 {
				d.log.Debug("wifi ready", "node", n.spec.Name, "what", "joined "+n.spec.Station.Adhoc)
				break
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("node %s: %s did not join %s within %v (EMUCTL_WIFI_TIMEOUT raises the limit)", n.spec.Name, n.spec.Station.Iface, n.spec.Station.Adhoc, WiFiTimeout())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	d.waitAdhocPeers(ctx, members)
	return nil
}

// adhocPeerWait bounds how long up waits for ad hoc and mesh peers.
const adhocPeerWait = 20 * time.Second

// waitAdhocPeers waits until each member has the members it hears as
// peers in the kernel (mesh: peer link ESTAB), at most adhocPeerWait.
func (d *deployer) waitAdhocPeers(ctx context.Context, members []*node) {
	var ms *wifi.MediumStats
	if d.st.Medium != nil {
		ms, _ = LabMediumStats(d.spec.Name)
	}
	mac := map[string]string{} // member → its interface's MAC (any member: one added at run time waits for those of up)
	for i := range d.spec.Nodes {
		if n := &d.spec.Nodes[i]; n.AdhocStation() {
			if ifc := findIface(n, n.Station.Iface); ifc != nil {
				mac[n.Name] = strings.ToLower(ifc.MAC)
			}
		}
	}
	want := map[*node][]string{}
	for _, n := range members {
		a := d.spec.Adhoc(n.spec.Station.Adhoc)
		if ms == nil {
			for _, m := range a.Members {
				if m != n.spec.Name {
					want[n] = append(want[n], m)
				}
			}
			continue
		}
		for _, p := range adhocPeers(d.spec, n.spec, a, ms) {
			if p.InRange {
				want[n] = append(want[n], p.Node)
			}
		}
	}
	t0 := time.Now()
	for {
		var missing []string
		for _, n := range members {
			peers, err := wifi.Stations(int(n.ns), n.spec.Station.Iface)
			if err != nil {
				missing = append(missing, n.spec.Name+": "+err.Error())
				continue
			}
			have := map[string]bool{}
			for _, p := range peers {
				if p.PlinkState == "" || p.PlinkState == "ESTAB" {
					have[p.MAC] = true
				}
			}
			for _, m := range want[n] {
				if !have[mac[m]] {
					missing = append(missing, n.spec.Name+" → "+m)
				}
			}
		}
		if len(missing) == 0 {
			d.log.Debug("ad hoc and mesh peers ready", "after", time.Since(t0))
			return
		}
		if ctx.Err() != nil || time.Since(t0) > adhocPeerWait {
			d.log.Warn("ad hoc and mesh members still without peers they hear", "after", time.Since(t0).Round(time.Millisecond), "missing", strings.Join(missing, ", "))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// setAdhocIfType turns a member's new radio interface (down) into an IBSS
// or mesh point interface.
func setAdhocIfType(spec *topo.Spec, n *node, iface string) error {
	a := spec.Adhoc(n.spec.Station.Adhoc)
	if a == nil {
		return fmt.Errorf("node %s: no network %s", n.spec.Name, n.spec.Station.Adhoc)
	}
	if err := wifi.SetIfType(int(n.ns), iface, adhocIfType(a)); err != nil {
		return fmt.Errorf("node %s: %w", n.spec.Name, err)
	}
	return nil
}

// adhocRow starts an ad hoc or mesh member's row of wifi show on hwsim:
// its network, and no daemon (WiFiStatus then reads the interface and the
// kernel's peers as for any radio).
func adhocRow(st *State, n *topo.Node, s *WiFiNodeStatus) {
	a := st.Spec.Adhoc(n.Station.Adhoc)
	s.Adhoc, s.SSID, s.Daemon = a.Name, a.Name, "none (the kernel's IBSS)"
	if a.Mesh {
		s.Mesh, s.Daemon = true, "none (the kernel's mesh)"
	} else {
		bssid := wifi.AdhocBSSID(adhocNumber(st.Spec, a.Name))
		s.BSSID = net.HardwareAddr(bssid[:]).String()
	}
}

// adhocRowJoined ends the row, its interface read: joined once the
// interface has its channel, a mesh point's paths, and its reach to the
// other members from the medium.
func adhocRowJoined(st *State, n *topo.Node, s *WiFiNodeStatus, fd int, ms *wifi.MediumStats) {
	a := st.Spec.Adhoc(n.Station.Adhoc)
	if s.FreqMHz != 0 {
		s.State, s.Running = "IBSS", true
		if a.Mesh {
			s.State = "MESH"
		}
	}
	if a.Mesh {
		if paths, err := wifi.MeshPaths(fd, s.Iface); err == nil {
			s.MeshPaths = paths
		} else if s.Error == "" {
			s.Error = err.Error()
		}
	}
	s.AdhocPeers = adhocPeers(st.Spec, n, a, ms)
	if n.Station.Rate == "" {
		// mac80211's rate control picks the rates here, not the
		// medium's ideal rate: each kernel peer's tx_rate says which
		for i := range s.AdhocPeers {
			s.AdhocPeers[i].Rate = ""
		}
	}
}
