package emu

// Wi-Fi on hwsim: the preflight, the deploy phase and the radios (this
// file); hostapd and wpa_supplicant inside the nodes (wifi_daemons.go); the
// wireless hops' shaping (wifi_shaping.go); run-time status
// (wifi_status.go); doctor (wifi_doctor.go). The userspace medium's
// backend is wifi_engine.go and wifi_medium.go.
//
// Every radio of a lab is created from the lab's own medium namespace
// "<lab>._w" (marked like every lab namespace), so
//   - the lab's radios share one hwsim netgroup and hear each other, and
//     hear no radio of another lab or of the host;
//   - a radio moved into a node namespace is destroyed by the kernel when
//     that namespace goes (hwsim returns to init_net only radios created
//     there): down, clean and a crash leave no radio behind.
// Radios are named "emu.<lab>.<node>" (the wiphy name) and never touched by
// name alone: deleting the lab's namespaces deletes them.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// wifiNetns is the lab's Wi-Fi medium namespace; node names start with a
// letter, so it never collides with a node.
func wifiNetns(lab string) string { return lab + "._w" }

// radioName is the wiphy name of a node's radio in one deployment
// ("emu.<lab>.<node>.<deploy>", at most 64 bytes). The deployment tag
// keeps it unique while the radios of a lab just torn down are still
// being destroyed (the kernel frees namespaces asynchronously): hwsim
// silently names a radio phyN when the requested name is taken.
func radioName(lab, node, deploy string) string {
	s := "emu." + lab + "." + node + "." + deploy
	if len(s) > 64 { // keep it unique: a hash of the whole name at the end
		h := fnv.New32a()
		h.Write([]byte(s))
		s = fmt.Sprintf("%s-%08x", s[:55], h.Sum32())
	}
	return s
}

// deployTag is a short tag for one deployment of a lab (base 36 of its
// creation time in ms, last 6 digits).
func deployTag(created time.Time) string {
	v := created.UnixMilli() % (36 * 36 * 36 * 36 * 36 * 36)
	return fmt.Sprintf("%06s", strconv.FormatInt(v, 36))
}

// WiFiTimeout bounds how long up waits for access points to start and
// stations to associate (EMUCTL_WIFI_TIMEOUT overrides it, e.g. 3m).
func WiFiTimeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("EMUCTL_WIFI_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return 90 * time.Second
}

