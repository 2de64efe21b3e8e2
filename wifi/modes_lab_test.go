package wifi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/nsutil"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/kernellab"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// labCase is one access point and one station that must associate.
type labCase struct {
	name, mode, sec, band string
	channel, width        int
}

// TestLabWiFiModes runs, for each mode below, an access point (hostapd)
// and a station (wpa_supplicant) on two hwsim radios in two network
// namespaces with this package's configuration files, waits for the
// association through the control sockets and checks what nl80211 reports
// on both sides. One test function because process spawns are slow in the
// VM. Kernel lab only: it creates radios and namespaces.
func TestLabWiFiModes(t *testing.T) {
	kernellab.RequireLab(t, "creates mac80211_hwsim radios and network namespaces, runs hostapd and wpa_supplicant")
	err := ProbeHwsim()
	kernellab.Require(t, "mac80211_hwsim", err == nil, errText(err))
	tools := ProbeTools()
	t.Logf("hostapd: %+v", tools.Hostapd)
	t.Logf("wpa_supplicant: %+v", tools.WpaSupplicant)
	kernellab.Require(t, "hostapd", tools.Hostapd.usable(), fmt.Sprint(tools.Hostapd.Err))
	kernellab.Require(t, "wpa_supplicant", tools.WpaSupplicant.usable(), fmt.Sprint(tools.WpaSupplicant.Err))
	_, err = exec.LookPath("ip")
	kernellab.Require(t, "ip (iproute2)", err == nil, errText(err))
	_, err = os.Stat("/lib/firmware/regulatory.db")
	kernellab.Require(t, "wireless-regdb (/lib/firmware/regulatory.db; the kernel needs it to leave the world regulatory domain, which forbids APs on 5 GHz)", err == nil, errText(err))

	t.Run("probes", func(t *testing.T) {
		if err := ProbeHwsimMLO(); err != nil {
			t.Errorf("ProbeHwsimMLO on this kernel: %v", err)
		}
		mlo := mloAP(t)
		err := tools.CheckAP(mlo)
		t.Logf("CheckAP(be with %d links): %v", len(mlo.Links), err)
		if tools.Hostapd.MLO {
			if err != nil {
				t.Errorf("hostapd claims MLO but CheckAP fails: %v", err)
			}
			return
		}
		want := fmt.Sprintf("802.11be multi-link needs %s; found hostapd v%s (%s", MLOHostapd, tools.Hostapd.Version, tools.Hostapd.Path)
		if !errors.Is(err, ErrToolMissing) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckAP(MLO) = %v, want it to contain %q", err, want)
		}
		sta := &topo.WiFiStation{SSID: mlo.SSID, Security: mlo.Security, Passphrase: mlo.Passphrase, Iface: "sta1-wlan0", MLO: true}
		err = tools.CheckStation(sta, mlo)
		t.Logf("CheckStation(mlo: true): %v", err)
		if !tools.WpaSupplicant.MLO && (err == nil || !strings.Contains(err.Error(), "wpa_supplicant ≥ 2.11")) {
			t.Errorf("CheckStation(MLO) = %v, want the missing wpa_supplicant 2.11", err)
		}
	})

	t.Run("golden-configs-parse", func(t *testing.T) { parseGoldens(t, tools) })

	cases := []labCase{
		{"a-ch36-open", topo.WiFiModeA, topo.WiFiOpen, topo.Band5, 36, 20},
		{"b-ch1-wpa2", topo.WiFiModeB, topo.WiFiWPA2, topo.Band24, 1, 20},
		{"g-ch6-wpa2", topo.WiFiModeG, topo.WiFiWPA2, topo.Band24, 6, 20},
		{"n-ch36-40-open", topo.WiFiModeN, topo.WiFiOpen, topo.Band5, 36, 40},
		{"ac-ch36-80-wpa2", topo.WiFiModeAC, topo.WiFiWPA2, topo.Band5, 36, 80},
		{"ax-ch36-80-wpa3", topo.WiFiModeAX, topo.WiFiWPA3, topo.Band5, 36, 80},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) { runLabCase(t, tools, i, c) })
	}
}

