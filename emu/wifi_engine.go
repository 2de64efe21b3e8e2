package emu

import (
	"context"
	"fmt"
	"net"
	"path/filepath"

	"github.com/emuctl/emuctl/internal/sysctl"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// The engine Wi-Fi backend (wifi.EtherMedium): on a kernel without
// mac80211_hwsim each access point and station gets a veth pair instead
// of a radio — <node>-wlan0 in the node, port r<i> in the lab's medium
// namespace <lab>._w — and the supervisor's medium carries the frames
// between the ports as 802.11 data frames. No hostapd or wpa_supplicant:
// stations are associated from the start.

// Wi-Fi backends as decided for a lab (MediumState.Backend).
const (
	WiFiHwsim  = "hwsim"
	WiFiEngine = "engine"
)

// wifiBackendFor decides a Wi-Fi lab's backend: the one the file pins, or
// hwsim where the kernel has mac80211_hwsim and the engine elsewhere.
func wifiBackendFor(spec *topo.Spec) string {
	m := spec.WiFiMedium
	if m == nil {
		return ""
	}
	switch m.Backend {
	case topo.WiFiBackendHwsim:
		return WiFiHwsim
	case topo.WiFiBackendEngine:
		return WiFiEngine
	}
	if wifi.ProbeHwsim() == nil {
		return WiFiHwsim
	}
	return WiFiEngine
}

// enginePort is the name of radio i's port in the medium namespace.
func enginePort(i int) string { return fmt.Sprintf("r%d", i) }

// wifiEngineSetup is the deploy phase for Wi-Fi nodes on the engine
// backend: ports, the medium (recorded, then served by the supervisor),
// wireless shaping.
func (d *deployer) wifiEngineSetup(ctx context.Context, mediumName string, mh netns.NsHandle, wnodes []*node) error {
	// The medium namespace's own stack must never send out of a port
	// (the frame would reach the node without crossing the medium): no
	// IPv6 on ports created from now on, and they get no addresses.
	if err := do(mh, func() error {
		for _, k := range []string{"net.ipv6.conf.default.disable_ipv6", "net.ipv6.conf.all.disable_ipv6"} {
			if sysctl.Exists(k) {
				if err := sysctl.Write(k, "1"); err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("wifi medium namespace: %w", err)
	}
	mnh, err := netlink.NewHandleAt(mh)
	if err != nil {
		return err
	}
	defer mnh.Close()
	ifindex := make([]int, len(wnodes))
	for i, n := range wnodes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := with(func() error {
			idx, err := d.createEnginePort(mh, mnh, n, i)
			ifindex[i] = idx
			return err
		}, n); err != nil {
			return err
		}
	}
	radios := d.mediumRadios(wnodes)
	for i, n := range wnodes {
		r := &radios[i]
		r.Port, r.AP = enginePort(i), -1
		ap := n.spec.AP
		if st := n.spec.Station; st != nil && st.Adhoc != "" {
			r.Adhoc, ap = adhocNumber(d.spec, st.Adhoc), d.spec.Adhoc(st.Adhoc).BSS()
		} else if st != nil {
			for j, m := range wnodes {
				if m.spec.Name == st.AP {
					r.AP = j
				}
			}
			ap = d.spec.Node(st.AP).AP
		}
		engineBSS(r, n.spec, ap)
	}
	essRadios(d.spec, wnodes, radios)
	d.stMu.Lock()
	d.st.Medium = &MediumState{Backend: WiFiEngine, Netns: mediumName, Radios: radios, Spec: *d.spec.WiFiMedium}
	d.stMu.Unlock()
	if err := d.serveMedium(ctx); err != nil {
		return err
	}
	return d.wirelessShaping(wnodes)
}

// engineBSS gives an engine radio its address on the air (its node's
// wireless interface's MAC) and its BSS's channel and framing: ap's
// mode, channel, QoS, preamble and security overhead.
func engineBSS(r *wifi.MediumRadio, n *topo.Node, ap *topo.WiFiAP) {
	if ifc := findIface(n, wirelessIface(n)); ifc != nil {
		if mac := parseMAC(ifc.MAC); len(mac) == 6 {
			r.MAC = [6]byte(mac)
		}
	}
	r.Mode, r.FreqMHz, r.WidthMHz = ap.Mode, ap.Channel.FreqMHz, ap.Channel.Width
	r.QoS = !topo.LegacyMode(ap.Mode)
	r.ShortPreamble = ap.ShortPreamble
	if ap.Security != topo.WiFiOpen {
		r.CryptoBytes = 16 // CCMP header (8) and MIC (8)
	}
}

// essRadios prepares the stations of networks of several access points
// to roam (wifi/ether_roam.go): each one's access points by radio, its
// hysteresis and time off the air (the configured one, or the airtime
// of a reassociation's exchange plus its scan time), and the access
// point it starts on: the one it hears best where it stands (recorded as
// its AP in the lab's topology).
func essRadios(spec *topo.Spec, wnodes []*node, radios []wifi.MediumRadio) {
	cfg := wifi.MediumSettings(*spec.WiFiMedium)
	cfg.Radios = radios
	// the stations each AP has: those that stay with theirs, then the
	// roaming ones as they choose, in radio order (llf counts them)
	load := map[int]int{}
	for i, n := range wnodes {
		if st := n.spec.Station; st != nil && len(st.ESS) < 2 {
			load[radios[i].AP]++
		}
	}
	for i, n := range wnodes {
		st := n.spec.Station
		if st == nil || len(st.ESS) < 2 {
			continue
		}
		r := &radios[i] // its network's radios: mediumRadios
		best := r.AP
		llf := st.Roaming.Association == topo.WiFiAssocLLF
		if llf {
			best = wifi.LeastLoadedAP(&cfg, i, load)
		} else {
			for _, j := range r.ESS {
				if cfg.Link(j, i).SNRdB > cfg.Link(best, i).SNRdB {
					best = j
				}
			}
		}
		load[best]++
		r.AP, r.FreqMHz, r.WidthMHz = best, radios[best].FreqMHz, radios[best].WidthMHz
		st.AP = wnodes[best].spec.Name
		off := st.Roaming.OffAir
		if off == 0 {
			off = wifi.OffAirTime(r.Mode, r.FreqMHz, r.CryptoBytes > 0, st.Roaming.Scan)
		}
		r.Roam = &wifi.Roaming{HysteresisDB: st.Roaming.HysteresisDB, OffAir: off, LeastLoaded: llf}
	}
}

// wirelessIface is the wireless interface of an AP or station.
func wirelessIface(n *topo.Node) string {
	if n.AP != nil {
		return n.AP.Iface
	}
	return n.Station.Iface
}

// createEnginePort makes node n's wireless interface: a veth pair with
// the node's end named, addressed, marked and (on a bridging AP)
// enslaved like a wired link's, and port r<i> in the medium namespace. It
// returns the port's ifindex.
func (d *deployer) createEnginePort(mh netns.NsHandle, mnh *netlink.Handle, n *node, i int) (int, error) {
	ifc := findIface(n.spec, wirelessIface(n.spec))
	if ifc == nil {
		return 0, fmt.Errorf("node %s: no wireless interface in the spec", n.spec.Name)
	}
	la := netlink.NewLinkAttrs()
	la.Name = ifc.Name
	la.Alias = d.marker
	la.HardwareAddr = parseMAC(ifc.MAC)
	la.Index = 3*vethIndexBase + i
	if ifc.MTU > 0 {
		la.MTU = ifc.MTU
	}
	if n.bridge != 0 {
		la.MasterIndex = n.bridge
	}
	v := netlink.NewVeth(la)
	v.PeerName = enginePort(i)
	v.PeerNamespace = netlink.NsFd(int(mh))
	if ifc.MTU > 0 {
		v.PeerMTU = uint32(ifc.MTU)
	}
	if err := n.h.LinkAdd(v); err != nil {
		return 0, fmt.Errorf("node %s: create %s: %w", n.spec.Name, ifc.Name, err)
	}
	if err := d.finishEnd(n, ifc, true); err != nil {
		return 0, err
	}
	l, err := n.h.LinkByName(ifc.Name)
	if err != nil {
		return 0, err
	}
	// The node's stack hands the "radio" one MTU-sized frame at a time,
	// as it does a mac80211 device (no TSO there either).
	if err := tc.SetGSOLimits(n.h, l); err != nil {
		return 0, fmt.Errorf("node %s: %w", n.spec.Name, err)
	}
	p, err := mnh.LinkByName(enginePort(i))
	if err != nil {
		return 0, fmt.Errorf("node %s: port %s: %w", n.spec.Name, enginePort(i), err)
	}
	if err := mnh.LinkSetAlias(p, d.marker); err != nil {
		return 0, err
	}
	if err := mnh.LinkSetUp(p); err != nil {
		return 0, err
	}
	d.log.Debug("engine port created", "node", n.spec.Name, "iface", ifc.Name, "port", enginePort(i))
	return p.Attrs().Index, nil
}

// serveEtherMedium opens the engine medium on the lab's ports (inside
// the medium namespace) and runs it until ctx ends.
func serveEtherMedium(ctx context.Context, ms *MediumState, started chan<- error) (*wifi.EtherMedium, <-chan error) {
	done := make(chan error, 1)
	h, err := netns.GetFromPath(filepath.Join(NetnsDir, ms.Netns))
	if err != nil {
		started <- err
		return nil, done
	}
	defer h.Close()
	var srv *wifi.EtherMedium
	err = do(h, func() error {
		ifindex := make([]int, len(ms.Radios))
		for i, r := range ms.Radios {
			if r.Gone { // removed while the lab ran: no port
				ifindex[i] = -1
				continue
			}
			ifc, err := net.InterfaceByName(r.Port)
			if err != nil {
				return fmt.Errorf("port %s of %s: %w", r.Port, r.Node, err)
			}
			ifindex[i] = ifc.Index
		}
		var err error
		srv, err = wifi.NewEtherMedium(mediumConfig(ms), ifindex)
		return err
	})
	if err != nil {
		started <- err
		return nil, done
	}
	started <- nil
	runMedium(ctx, srv, nil, done)
	return srv, done
}