// wifiPreflight checks, before anything changes, that this machine can run
// the lab's Wi-Fi: the hwsim family, hostapd and wpa_supplicant able to do
// each AP's mode, MLO where asked, and netem where a wireless hop is shaped.
func wifiPreflight(spec *topo.Spec) []string {
	if !spec.HasWiFi() {
		return nil
	}
	var errs []string
	engine := wifiBackendFor(spec) == WiFiEngine
	if m := spec.WiFiMedium; engine && !m.Enabled {
		errs = append(errs, fmt.Sprintf("%s: medium: false is mac80211_hwsim's instant medium, and this kernel has no mac80211_hwsim (%v): drop medium: false to run on emuctl's engine medium", cmp.Or(m.Pos, spec.Source), wifi.ProbeHwsim()))
	}
	if m := spec.WiFiMedium; !engine || m.Backend == topo.WiFiBackendHwsim {
		if err := wifi.ProbeHwsim(); err != nil {
			at := ""
			if m.BackendPos != "" {
				at = m.BackendPos + ": wifi.backend: hwsim: "
			}
			errs = append(errs, fmt.Sprintf("%sWi-Fi nodes need mac80211_hwsim: %v (load it with `modprobe mac80211_hwsim radios=0`; emuctl creates the radios itself; or wifi: {backend: engine} for emuctl's medium over veth pairs)", at, err))
		}
	}
	if !engine {
		errs = append(errs, regdomPreflight(spec)...) // wifi_regdom.go
		if mlo := mloAP(spec); mlo != nil && spec.WiFiMedium.Enabled && hwsimMonitorUp() {
			errs = append(errs, fmt.Sprintf("%s: access point %s is multi-link and the lab has a medium, while hwsim's monitor interface hwsim0 is up: mac80211_hwsim then reports every acknowledged frame of a multi-link radio to hwsim0 with a NULL channel (mac80211_hwsim_monitor_ack in hwsim_tx_info_frame_received_nl) and the kernel crashes; bring hwsim0 down (`emuctl capture medium` records the lab's air instead), or set wifi: {medium: false}", mlo.AP.Pos, mlo.Name))
		}
	}
	if engine {
		errs = append(errs, engineModeMix(spec)...)
		errs = append(errs, engineMeshRefusal(spec)...) // wifi_adhoc.go
	} else {
		errs = append(errs, hwsimAdhocPreflight(spec)...)
	}
	tools := wifiTools(spec)
	caps := tc.Probe()
	for i := range spec.Nodes {
		n := &spec.Nodes[i]
		switch {
		case engine && n.AP != nil && n.AP.MLO():
			errs = append(errs, fmt.Sprintf("%s: access point %s is multi-link: the engine backend models single-link radios, and this kernel has no mac80211_hwsim for multi-link radios", n.AP.Pos, n.Name))
		case engine:
			// no radios, no daemons: only the hop shaping below
		case n.AP != nil:
			if err := tools.CheckAP(n.AP); err != nil {
				errs = append(errs, fmt.Sprintf("%s: access point %s: %s", n.AP.Pos, n.Name, toolNeeds(err)))
			}
			if n.AP.MLO() {
				if err := wifi.ProbeHwsimMLO(); err != nil {
					errs = append(errs, fmt.Sprintf("%s: access point %s: multi-link needs hwsim MLO support: %v", n.AP.Pos, n.Name, err))
				}
			}
		}
		if n.Station != nil && n.Station.Roaming != nil && n.Station.Roaming.Association == topo.WiFiAssocLLF && !engine {
			errs = append(errs, fmt.Sprintf("%s: station %s: roaming: {association: llf} (least loaded first) is the engine backend's medium's decision; wpa_supplicant picks by signal here (drop association:, or wifi: {backend: engine})", n.Station.Pos, n.Name))
		}
		if n.Station != nil {
			ap := spec.Node(n.Station.AP)
			if ap != nil && ap.AP != nil && !engine && n.Station.Adhoc == "" {
				if err := tools.CheckStation(n.Station, ap.AP); err != nil {
					errs = append(errs, fmt.Sprintf("%s: station %s: %s", n.Station.Pos, n.Name, toolNeeds(err)))
				}
			}
			if p := n.Station.Params; p != nil {
				for _, d := range []topo.LinkParams{p.Dir(true), p.Dir(false)} {
					if needsNetem(toDir(d, 0, 1500)) && !caps.Netem {
						errs = append(errs, fmt.Sprintf("%s: station %s: shaping a wireless hop with delay or loss needs sch_netem (%s)", n.Station.Pos, n.Name, caps.Reasons["netem"]))
						break
					}
				}
			}
		}
	}
	return errs
}

// engineModeMix refuses 802.11b beside another mode on 2.4 GHz in an
// engine lab: the engine's medium times each band's channels one way
// (slot, contention window, SIFS), and 802.11b's 20 µs slots and CWmin 31
// are not 802.11g/n/ax's.
func engineModeMix(spec *topo.Spec) []string {
	var b, other *topo.Node
	for i := range spec.Nodes {
		n := &spec.Nodes[i]
		if n.AP == nil || n.AP.Channel.Band != topo.Band24 {
			continue
		}
		if n.AP.Mode == topo.WiFiModeB {
			b = cmp.Or(b, n)
		} else {
			other = cmp.Or(other, n)
		}
	}
	if b == nil || other == nil {
		return nil
	}
	return []string{fmt.Sprintf("%s: access point %s is 802.11b and %s is 802.11%s on 2.4 GHz as well: the engine backend times one band's channels one way (802.11b: 20 µs slots, CWmin 31), so one lab cannot have both; put them in two labs, or use mode g for both", b.AP.Pos, b.Name, other.Name, other.AP.Mode)}
}

// mloAP is the lab's first multi-link access point (nil: none).
func mloAP(spec *topo.Spec) *topo.Node {
	for i := range spec.Nodes {
		if n := &spec.Nodes[i]; n.AP != nil && n.AP.MLO() {
			return n
		}
	}
	return nil
}