func runLabCase(t *testing.T, tools Tools, idx int, c labCase) {
	chn, msg := topo.ResolveChannel(c.mode, c.band, c.channel, c.width)
	if msg != "" {
		t.Fatal(msg)
	}
	ap := &topo.WiFiAP{SSID: "emutest-" + c.mode, Mode: c.mode, Security: c.sec, Channel: chn, Country: "US",
		Iface: fmt.Sprintf("emt%dap", idx), Pos: "lab-test"}
	if c.sec != topo.WiFiOpen {
		ap.Passphrase = "kernel-lab-secret"
	}
	sta := &topo.WiFiStation{AP: "ap", SSID: ap.SSID, Security: ap.Security, Passphrase: ap.Passphrase,
		Iface: fmt.Sprintf("emt%dsta", idx), Pos: "lab-test"}
	if err := tools.CheckAP(ap); err != nil {
		if c.mode == topo.WiFiModeAX && !tools.Hostapd.HE {
			if !strings.Contains(err.Error(), "802.11ax (HE) needs hostapd built with CONFIG_IEEE80211AX") {
				t.Errorf("CheckAP without HE: %v", err)
			}
			t.Skipf("the installed hostapd cannot run 802.11ax: %v", err)
		}
		t.Fatalf("CheckAP: %v", err)
	}
	if err := tools.CheckStation(sta, ap); err != nil {
		t.Fatalf("CheckStation: %v", err)
	}

	dir := t.TempDir()
	apConf, err := HostapdConfig(ap, filepath.Join(dir, "hapd"))
	if err != nil {
		t.Fatal(err)
	}
	staConf, err := WpaSupplicantConfig(sta, filepath.Join(dir, "wpas"), APFreqs(ap))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"hostapd.conf": apConf, "wpa_supplicant.conf": staConf} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	apLog, staLog := filepath.Join(dir, "hostapd.log"), filepath.Join(dir, "wpa_supplicant.log")
	dumpLogsOnFailure(t, apLog, staLog)

	apNS := newNamedNS(t, fmt.Sprintf("emutest%d-ap", idx))
	staNS := newNamedNS(t, fmt.Sprintf("emutest%d-sta", idx))
	labRadio(t, fmt.Sprintf("emutest%d-ap", idx), apNS, ap.Iface)
	labRadio(t, fmt.Sprintf("emutest%d-sta", idx), staNS, sta.Iface)

	hcmd := ProbeTools().Hostapd.Argv()
	hapd := startIn(t, apNS.name, apLog, append(hcmd, filepath.Join(dir, "hostapd.conf"))...)
	apCtrl := filepath.Join(dir, "hapd", ap.Iface)
	apStatus, err := hapd.waitStatus(apCtrl, "state", "ENABLED", 60*time.Second)
	if err != nil {
		t.Fatalf("hostapd did not enable the AP: %v", err)
	}
	start := time.Now()
	wcmd := ProbeTools().WpaSupplicant.Argv()
	wpas := startIn(t, staNS.name, staLog, append(wcmd, "-D", "nl80211", "-i", sta.Iface, "-c", filepath.Join(dir, "wpa_supplicant.conf"))...)
	staCtrl := filepath.Join(dir, "wpas", sta.Iface)
	staStatus, err := wpas.waitStatus(staCtrl, "wpa_state", "COMPLETED", 90*time.Second)
	if err != nil {
		t.Fatalf("station did not associate: %v", err)
	}
	assoc := time.Since(start)
	t.Logf("associated %v after wpa_supplicant started; station: freq=%s key_mgmt=%s wifi_generation=%s bssid=%s; AP: freq=%s ieee80211n=%s ac=%s ax=%s",
		assoc.Round(time.Millisecond), staStatus["freq"], staStatus["key_mgmt"], staStatus["wifi_generation"], staStatus["bssid"],
		apStatus["freq"], apStatus["ieee80211n"], apStatus["ieee80211ac"], apStatus["ieee80211ax"])
	wantKM := map[string]string{topo.WiFiOpen: "NONE", topo.WiFiWPA2: "WPA2-PSK", topo.WiFiWPA3: "SAE"}[c.sec]
	if staStatus["key_mgmt"] != wantKM {
		t.Errorf("station key_mgmt=%s, want %s", staStatus["key_mgmt"], wantKM)
	}

	apInfo, err := InterfaceInfo(int(apNS.h), ap.Iface)
	if err != nil {
		t.Fatal(err)
	}
	staInfo, err := InterfaceInfo(int(staNS.h), sta.Iface)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("AP interface: %+v", apInfo)
	t.Logf("station interface: %+v", staInfo)
	for _, x := range []struct {
		who  string
		inf  IfInfo
		typ  string
		want int
	}{{"AP", apInfo, IfTypeAP, chn.Width}, {"station", staInfo, IfTypeStation, chn.Width}} {
		if x.inf.Type != x.typ || x.inf.FreqMHz != chn.FreqMHz || x.inf.WidthMHz != x.want || x.inf.SSID != ap.SSID {
			t.Errorf("%s: type %s freq %d width %d ssid %q; want %s %d MHz %d MHz %q", x.who, x.inf.Type, x.inf.FreqMHz, x.inf.WidthMHz, x.inf.SSID, x.typ, chn.FreqMHz, x.want, ap.SSID)
		}
		if x.inf.CenterFreq1MHz != topo.ChannelFreq(chn.Band, chn.CenterChannel) {
			t.Errorf("%s: centre %d MHz, want %d (channel %d)", x.who, x.inf.CenterFreq1MHz, topo.ChannelFreq(chn.Band, chn.CenterChannel), chn.CenterChannel)
		}
	}
	if !strings.EqualFold(staStatus["bssid"], apInfo.MAC) {
		t.Errorf("station's BSSID %s is not the AP's address %s", staStatus["bssid"], apInfo.MAC)
	}

	// Frames both ways, so that both ends have sent unicast data and
	// rate control reports a rate.
	for i := 0; i < 20; i++ {
		if err := sendFrame(apNS, apInfo, staInfo.MAC); err != nil {
			t.Fatalf("frame AP -> station: %v", err)
		}
		if err := sendFrame(staNS, staInfo, apInfo.MAC); err != nil {
			t.Fatalf("frame station -> AP: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var apPeers, staPeers []StationInfo
	deadline := time.Now().Add(10 * time.Second)
	for {
		apPeers, err = Stations(int(apNS.h), ap.Iface)
		if err != nil {
			t.Fatal(err)
		}
		staPeers, err = Stations(int(staNS.h), sta.Iface)
		if err != nil {
			t.Fatal(err)
		}
		ready := len(apPeers) == 1 && len(staPeers) == 1 && apPeers[0].TxBitrateKbps > 0 && staPeers[0].TxBitrateKbps > 0
		if ready || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("AP's peers: %+v", apPeers)
	t.Logf("station's peers: %+v", staPeers)
	check := func(who string, peers []StationInfo, mac string) {
		if len(peers) != 1 || peers[0].MAC != mac {
			t.Errorf("%s: peers %v, want one, %s", who, peers, mac)
			return
		}
		p := peers[0]
		if p.SignalDBm == 0 || p.TxBitrateKbps == 0 || p.RxBitrateKbps == 0 || p.RxPackets == 0 || p.TxPackets == 0 {
			t.Errorf("%s: peer %s signal %d dBm tx %d kbit/s rx %d kbit/s packets rx %d tx %d: want all non-zero", who, p.MAC, p.SignalDBm, p.TxBitrateKbps, p.RxBitrateKbps, p.RxPackets, p.TxPackets)
		}
		t.Logf("%s sees %s: signal %d dBm, tx %.1f Mbit/s (%s MCS %d NSS %d %d MHz), rx %.1f Mbit/s (%s), connected %v",
			who, p.MAC, p.SignalDBm, float64(p.TxBitrateKbps)/1000, p.TxRate.Mode, p.TxRate.MCS, p.TxRate.NSS, p.TxRate.WidthMHz,
			float64(p.RxBitrateKbps)/1000, p.RxRate.Mode, p.Connected)
	}
	check("AP", apPeers, staInfo.MAC)
	check("station", staPeers, apInfo.MAC)
	// legacy BSSs: the rates 802.11a (6-54 Mbit/s OFDM) and 802.11b (1-11
	// Mbit/s DSSS/CCK) have, as minstrel picks them
	if top := map[string]int64{topo.WiFiModeA: 54000, topo.WiFiModeB: 11000}[c.mode]; top > 0 {
		for _, p := range append(apPeers, staPeers...) {
			if p.TxBitrateKbps > top || p.RxBitrateKbps > top {
				t.Errorf("mode %s: a peer's rates %d / %d kbit/s exceed the mode's %d", c.mode, p.TxBitrateKbps, p.RxBitrateKbps, top)
			}
		}
	}

	for _, x := range []struct {
		ns    *namedNS
		iface string
	}{{apNS, ap.Iface}, {staNS, sta.Iface}} {
		if err := SetTxPower(int(x.ns.h), x.iface, 1000); err != nil {
			t.Errorf("SetTxPower %s: %v", x.iface, err)
			continue
		}
		inf, err := InterfaceInfo(int(x.ns.h), x.iface)
		if err != nil || !inf.HasTxPower || inf.TxPowerMBm != 1000 {
			t.Errorf("%s: transmit power after setting 1000 mBm: %d mBm (reported %v) %v", x.iface, inf.TxPowerMBm, inf.HasTxPower, err)
		}
	}

	for _, p := range []*labProc{wpas, hapd} {
		if err := p.stop(); err != nil {
			t.Errorf("stop %s: %v", p.name, err)
		}
	}
}

// parseGoldens feeds every golden configuration file to the installed
// daemons (in a namespace of their own, where the files' interfaces do not
// exist, so they stop after reading the file) and requires that they know
// every setting, except 802.11be/MLO settings when the installed hostapd
// lacks 802.11be, which Tools.CheckAP reports instead.
func parseGoldens(t *testing.T, tools Tools) {
	ns := newNamedNS(t, "emutest-parse")
	files, err := filepath.Glob(filepath.Join("testdata", "*.conf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	beKeys := []string{"ieee80211be", "eht_oper_chwidth", "eht_oper_centr_freq_seg0_idx", "mld_ap"}
	outs := make([][]byte, len(files))
	argv0 := make([]string, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4) // process spawns are slow in the VM: overlap them
	for i, f := range files {
		abs, _ := filepath.Abs(f)
		argv := append(tools.WpaSupplicant.Argv(), "-D", "nl80211", "-i", "emutest-none", "-c", abs)
		argv0[i] = "wpa_supplicant"
		if strings.HasPrefix(filepath.Base(f), "hostapd") {
			argv, argv0[i] = append(tools.Hostapd.Argv(), abs), "hostapd"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			outs[i], _ = exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns.name}, argv...)...).CombinedOutput()
		}()
	}
	wg.Wait()
	for i, f := range files {
		out := outs[i]
		var bad []string
		for _, line := range strings.Split(string(out), "\n") {
			l := strings.ToLower(line)
			if !strings.Contains(l, "unknown") && !strings.Contains(l, "invalid") && !strings.Contains(l, "failed to parse") && !strings.Contains(l, "errors found") {
				continue
			}
			allowed := false
			if !tools.Hostapd.EHT {
				for _, k := range beKeys {
					allowed = allowed || strings.Contains(line, "'"+k+"'")
				}
				// the count line of a file whose only errors are these
				allowed = allowed || (strings.Contains(line, "errors found") && strings.Contains(f, "-be"))
			}
			if !allowed {
				bad = append(bad, strings.TrimSpace(line))
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s: %s rejects settings:\n%s\n--- full output:\n%s", f, argv0[i], strings.Join(bad, "\n"), out)
		} else {
			t.Logf("%s: %s read it (%s)", filepath.Base(f), argv0[i], firstLine(out))
		}
	}
}

// namedNS is a network namespace with a name in /run/netns, so `ip netns
// exec` can start processes in it (and give them that namespace's /sys,
// where hostapd and wpa_supplicant look up their interface's wiphy).
type namedNS struct {
	name string
	h    netns.NsHandle
}

func newNamedNS(t *testing.T, name string) *namedNS {
	t.Helper()
	return &namedNS{name: name, h: testutil.NewNamedNetns(t, name)}
}

// do runs fn on a thread in the namespace.
func (ns *namedNS) do(fn func() error) error { return nsutil.Do(ns.h, fn) }

// labRadio creates a radio without interface from the root namespace (so
// every radio shares one netgroup), moves it into ns, adds the interface
// iface there and deletes the radio when t ends.
func labRadio(t *testing.T, name string, ns *namedNS, iface string) {
	t.Helper()
	h, err := DialHwsim(0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.NewRadio(RadioConfig{Name: name, Channels: 1, NoVif: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, fd := range []int{int(ns.h), 0} {
			if hn, err := DialHwsim(fd); err == nil {
				err = hn.DelRadio(name)
				hn.Close()
				if err == nil {
					break
				}
			}
		}
		if _, err := os.Stat("/sys/class/ieee80211/" + name); err == nil {
			t.Errorf("radio %s still exists", name)
		}
	})
	w, err := WiphyByName(0, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := SetWiphyNetns(0, w.Index, int(ns.h)); err != nil {
		t.Fatal(err)
	}
	if err := NewInterface(int(ns.h), w.Index, iface); err != nil {
		t.Fatal(err)
	}
	inf, err := InterfaceInfo(int(ns.h), iface)
	if err != nil {
		t.Fatal(err)
	}
	if inf.Wiphy != w.Index || inf.Type != IfTypeStation {
		t.Fatalf("new interface %s: %+v, want a station on wiphy %d", iface, inf, w.Index)
	}
}

// labProc is a daemon started by startIn.
type labProc struct {
	name string
	pid  int
	done chan struct{}
}

// startIn starts argv in the named namespace through `ip netns exec` (which
// execs it: the pid is the daemon's), output to logPath, and stops it by
// pid when t ends.
func startIn(t *testing.T, ns, logPath string, argv ...string) *labProc {
	t.Helper()
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %v: %v", argv, err)
	}
	p := &labProc{name: filepath.Base(argv[0]), pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(p.done) }()
	t.Cleanup(func() { _ = p.stop() })
	return p
}

// waitStatus waits for key=want in the daemon's STATUS, giving up at
// once when the daemon exits.
func (p *labProc) waitStatus(ctrl, key, want string, timeout time.Duration) (map[string]string, error) {
	deadline := time.Now().Add(timeout)
	for {
		st, err := WaitStatus(ctrl, key, want, time.Second, 100*time.Millisecond)
		if err == nil {
			return st, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited: %v", p.name, err)
		default:
		}
		if time.Now().After(deadline) {
			return nil, err
		}
	}
}

// stop sends SIGTERM, then SIGKILL after 5 s, and waits for the exit.
func (p *labProc) stop() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := syscall.Kill(p.pid, syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(5 * time.Second):
	}
	_ = syscall.Kill(p.pid, syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("%s (pid %d) ignored SIGTERM for 5 s", p.name, p.pid)
}

// sendFrame sends one Ethernet frame (local experimental ethertype) from
// the interface to dst through an AF_PACKET socket opened in ns.
func sendFrame(ns *namedNS, from IfInfo, dst string) error {
	d, err := net.ParseMAC(dst)
	if err != nil {
		return err
	}
	s, err := net.ParseMAC(from.MAC)
	if err != nil {
		return err
	}
	const ethertype = 0x88b5
	frame := make([]byte, 14+46)
	copy(frame, d)
	copy(frame[6:], s)
	frame[12], frame[13] = ethertype>>8, ethertype&0xff
	copy(frame[14:], "emuctl wifi lab")
	return ns.do(func() error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		sa := &unix.SockaddrLinklayer{Protocol: htons(ethertype), Ifindex: from.Index, Halen: 6}
		copy(sa.Addr[:], d)
		return unix.Sendto(fd, frame, 0, sa)
	})
}

// dumpLogsOnFailure prints the daemons' logs when t has failed.
func dumpLogsOnFailure(t *testing.T, paths ...string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			if len(b) > 6000 {
				b = b[len(b)-6000:]
			}
			t.Logf("--- %s (tail):\n%s", filepath.Base(p), bytes.TrimSpace(b))
		}
	})
}
