package kernellab

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/netcfg"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/vishvananda/netns"
)

// requireHwsim skips outside the kernel lab and fails inside it when
// mac80211_hwsim is missing.
func requireHwsim(t *testing.T) {
	t.Helper()
	RequireLab(t, "creates mac80211_hwsim radios")
	err := wifi.ProbeHwsim()
	Require(t, "mac80211_hwsim", err == nil, errString(err))
}

// upWiFi deploys spec and tears it down (checking the teardown) when t ends.
func upWiFi(t *testing.T, spec *topo.Spec) *emu.State {
	t.Helper()
	st, err := emu.Deploy(context.Background(), spec, emu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := emu.Down(spec.Name, nil); err != nil {
			t.Error(err)
		}
	})
	return st
}

// radioCount counts the wiphys the kernel has in the root namespace.
func radioCount(t *testing.T) int {
	ws, err := wifi.Wiphys(0)
	if err != nil {
		t.Fatal(err)
	}
	return len(ws)
}

// wifiYAML is topologies/wifi.yaml renamed name, for a test that needs
// mac80211_hwsim, hostapd and wpa_supplicant (skipped, saying which, when
// one is missing).
func wifiYAML(t *testing.T, name string) *topo.Spec {
	t.Helper()
	requireHwsim(t)
	requireTools(t, "hostapd", "hostapd")
	requireTools(t, "wpasupplicant", "wpa_supplicant")
	spec, err := topo.LoadFile("../topologies/wifi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := topo.Rename(spec, name); err != nil {
		t.Fatal(err)
	}
	return spec
}