// hwsimMonitorUp reports whether mac80211_hwsim's monitor interface
// (hwsim0, in the root namespace) is up.
func hwsimMonitorUp() bool {
	b, err := os.ReadFile("/sys/class/net/hwsim0/flags")
	if err != nil {
		return false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x")), 16, 32)
	return err == nil && v&unix.IFF_UP != 0
}

// wifiTools probes the daemons a lab runs: those its file names (wifi:
// {hostapd: ..., wpa_supplicant: ...}), else EMUCTL_HOSTAPD /
// EMUCTL_WPA_SUPPLICANT, else the ones in PATH.
func wifiTools(spec *topo.Spec) wifi.Tools {
	var p wifi.ToolPaths
	if w := spec.WiFiDaemons; w != nil {
		p = wifi.ToolPaths{Hostapd: w.Hostapd, HostapdFrom: w.HostapdPos + " wifi.hostapd",
			WpaSupplicant: w.WpaSupplicant, WpaSupplicantFrom: w.WpaSupplicantPos + " wifi.wpa_supplicant"}
	}
	return wifi.ProbeToolsFor(p)
}

// wifiSetup is the deploy phase for Wi-Fi nodes: radios, interfaces,
// daemons, association, wireless shaping.
func (d *deployer) wifiSetup(ctx context.Context) error {
	if !d.spec.HasWiFi() {
		return nil
	}
	mediumName := wifiNetns(d.spec.Name)
	mh, mnh, err := createNamedNetns(mediumName, d.marker, d.anchor)
	if err != nil {
		return fmt.Errorf("wifi medium namespace: %w", err)
	}
	mnh.Close()
	defer mh.Close()
	d.stMu.Lock()
	d.st.Namespaces = append(d.st.Namespaces, mediumName)
	d.stMu.Unlock()
	if err := d.save(); err != nil {
		return err
	}
	var wnodes []*node
	for _, n := range d.nodeList() {
		if n.spec.AP != nil || n.spec.Station != nil {
			wnodes = append(wnodes, n)
		}
	}
	if wifiBackendFor(d.spec) == WiFiEngine {
		return d.wifiEngineSetup(ctx, mediumName, mh, wnodes)
	}
	hw, err := wifi.DialHwsim(int(mh))
	if err != nil {
		return fmt.Errorf("wifi: %w", err)
	}
	defer hw.Close()

	// The medium first: it must be registered before any radio exists.
	if err := d.startMediumForLab(ctx, mediumName, wnodes); err != nil {
		return err
	}
	perms := map[string][6]byte{}
	if d.st.Medium != nil {
		for _, r := range d.st.Medium.Radios {
			perms[r.Node] = r.Perm
		}
	}
	// Radios one at a time: the medium namespace then holds exactly the
	// new radio's interface, which moves with its wiphy.
	for _, n := range wnodes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := with(func() error { return d.createRadio(hw, int(mh), n, perms[n.spec.Name]) }, n); err != nil {
			return err
		}
	}
	if err := d.save(); err != nil {
		return err
	}
	// The lab's supervisor keeps the daemons (supervisor_daemons.go).
	if _, err := d.ensureSupervisor(ctx); err != nil {
		return fmt.Errorf("wifi: %w", err)
	}
	// Access points first, then stations, then wait for every station.
	tools := wifiTools(d.spec)
	for _, n := range wnodes {
		if n.spec.AP != nil {
			if err := d.startHostapd(n, tools.Hostapd); err != nil {
				return err
			}
		}
	}
	if err := d.save(); err != nil {
		return err
	}
	if err := d.waitWiFi(ctx, wnodes, true); err != nil {
		return err
	}
	if err := d.joinAdhocMembers(ctx, wnodes); err != nil { // wifi_adhoc.go
		return err
	}
	for _, n := range wnodes {
		if n.spec.Station != nil && !n.spec.AdhocStation() {
			if err := d.startWpaSupplicant(n, tools.WpaSupplicant); err != nil {
				return err
			}
		}
	}
	if err := d.save(); err != nil {
		return err
	}
	if err := d.waitWiFi(ctx, wnodes, false); err != nil {
		return err
	}
	return d.wirelessShaping(wnodes)
}

// wifiDir is where a node's daemon configs, control sockets and logs live.
func wifiDir(lab, node string) string { return filepath.Join(stateDir(lab), "wifi", node) }

