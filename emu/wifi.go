package emu

// Wi-Fi: mac80211_hwsim radios for access points and stations, hostapd and
// wpa_supplicant inside the nodes, and the wireless hops' shaping.
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
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/vishvananda/netlink"
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
	tools := wifi.ProbeTools()
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
		if n.Station != nil {
			ap := spec.Node(n.Station.AP)
			if ap != nil && ap.AP != nil && !engine {
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
	// Access points first, then stations, then wait for every station.
	for _, n := range wnodes {
		if n.spec.AP != nil {
			if err := d.startHostapd(n); err != nil {
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
	for _, n := range wnodes {
		if n.spec.Station != nil {
			if err := d.startWpaSupplicant(n); err != nil {
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
	cfg := wifi.RadioConfig{Name: name, Channels: 1, PermAddr: perm}
	iface, txp := "", 0
	if ap := n.spec.AP; ap != nil {
		iface, txp = ap.Iface, ap.TxPowerMBm
		if ap.MLO() {
			cfg.Channels, cfg.MLO = uint32(len(ap.Links)), true
		}
	} else {
		st := n.spec.Station
		iface, txp = st.Iface, st.TxPowerMBm
		if st.MLO {
			ap := d.spec.Node(st.AP).AP
			cfg.Channels, cfg.MLO = uint32(len(ap.Links)), true
		}
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

// startDaemon starts argv inside the node under the daemon keeper
// (respawn.go: restarted when it exits, up to a burst) with its output in
// logPath, and records the keeper, so down stops both.
func (d *deployer) startDaemon(n *node, what string, argv []string, logPath string) error {
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd, err := Command(d.spec.Name, n.spec.Name, respawnArgv(argv))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr.Setsid = true
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("node %s: start %s: %w", n.spec.Name, what, err)
	}
	st, _ := procStart(cmd.Process.Pid)
	d.stMu.Lock()
	d.st.Procs = append(d.st.Procs, Proc{Node: n.spec.Name, PID: cmd.Process.Pid, Start: st, Command: strings.Join(argv, " "), Log: logPath})
	d.stMu.Unlock()
	go cmd.Wait() // reap; liveness is checked by pid
	d.log.Debug("daemon started", "node", n.spec.Name, "what", what, "pid", cmd.Process.Pid)
	return nil
}

func (d *deployer) startHostapd(n *node) error {
	dir := wifiDir(d.spec.Name, n.spec.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// one file per BSS: a multi-link AP has one per link, all given to
	// one hostapd
	files, err := wifi.HostapdConfigs(n.spec.AP, filepath.Join(dir, "ctrl"))
	if err != nil {
		return fmt.Errorf("access point %s: %w", n.spec.Name, err)
	}
	argv := []string{wifi.HostapdPath()}
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		if err := os.WriteFile(p, f.Data, 0o600); err != nil {
			return err
		}
		argv = append(argv, p)
	}
	return d.startDaemon(n, "hostapd", argv, filepath.Join(dir, "hostapd.log"))
}

// ctrlPath is the control socket of a node's daemon: the station's, the
// AP's, or for a multi-link AP its first link's.
func ctrlPath(lab string, n *topo.Node) string {
	dir := filepath.Join(wifiDir(lab, n.Name), "ctrl")
	if n.Station != nil {
		return filepath.Join(dir, n.Station.Iface)
	}
	if n.AP.MLO() {
		if p, err := wifi.FindCtrlSocket(filepath.Join(dir, "link0"), n.AP.Iface, 0); err == nil {
			return p
		}
		return filepath.Join(dir, "link0", n.AP.Iface)
	}
	return filepath.Join(dir, n.AP.Iface)
}

func (d *deployer) startWpaSupplicant(n *node) error {
	st := n.spec.Station
	dir := wifiDir(d.spec.Name, n.spec.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ap := d.spec.Node(st.AP).AP
	conf, err := wifi.WpaSupplicantConfig(st, filepath.Join(dir, "ctrl"), wifi.APFreqs(ap))
	if err != nil {
		return fmt.Errorf("station %s: %w", n.spec.Name, err)
	}
	confPath := filepath.Join(dir, "wpa_supplicant.conf")
	if err := os.WriteFile(confPath, conf, 0o600); err != nil {
		return err
	}
	return d.startDaemon(n, "wpa_supplicant", []string{wifi.WpaSupplicantPath(), "-D", "nl80211", "-i", st.Iface, "-c", confPath},
		filepath.Join(dir, "wpa_supplicant.log"))
}

// daemonProc finds the recorded daemon of a node.
func (d *deployer) daemonProc(node, bin string) (Proc, bool) {
	d.stMu.Lock()
	defer d.stMu.Unlock()
	for _, p := range d.st.Procs {
		if p.Node == node && strings.Contains(p.Command, bin) {
			return p, true
		}
	}
	return Proc{}, false
}

// daemonFailure describes a daemon that exited or did not get ready, with
// its last log lines (the log itself goes with the lab's state dir when
// the deploy rolls back).
func daemonFailure(what, node string, p Proc, problem string) error {
	tail, _ := os.ReadFile(p.Log)
	lines := strings.TrimSpace(lastLines(string(tail), 12))
	if lines == "" {
		return fmt.Errorf("%s %s: %s; %s had logged nothing yet", what, node, problem, what)
	}
	return fmt.Errorf("%s %s: %s; its last log lines:\n%s", what, node, problem, indent(lines))
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// waitWiFi waits until every hostapd reports state=ENABLED (aps) or every
// wpa_supplicant wpa_state=COMPLETED.
func (d *deployer) waitWiFi(ctx context.Context, wnodes []*node, aps bool) error {
	deadline := time.Now().Add(WiFiTimeout())
	pending := map[string]*node{}
	for _, n := range wnodes {
		if (n.spec.AP != nil) == aps {
			pending[n.spec.Name] = n
		}
	}
	t0 := time.Now()
	for len(pending) > 0 {
		for name, n := range pending {
			bin, key, want := "wpa_supplicant", "wpa_state", "COMPLETED"
			if aps {
				bin, key, want = "hostapd", "state", "ENABLED"
			}
			p, ok := d.daemonProc(name, bin)
			if !ok {
				return fmt.Errorf("%s: no %s recorded", name, bin)
			}
			if !alive(p.PID, p.Start) || isZombie(p.PID) {
				return daemonFailure(bin, name, p, "exited during start-up")
			}
			out, err := wifi.CtrlRequest(ctrlPath(d.spec.Name, n.spec), "STATUS", 2*time.Second)
			if err == nil && wifi.ParseStatus(out)[key] == want {
				d.log.Debug("wifi ready", "node", name, "what", bin, "after", time.Since(t0))
				delete(pending, name)
			}
		}
		if len(pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			var names []string
			for name := range pending {
				names = append(names, name)
			}
			sort.Strings(names)
			n := pending[names[0]]
			bin, what := "wpa_supplicant", "did not associate"
			if aps {
				bin, what = "hostapd", "did not enable the access point"
			}
			p, _ := d.daemonProc(n.spec.Name, bin)
			err := daemonFailure(bin, n.spec.Name, p, fmt.Sprintf("%s within %v (EMUCTL_WIFI_TIMEOUT raises the limit); still waiting: %s", what, WiFiTimeout(), strings.Join(names, ", ")))
			if !aps {
				if ap, ok := d.daemonProc(n.spec.Station.AP, "hostapd"); ok {
					tail, _ := os.ReadFile(ap.Log)
					err = fmt.Errorf("%w\n  hostapd of %s, last log lines:\n%s", err, n.spec.Station.AP, indent(lastLines(string(tail), 8)))
				}
			}
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// WiFiHop is the shaping of one station's wireless hop: Up on the
// station's egress, Down on its AP's egress towards it (zero: unshaped).
type WiFiHop struct {
	Station string `json:"station"`
	AP      string `json:"ap"`
	Up      tc.Dir `json:"up"`
	Down    tc.Dir `json:"down"`
}

// wirelessShaping records every station's hop and installs the shaping:
// uplinks on the stations' wireless egress, downlinks on the AP's wireless
// egress with one plan per station picked by its MAC
// (tc.ApplyPerDestination); netem, or TBF for rate-only hops on kernels
// without netem.
func (d *deployer) wirelessShaping(wnodes []*node) error {
	var hops []WiFiHop
	for _, n := range wnodes {
		st := n.spec.Station
		if st == nil {
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

// wifiBackends is the Wi-Fi part of `emuctl doctor`: what runs APs and
// stations here, which modes the installed daemons can do, and whether
// multi-link (MLO) can work, naming what is missing.
func wifiBackends(hwsim bool) []Backend {
	if !hwsim {
		return []Backend{{"Wi-Fi (kind: ap / station)", "engine: emuctl's medium carries the nodes' Ethernet frames between veth pairs as 802.11 data frames (airtime, EDCA contention, collisions, retries, SNR-based errors from ns-3's Yans model, A-MPDU; fixed or ideal rates)",
			"no mac80211_hwsim in this kernel (`modprobe mac80211_hwsim radios=0` where the kernel has it: then hwsim radios, hostapd and wpa_supplicant); the engine has no management plane (stations are associated from the start; no beacons, scanning, authentication or minstrel) and no multi-link"},
			{"Wi-Fi medium (wifi: {medium: ...})", "emuctl's medium in the lab's supervisor (engine backend)", "medium: false (hwsim's instant medium) needs mac80211_hwsim"}}
	}
	t := wifi.ProbeTools()
	desc := func(x wifi.Tool) string {
		if x.Path == "" || x.Err != nil && x.Version == "" {
			if x.Err != nil {
				return x.Name + ": " + x.Err.Error()
			}
			return x.Name + ": not found"
		}
		var modes []string
		modes = append(modes, "g", "n")
		if x.VHT || x.Name == "wpa_supplicant" {
			modes = append(modes, "ac")
		}
		if x.HE {
			modes = append(modes, "ax")
		}
		if x.EHT {
			modes = append(modes, "be")
		}
		sec := "open, wpa2"
		if x.SAE {
			sec += ", wpa3"
		}
		s := fmt.Sprintf("%s %s (%s)", x.Name, x.Version, x.Path)
		if x.Name == "hostapd" {
			s += "; modes " + strings.Join(modes, "/")
		}
		return s + "; security " + sec
	}
	out := []Backend{{"Wi-Fi (kind: ap / station)", "mac80211_hwsim radios (one per node, created over generic netlink) + hostapd / wpa_supplicant in the nodes",
		desc(t.Hostapd) + "; " + desc(t.WpaSupplicant)}}
	probe := &topo.WiFiAP{Mode: topo.WiFiModeBE, Security: topo.WiFiWPA3,
		Channel: topo.WiFiChannel{Band: topo.Band24, Channel: 1, Width: 20, FreqMHz: 2412, CenterChannel: 1},
		Links:   []topo.WiFiChannel{{Band: topo.Band24, Channel: 1, Width: 20, FreqMHz: 2412, CenterChannel: 1}, {Band: topo.Band5, Channel: 36, Width: 80, FreqMHz: 5180, CenterChannel: 42}}}
	var why []string
	if err := t.CheckAP(probe); err != nil {
		why = append(why, toolNeeds(err))
	}
	if err := t.CheckStation(&topo.WiFiStation{MLO: true, Security: topo.WiFiWPA3}, probe); err != nil {
		why = append(why, toolNeeds(err))
	}
	if err := wifi.ProbeHwsimMLO(); err != nil {
		why = append(why, err.Error())
	}
	out = append(out, Backend{"Wi-Fi medium (wifi: {medium: ...})", "emuctl's medium in the lab's supervisor (the default): airtime, EDCA contention, collisions, retries, SNR-based errors (ns-3 Yans), A-MPDU; minstrel or fixed rates (rate:)",
		"hwsim's own medium (instant delivery, capacity = CPU) with medium: false, and for labs with multi-link radios, which the kernel cannot give a medium; wifi: {backend: engine} runs the medium over veth pairs instead of radios"})
	if len(why) == 0 {
		out = append(out, Backend{"Wi-Fi multi-link (mode be, links:)", "MLD access points and stations", "hostapd, wpa_supplicant and mac80211_hwsim support it"})
	} else {
		out = append(out, Backend{"Wi-Fi multi-link (mode be, links:)", "unavailable: such labs are refused before anything changes", strings.Join(why, "; ")})
	}
	return out
}

// toolNeeds drops the "<ErrToolMissing>: access point NAME (POS): " prefix
// of a wifi.Tools check error, for messages that name the node themselves.
func toolNeeds(err error) string {
	msg := err.Error()
	if !errors.Is(err, wifi.ErrToolMissing) {
		return msg
	}
	rest := strings.TrimPrefix(msg, wifi.ErrToolMissing.Error()+": ")
	if i := strings.Index(rest, "): "); i >= 0 && strings.Count(rest[:i], " ") <= 3 {
		return rest[i+3:]
	}
	if i := strings.Index(rest, ": "); i >= 0 {
		return rest[i+2:]
	}
	return rest
}