// emuctl's Wi-Fi path end to end (topologies/wifi.yaml): an 802.11n WPA2
// access point bridged to a wired server, two stations. Up waits for the
// association; every node pings every other; TCP runs between the two
// stations through the AP and from a station to the server; inspect data
// comes from nl80211; down leaves no radio, daemon or namespace.
func TestLabEmuctlWiFi(t *testing.T) {
	spec := wifiYAML(t, "eklwifi")
	lab := spec.Name
	radios0 := radioCount(t)
	// a failure after the Wi-Fi phase rolls back radios and daemons too
	if _, err := emu.Deploy(context.Background(), spec, emu.Options{FaultAt: "routes"}); err == nil || !strings.Contains(err.Error(), "injected fault") {
		t.Fatalf("deploy with a fault after the wifi phase: %v", err)
	}
	waitFor(t, 10*time.Second, "the rolled-back lab's radios to disappear", func() (bool, error) {
		ents, _ := os.ReadDir("/sys/class/ieee80211")
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "emu.") {
				return false, nil
			}
		}
		return true, nil
	})
	if l := emu.Leaks(); len(l) > 0 {
		t.Fatalf("rollback after the wifi phase left: %v", l)
	}
	t0 := time.Now()
	st, err := emu.Deploy(context.Background(), spec, emu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("up with 3 radios, hostapd and 2 wpa_supplicants, associated: %v", time.Since(t0).Round(time.Millisecond))
	down := false
	t.Cleanup(func() {
		if !down {
			emu.Down(lab, nil)
		}
	})
	// nothing of the lab's radios is in the root namespace
	if n := radioCount(t); n != radios0 {
		t.Errorf("root namespace has %d radios, had %d before up", n, radios0)
	}

	res := emu.PingAll(context.Background(), st, 3, 3*time.Second)
	for _, r := range res {
		if !r.OK {
			t.Errorf("ping %s -> %s (%s) failed", r.From, r.To, r.Addr)
		}
	}
	t.Logf("pingall: %d pairs", len(res))
	// every node read back from the kernel as the topology says: the
	// radios' interfaces in their nodes, their MACs and addresses, the
	// AP's radio a port of its bridge (through hostapd)
	built, err := emu.VerifyBuilt(lab)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		t.Logf("read back %s (%s): %+v", b.Node, b.Kind, b.Ifaces)
		if !b.OK() || len(b.Ifaces) == 0 {
			t.Errorf("%s (%s) differs from the topology: %s", b.Node, b.Kind, strings.Join(b.Problems, "; "))
		}
	}

	status := emu.WiFiStatus(st)
	if len(status) != 3 {
		t.Fatalf("WiFiStatus: %d entries, want 3: %+v", len(status), status)
	}
	byNode := map[string]emu.WiFiNodeStatus{}
	for _, s := range status {
		byNode[s.Node] = s
		t.Logf("%s %s %s: state %s ssid %q bssid %s freq %d width %s peers %d err %q", s.Node, s.Role, s.Iface, s.State, s.SSID, s.BSSID, s.FreqMHz, s.Width, len(s.Peers), s.Error)
		if !s.Running || s.FreqMHz != 2437 || s.Error != "" {
			t.Errorf("%s: running %v freq %d (want 2437, channel 6) error %q", s.Node, s.Running, s.FreqMHz, s.Error)
		}
	}
	ap := byNode["ap1"]
	if ap.State != "ENABLED" || len(ap.Peers) != 2 {
		t.Errorf("ap1: state %q, %d stations (want ENABLED, 2)", ap.State, len(ap.Peers))
	}
	apMAC := ""
	for _, ifc := range spec.Node("ap1").Interfaces {
		if ifc.Wireless {
			apMAC = ifc.MAC
		}
	}
	for _, sta := range []string{"sta1", "sta2"} {
		s := byNode[sta]
		if s.State != "COMPLETED" || !strings.EqualFold(s.BSSID, apMAC) || s.SSID != "emuctl-lab" || len(s.Peers) != 1 {
			t.Errorf("%s: state %q bssid %q (AP %s) ssid %q peers %d", sta, s.State, s.BSSID, apMAC, s.SSID, len(s.Peers))
			continue
		}
		p := s.Peers[0]
		if !strings.EqualFold(p.MAC, apMAC) || p.TxBitrateKbps == 0 {
			t.Errorf("%s: peer %+v, want the AP %s with a bitrate", sta, p, apMAC)
		}
	}

	// the daemons' control sockets work through exec, as the README says
	cmd, err := emu.Command(lab, "sta1", []string{"wpa_cli", "-p", "/run/emuctl/" + lab + "/wifi/sta1/ctrl", "-i", "sta1-wlan0", "status"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "wpa_state=COMPLETED") {
		t.Errorf("wpa_cli status through exec: %v\n%s", err, out)
	}

	// TCP: station to station through the AP, and station to the wired server.
	for _, f := range [][2]string{{"sta1", "sta2"}, {"sta2", "srv"}} {
		dst, _ := emu.PrimaryAddr(spec.Node(f[1]))
		g := tcpFlow(t, lab, f[0], f[1], dst, "cubic", 6*time.Second, 2*time.Second, nil)
		t.Logf("TCP %s -> %s over hwsim: %.1f Mbit/s", f[0], f[1], g/1e6)
		if ms, err := emu.LabMediumStats(lab); err == nil {
			t.Logf("medium: frames %d, no-rate %d, late mean %.0f µs max %.0f µs; radios %+v", ms.FramesIn, ms.NoRate, ms.LateMeanUs, ms.LateMaxUs, ms.Radios)
		}
		if g < 1e6 {
			t.Errorf("TCP %s -> %s: %.2f Mbit/s, want > 1 Mbit/s", f[0], f[1], g/1e6)
		}
	}

	// The lab's supervisor restarts a daemon that dies: kill sta1's
	// wpa_supplicant, the station associates again.
	kept := func(node, what string) emu.DaemonStatus {
		ds, err := emu.Daemons(lab)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Node == node && d.What == what {
				return d
			}
		}
		t.Fatalf("the supervisor keeps no %s on %s: %+v", what, node, ds)
		return emu.DaemonStatus{}
	}
	wpas := kept("sta1", "wpa_supplicant")
	if err := syscall.Kill(wpas.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	took := waitFor(t, 60*time.Second, "sta1 to associate again after its wpa_supplicant was killed", func() (bool, error) {
		for _, s := range emu.WiFiStatus(st) {
			if s.Node == "sta1" {
				d := kept("sta1", "wpa_supplicant")
				return s.State == "COMPLETED" && d.Running && d.PID != wpas.PID, nil
			}
		}
		return false, nil
	})
	logb, _ := os.ReadFile(wpas.Log)
	t.Logf("wpa_supplicant pid %d killed; restarted and associated again after %v", wpas.PID, took.Round(time.Millisecond))
	if !strings.Contains(string(logb), "restarting") {
		t.Errorf("the daemon's log does not record the restart:\n%s", logb)
	}

	var pids []int
	for _, p := range st.Procs {
		pids = append(pids, p.PID)
	}
	ds, _ := emu.Daemons(lab)
	for _, d := range ds {
		pids = append(pids, d.PID)
	}
	if err := emu.Down(lab, nil); err != nil {
		t.Fatal(err)
	}
	down = true
	for _, pid := range pids {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil && !zombie(pid) {
			t.Errorf("daemon pid %d still running after down", pid)
		}
	}
	// radios die with their namespaces; the kernel may take a moment
	waitFor(t, 10*time.Second, "the lab's radios to disappear", func() (bool, error) {
		ents, _ := os.ReadDir("/sys/class/ieee80211")
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "emu."+lab+".") {
				return false, nil
			}
		}
		return true, nil
	})
	if l := emu.Leaks(); len(l) > 0 {
		t.Errorf("leaks after down: %v", l)
	}
}