// createRadio makes the node's radio in the medium namespace, moves it into
// the node and prepares its interface (name, MAC, marker, MTU, addresses,
// tx power).
func (d *deployer) createRadio(hw *wifi.Hwsim, mediumFd int, n *node, perm [6]byte) error {
	name := radioName(d.spec.Name, n.spec.Name, deployTag(d.st.Created))
	// One channel even for a multi-link radio: a lone AP MLD or station
	// MLD puts each link on its own channel context all the same (mac80211
	// checks interface combinations only between interfaces, and the
	// radio has one), while a radio with more than one channel anywhere on
	// the host makes the kernel refuse every medium's registration
	// (hwsim_register_received_nl: EOPNOTSUPP) — this lab's and others'.
	cfg := wifi.RadioConfig{Name: name, Channels: 1, PermAddr: perm}
	iface, txp := "", 0
	if ap := n.spec.AP; ap != nil {
		iface, txp = ap.Iface, ap.TxPowerMBm
		cfg.MLO = ap.MLO()
	} else {
		st := n.spec.Station
		iface, txp = st.Iface, st.TxPowerMBm
		cfg.MLO = st.MLO
	}
	if _, err := hw.NewRadio(cfg); err != nil {
		return fmt.Errorf("node %s: create radio %s: %w", n.spec.Name, name, err)
	}
	w, err := wifi.WiphyByName(mediumFd, name)
	if err != nil {
		return fmt.Errorf("node %s: radio %s: %w", n.spec.Name, name, err)
	}
	if cfg.MLO && !w.MLO {
		return fmt.Errorf("node %s: this kernel's mac80211_hwsim created radio %s without multi-link support (it predates HWSIM_ATTR_MLO_SUPPORT); MLO needs Linux ≥ 6.1 built with it", n.spec.Name, name)
	}
	if err := wifi.SetWiphyNetns(mediumFd, w.Index, int(n.ns)); err != nil {
		return fmt.Errorf("node %s: move radio %s into %s: %w", n.spec.Name, name, n.nsName, err)
	}
	// The radio's interface is the one in the node that emuctl did not make.
	links, err := n.h.LinkList()
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return fmt.Errorf("node %s: %w", n.spec.Name, err)
	}
	var l netlink.Link
	for _, x := range links {
		if x.Type() == "device" && x.Attrs().Name != "lo" && findIface(n.spec, x.Attrs().Name) == nil {
			if l != nil {
				return fmt.Errorf("node %s: more than one unknown interface after moving radio %s (%s, %s)", n.spec.Name, name, l.Attrs().Name, x.Attrs().Name)
			}
			l = x
		}
	}
	if l == nil {
		return fmt.Errorf("node %s: radio %s has no interface in %s after the move", n.spec.Name, name, n.nsName)
	}
	ifc := findIface(n.spec, iface)
	if err := n.h.LinkSetDown(l); err != nil {
		return fmt.Errorf("node %s: %w", n.spec.Name, err)
	}
	if err := n.h.LinkSetName(l, iface); err != nil {
		return fmt.Errorf("node %s: rename %s to %s: %w", n.spec.Name, l.Attrs().Name, iface, err)
	}
	if err := n.h.LinkSetAlias(l, d.marker); err != nil {
		return fmt.Errorf("node %s: %s: %w", n.spec.Name, iface, err)
	}
	if mac := parseMAC(ifc.MAC); mac != nil {
		if err := n.h.LinkSetHardwareAddr(l, mac); err != nil {
			return fmt.Errorf("node %s: %s: set MAC: %w", n.spec.Name, iface, err)
		}
	}
	if ifc.MTU > 0 && ifc.MTU != l.Attrs().MTU {
		if err := n.h.LinkSetMTU(l, ifc.MTU); err != nil {
			return fmt.Errorf("node %s: %s: MTU %d: %w", n.spec.Name, iface, ifc.MTU, err)
		}
	}
	for _, a := range ifc.Addrs {
		addr := &netlink.Addr{IPNet: &net.IPNet{IP: a.Addr().AsSlice(), Mask: net.CIDRMask(a.Bits(), a.Addr().BitLen())}}
		if err := n.h.AddrAdd(l, addr); err != nil {
			return fmt.Errorf("node %s: %s: address %s: %w", n.spec.Name, iface, a, err)
		}
	}
	n.setIndex(iface, l.Attrs().Index)
	if n.spec.AdhocStation() {
		// an ad hoc or mesh member: its interface's type, while down
		// (it joins once every radio exists: joinAdhocMembers)
		if err := setAdhocIfType(d.spec, n, iface); err != nil {
			return err
		}
	}
	if n.spec.Station != nil {
		// wpa_supplicant brings a station's interface up itself; up now so
		// routes through it can be installed.
		if err := n.h.LinkSetUp(l); err != nil {
			return fmt.Errorf("node %s: %s up: %w", n.spec.Name, iface, err)
		}
	}
	if txp > 0 {
		if err := wifi.SetTxPower(int(n.ns), iface, txp); err != nil {
			return fmt.Errorf("node %s: %s: tx power %d mBm: %w", n.spec.Name, iface, txp, err)
		}
	}
	d.log.Debug("radio created", "node", n.spec.Name, "radio", name, "wiphy", w.Index, "iface", iface)
	return nil
}