// A shaped wireless hop (topologies/sack-wifi.yaml: 802.11g, 54 Mbit/s,
// 2 ms each way, 5 % uplink loss): the RTT floor is the two delays and the
// uplink goodput stays under the hop's capacity.
func TestLabEmuctlWiFiShaped(t *testing.T) {
	requireHwsim(t)
	spec, err := topo.LoadFile("../topologies/sack-wifi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := topo.Rename(spec, "eklwshp"); err != nil {
		t.Fatal(err)
	}
	lab := spec.Name
	upWiFi(t, spec)
	links, err := emu.ShowLinks(lab)
	if err != nil {
		t.Fatal(err)
	}
	var hop *emu.LinkInfo
	for i := range links {
		if links[i].Kind == "wifi" {
			hop = &links[i]
		}
	}
	if hop == nil || len(hop.Qdiscs) != 2 || !strings.Contains(strings.Join(hop.Qdiscs, " "), "netem") || hop.StateA != "up" {
		t.Fatalf("link show: wireless hop %+v", hop)
	}
	t.Logf("link show, wireless hop %s <-> %s:\n%s", hop.A, hop.B, strings.Join(hop.Qdiscs, "\n"))
	dst, _ := emu.PrimaryAddr(spec.Node("srv"))
	var rtts []time.Duration
	lost := 0
	for i := 0; i < 40; i++ {
		if rtt, err := emu.Ping(context.Background(), lab, "sta1", dst, 2*time.Second); err == nil {
			rtts = append(rtts, rtt)
		} else {
			lost++
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(rtts) < 20 {
		t.Fatalf("only %d of 40 pings answered", len(rtts))
	}
	sort.Slice(rtts, func(i, j int) bool { return rtts[i] < rtts[j] })
	t.Logf("RTT sta1 -> srv: floor %v median %v, %d of 40 lost (5 %% uplink loss configured)", rtts[0], rtts[len(rtts)/2], lost)
	if rtts[0] < 4*time.Millisecond || rtts[0] > 15*time.Millisecond {
		t.Errorf("RTT floor %v, want 4 ms (2 x 2 ms) .. 15 ms under emulation", rtts[0])
	}
	g := tcpFlow(t, lab, "sta1", "srv", dst, "reno", 8*time.Second, 2*time.Second, nil)
	capacity := 54e6 * 1448 / 1514
	t.Logf("TCP Reno sta1 -> srv with 5 %% loss: %.2f Mbit/s (capacity %.2f)", g/1e6, capacity/1e6)
	if g > 1.02*capacity || g < 0.1e6 {
		t.Errorf("goodput %.2f Mbit/s, want (0.1, %.2f]", g/1e6, 1.02*capacity/1e6)
	}
}

// Multi-link: a mode-be AP with two links. With hostapd 2.10 (Debian 12)
// up must refuse before changing anything, naming what is missing; with a
// hostapd that can do it, the MLD station associates.
func TestLabEmuctlWiFiMLO(t *testing.T) {
	requireHwsim(t)
	spec, err := topo.Load("mlo.yaml", []byte(`name: eklmlo
nodes:
  ap1:
    kind: ap
    wifi:
      mode: be
      security: wpa3
      passphrase: "multi link secret"
      links: [{band: 2.4, channel: 1}, {band: 5, channel: 36, width: 80}]
  sta1: {kind: station, wifi: {mlo: true}}
`))
	if err != nil {
		t.Fatal(err)
	}
	tools := wifi.ProbeTools()
	checkErr := tools.CheckAP(spec.Node("ap1").AP)
	t.Logf("tools: %+v; CheckAP: %v", tools, checkErr)
	for _, b := range emu.Doctor().Backends {
		if strings.HasPrefix(b.Concern, "Wi-Fi") {
			t.Logf("doctor: %s: %s (%s)", b.Concern, b.Uses, b.Why)
			if strings.Contains(b.Concern, "multi-link") && (checkErr != nil) != strings.HasPrefix(b.Uses, "unavailable") {
				t.Errorf("doctor says %q for multi-link while CheckAP says %v", b.Uses, checkErr)
			}
		}
	}
	radios0 := radioCount(t)
	_, err = emu.Deploy(context.Background(), spec, emu.Options{})
	if checkErr != nil {
		if err == nil {
			emu.Down("eklmlo", nil)
			t.Fatalf("up succeeded although the tools cannot do MLO: %v", checkErr)
		}
		t.Logf("up refused, as it must with these tools:\n%v", err)
		for _, want := range []string{"nothing was changed", "hostapd", "2.12"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error does not mention %q", want)
			}
		}
		if n := radioCount(t); n != radios0 {
			t.Errorf("refused up left radios: %d, had %d", n, radios0)
		}
		if l := emu.Leaks(); len(l) > 0 {
			t.Errorf("refused up left: %v", l)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Down("eklmlo", nil)
	st, _ := emu.ReadState("eklmlo")
	for _, s := range emu.WiFiStatus(st) {
		t.Logf("%+v", s)
	}
}

// zombie reports whether pid is a zombie (exited, not yet reaped).
func zombie(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// A real Wi-Fi adapter assigned to a node (opt-in): a radio created in the
// root namespace stands in for the machine's card. Its wiphy moves into
// the node with its interface (renamed, addressed, up) and comes back on
// down under its own name, radio and all; a switch port or an adapter
// whose radio carries another interface is refused before anything changes.
func TestLabEmuctlWiFiAdapter(t *testing.T) {
	requireHwsim(t)
	h, err := wifi.DialHwsim(0)
	if err != nil {
		t.Fatal(err)
	}
	const phy = "emutest-card"
	if _, err := h.NewRadio(wifi.RadioConfig{Name: phy, Channels: 1}); err != nil {
		h.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.DelRadio(phy); err != nil {
			t.Errorf("delete the stand-in card: %v", err)
		}
		h.Close()
	})
	var ifs []string
	ents, _ := os.ReadDir("/sys/class/net")
	for _, e := range ents {
		if b, err := os.ReadFile("/sys/class/net/" + e.Name() + "/phy80211/name"); err == nil && strings.TrimSpace(string(b)) == phy {
			ifs = append(ifs, e.Name())
		}
	}
	if len(ifs) != 1 {
		t.Fatalf("stand-in card %s: interfaces %v", phy, ifs)
	}
	host := ifs[0]
	t.Logf("stand-in card: radio %s, interface %s", phy, host)

	bad, err := topo.Load("bad.yaml", []byte("name: eklwad\nnodes:\n  s1: {kind: switch, interfaces: {p0: {external: "+host+"}}}\n  h1: {}\nlinks: [{endpoints: [h1, s1]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emu.Deploy(context.Background(), bad, emu.Options{AllowExternal: true}); err == nil || !strings.Contains(err.Error(), "cannot be a switch port") {
		emu.Down("eklwad", nil)
		t.Fatalf("a Wi-Fi adapter as a switch port: %v", err)
	}

	spec, err := topo.Load("adapter.yaml", []byte("name: eklwad\nnodes:\n  h1: {interfaces: {wl0: {external: "+host+", ip: 10.77.0.1/24}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emu.Deploy(context.Background(), spec, emu.Options{AllowExternal: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/sys/class/net/" + host); err == nil {
		t.Errorf("%s is still in the root namespace after up", host)
	}
	if _, err := wifi.WiphyByName(0, phy); err == nil {
		t.Errorf("radio %s is still in the root namespace after up", phy)
	}
	fd, err := os.Open(filepath.Join(emu.NetnsDir, "eklwad.h1"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := wifi.InterfaceInfo(int(fd.Fd()), "wl0")
	fd.Close()
	if err != nil {
		t.Errorf("the adapter in the node: %v", err)
	} else {
		t.Logf("in eklwad.h1: %s (wiphy %d, %s)", info.Name, info.Wiphy, info.Type)
	}
	if err := emu.Down("eklwad", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/sys/class/net/" + host); err != nil {
		t.Errorf("%s did not come back to the root namespace under its name: %v", host, err)
	}
	if _, err := wifi.WiphyByName(0, phy); err != nil {
		t.Errorf("radio %s did not come back: %v", phy, err)
	}
	if l := emu.Leaks(); len(l) > 0 {
		t.Errorf("leaks: %v", l)
	}
}

// Multihoming: a station with Wi-Fi and a wired link runs MPTCP over both
// (the bridged AP and the wired link meet at a router in front of the
// server): two subflows, one per interface, both carry data.
func TestLabEmuctlWiFiMPTCP(t *testing.T) {
	requireHwsim(t)
	spec, err := topo.Load("mpwifi.yaml", []byte(`name: eklmpw
nodes:
  srv: {mptcp: {limits: {subflows: 2}}}
  r1: {kind: router}
  ap1: {kind: ap, wifi: {ssid: mpw, mode: n, channel: 1, passphrase: "wifi plus wire"}}
  sta1:
    kind: station
    wifi: {ap: ap1}
    mptcp:
      limits: {subflows: 2}
      endpoints: [{interface: sta1-wlan0, flags: [subflow]}]
links:
  - {endpoints: [sta1, r1], link: {rate: 5mbit}}
  - {endpoints: [ap1, r1]}
  - {endpoints: [r1, srv]}
`))
	if err != nil {
		t.Fatal(err)
	}
	upWiFi(t, spec)
	open := func(node string) netns.NsHandle {
		h, err := netns.GetFromPath(filepath.Join(emu.NetnsDir, topo.Namespace("eklmpw", node)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	dst, _ := emu.PrimaryAddr(spec.Node("srv"))
	res, err := netcfg.CheckMPTCP(context.Background(), open("sta1"), open("srv"), netcfg.CheckOptions{Server: dst, Duration: 5 * time.Second, Expect: 2})
	if res != nil {
		for _, sf := range res.Subflows {
			t.Logf("subflow %d %s (%s) -> %s: %d bytes acked, rtt %v, established %v", sf.ID, sf.Local, sf.Interface, sf.Remote, sf.BytesAcked, sf.RTT, sf.Established)
		}
		t.Logf("MPTCP %v, %d subflows at once, goodput %.2f Mbit/s", res.MPTCP, res.MaxSubflows, res.Goodput/1e6)
	}
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, sf := range res.Subflows {
		if sf.BytesAcked > 0 {
			used[sf.Interface] = true
		}
	}
	if !used["sta1-eth0"] || !used["sta1-wlan0"] {
		t.Errorf("data went over %v, want both sta1-eth0 (wired) and sta1-wlan0 (Wi-Fi)", used)
	}
}

// A routed access point on 5 GHz (802.11ac, 80 MHz, WPA3-SAE) through
// emuctl: the station associates, the AP routes between its Wi-Fi subnet
// and a wired server, the channel is what the file says.
func TestLabEmuctlWiFiRoutedAC(t *testing.T) {
	requireHwsim(t)
	if _, err := os.Stat("/lib/firmware/regulatory.db"); err != nil {
		t.Fatalf("5 GHz access points need the wireless-regdb package (scripts/kernel-lab setup installs it): %v", err)
	}
	spec, err := topo.Load("routed.yaml", []byte(`name: eklwrt
nodes:
  srv: {}
  ap1:
    kind: ap
    wifi: {ssid: routed-ac, mode: ac, band: 5, channel: 36, width: 80, security: wpa3, passphrase: "routed and sae", routed: true}
  sta1: {kind: station, wifi: {ap: ap1}}
links:
  - {endpoints: [ap1, srv]}
`))
	if err != nil {
		t.Fatal(err)
	}
	st := upWiFi(t, spec)
	for _, r := range emu.PingAll(context.Background(), st, 3, 3*time.Second) {
		if !r.OK {
			t.Errorf("ping %s -> %s (%s) failed", r.From, r.To, r.Addr)
		}
	}
	for _, s := range emu.WiFiStatus(st) {
		t.Logf("%s %s: state %s freq %d width %s peers %d", s.Node, s.Role, s.State, s.FreqMHz, s.Width, len(s.Peers))
		if s.FreqMHz != 5180 || !strings.HasPrefix(s.Width, "80") {
			t.Errorf("%s: %d MHz %q, want 5180 MHz at 80 MHz", s.Node, s.FreqMHz, s.Width)
		}
	}
	// the station's traffic to the server is routed by the AP
	dst, _ := emu.PrimaryAddr(spec.Node("srv"))
	if _, err := emu.Ping(context.Background(), "eklwrt", "sta1", dst, 3*time.Second); err != nil {
		t.Errorf("sta1 -> srv through the routed AP: %v", err)
	}
}

// When an access point does not come up in time, up fails naming the
// daemon and showing its last log lines, and rolls everything back (radios,
// daemons, namespaces).
func TestLabEmuctlWiFiTimeoutRollsBack(t *testing.T) {
	requireHwsim(t)
	spec, err := topo.LoadFile("../topologies/wifi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := topo.Rename(spec, "eklwto"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EMUCTL_WIFI_TIMEOUT", "1ms")
	_, err = emu.Deploy(context.Background(), spec, emu.Options{})
	if err == nil {
		emu.Down("eklwto", nil)
		t.Fatal("up succeeded with a 1 ms Wi-Fi timeout")
	}
	t.Logf("up failed as it must:\n%v", err)
	for _, want := range []string{"hostapd", "ap1", "EMUCTL_WIFI_TIMEOUT", "log"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not mention %q", want)
		}
	}
	if l := emu.Leaks(); len(l) > 0 {
		t.Errorf("a failed Wi-Fi up left: %v", l)
	}
}

// The wifi,N generator (Mininet-WiFi's default topology) comes up: every
// station associates and reaches every other through ap1, and --link
// shapes each wireless hop.
func TestLabEmuctlWiFiGenerator(t *testing.T) {
	requireHwsim(t)
	spec, err := topo.Generate("wifi,3", topo.GenOptions{Name: "eklwgen", Link: "delay=5ms"})
	if err != nil {
		t.Fatal(err)
	}
	st := upWiFi(t, spec)
	res := emu.PingAll(context.Background(), st, 3, 3*time.Second)
	if len(res) != 6 {
		t.Errorf("pingall: %d pairs, want 6", len(res))
	}
	for _, r := range res {
		t.Logf("%s -> %s: %v ok %v", r.From, r.To, r.RTT, r.OK)
		// two shaped hops (5 ms uplink at the sender, 5 ms downlink at
		// the AP, and back): at least 20 ms
		if !r.OK || r.RTT < 20*time.Millisecond {
			t.Errorf("ping %s -> %s: ok %v rtt %v (want >= 20 ms: 4 shaped wireless hops)", r.From, r.To, r.OK, r.RTT)
		}
	}
}

// The CLI as users type it, on a Wi-Fi lab: up (with its summary), ls (the
// Wi-Fi table), inspect (the live wifi list), link show (wireless hops),
// exec with names, doctor, down. Uses bin/emuctl, which `make test-kernel`
// builds first.
func TestLabEmuctlWiFiCLI(t *testing.T) {
	requireHwsim(t)
	bin, err := filepath.Abs("../bin/emuctl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s: %v (make test-kernel builds it)", bin, err)
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("emuctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := run("up", "--topo", "wifi,2", "--name", "eklcli", "--link", "rate=20mbit,delay=1ms")
	t.Logf("%s", out)
	defer exec.Command(bin, "down", "eklcli").Run()
	if !strings.Contains(out, "1 access point(s), 2 station(s) associated") {
		t.Errorf("up summary: %s", out)
	}
	ls := run("ls", "eklcli")
	t.Logf("ls:\n%s", ls)
	for _, want := range []string{"ap/n eklcli", "station -> ap1", "WIFI", "COMPLETED", "ENABLED", "2412 MHz"} {
		if !strings.Contains(ls, want) {
			t.Errorf("ls lacks %q", want)
		}
	}
	var insp struct {
		WiFi []emu.WiFiNodeStatus `json:"wifi"`
	}
	if err := json.Unmarshal([]byte(run("inspect", "eklcli")), &insp); err != nil || len(insp.WiFi) != 3 {
		t.Errorf("inspect wifi: %v %+v", err, insp.WiFi)
	}
	links := run("link", "show", "-l", "eklcli")
	t.Logf("link show:\n%s", links)
	if strings.Count(links, "(wifi)") < 2 || !strings.Contains(links, "netem") {
		t.Errorf("link show lacks the two wireless hops and their qdiscs")
	}
	run("exec", "-l", "eklcli", "sta1", "--", "ping", "-c", "2", "-W", "3", "sta2")
	set := run("link", "set", "-l", "eklcli", "sta2-ap1", "--dir", "b->a", "--delay", "25ms")
	t.Logf("%s", set)
	if !strings.Contains(set, "downlink (b->a) rate 20Mbit delay 25ms") {
		t.Errorf("link set on a wireless hop: %s", set)
	}
	doc := run("doctor")
	if !strings.Contains(doc, "mac80211_hwsim radios") || !strings.Contains(doc, "Wi-Fi multi-link") {
		t.Errorf("doctor:\n%s", doc)
	}
	run("down", "eklcli")
	if left := run("clean", "--check"); strings.Contains(left, "eklcli") {
		t.Errorf("left behind: %s", left)
	}
}

// Each station's downlink has its own plan on the AP's egress: 10 ms to
// sta1, 30 ms to sta2, nothing to sta3; the RTT floors from the wired
// server show each.
func TestLabEmuctlWiFiPerStationDownlink(t *testing.T) {
	requireHwsim(t)
	// hwsim's instant medium: this is about the netem downlinks; the
	// medium's lateness in the emulated VM (milliseconds) would blur the
	// RTT floors (the medium has tests of its own)
	spec, err := topo.Load("down.yaml", []byte(`name: ekldown
wifi: {medium: false}
nodes:
  srv: {}
  ap1: {kind: ap, wifi: {ssid: down, channel: 11}}
  sta1: {kind: station, wifi: {link: {b->a: {delay: 10ms}}}}
  sta2: {kind: station, wifi: {link: {b->a: {delay: 30ms, rate: 20mbit}}}}
  sta3: {kind: station}
links:
  - {endpoints: [srv, ap1]}
`))
	if err != nil {
		t.Fatal(err)
	}
	upWiFi(t, spec)
	floor := func(to string) time.Duration {
		dst, _ := emu.PrimaryAddr(spec.Node(to))
		best := time.Hour
		for i := 0; i < 15; i++ {
			if rtt, err := emu.Ping(context.Background(), "ekldown", "srv", dst, 2*time.Second); err == nil && rtt < best {
				best = rtt
			}
			time.Sleep(20 * time.Millisecond)
		}
		return best
	}
	for _, c := range []struct {
		sta  string
		want time.Duration
	}{{"sta1", 10 * time.Millisecond}, {"sta2", 30 * time.Millisecond}, {"sta3", 0}} {
		got := floor(c.sta)
		t.Logf("srv -> %s: RTT floor %v (downlink delay %v)", c.sta, got, c.want)
		if got < c.want || got > c.want+10*time.Millisecond {
			t.Errorf("srv -> %s: RTT floor %v, want %v .. %v", c.sta, got, c.want, c.want+10*time.Millisecond)
		}
	}
	// link set at run time: sta1's downlink 10 -> 40 ms, sta3 gets a
	// 15 ms uplink; sta2 keeps its 30 ms
	if st, ok := emu.FindWirelessHop(spec, "sta1-ap1"); !ok || st != "sta1" {
		t.Fatalf("FindWirelessHop(sta1-ap1) = %q %v", st, ok)
	}
	if _, err := emu.SetWirelessHop("ekldown", "sta1", "b->a", func(d *tc.Dir) { d.Delay = 40 * time.Millisecond }); err != nil {
		t.Fatal(err)
	}
	if _, err := emu.SetWirelessHop("ekldown", "sta3", "a->b", func(d *tc.Dir) { d.Delay = 15 * time.Millisecond }); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sta  string
		want time.Duration
	}{{"sta1", 40 * time.Millisecond}, {"sta2", 30 * time.Millisecond}, {"sta3", 15 * time.Millisecond}} {
		got := floor(c.sta)
		t.Logf("after link set: srv -> %s: RTT floor %v (want %v)", c.sta, got, c.want)
		if got < c.want || got > c.want+10*time.Millisecond {
			t.Errorf("after link set: srv -> %s: RTT floor %v, want %v .. %v", c.sta, got, c.want, c.want+10*time.Millisecond)
		}
	}
	links, err := emu.ShowLinks("ekldown")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if l.Kind == "wifi" && l.A == "sta2:sta2-wlan0" {
			t.Logf("link show, sta2's hop:\n%s", strings.Join(l.Qdiscs, "\n"))
			if q := strings.Join(l.Qdiscs, " "); !strings.Contains(q, "htb") || !strings.Contains(q, "30ms") || !strings.Contains(q, "40ms") {
				t.Errorf("AP egress tree lacks the per-station classes: %v", l.Qdiscs)
			}
		}
	}
}
