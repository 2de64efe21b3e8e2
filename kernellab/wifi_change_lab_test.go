package kernellab

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/vishvananda/netns"
)

// A station joins and leaves a running mac80211_hwsim lab
// (topologies/wifi.yaml): added, it gets a radio on the running medium,
// its wpa_supplicant associates with the AP, it pings the wired server
// and a station that was there at up, carries TCP, and reads back as the
// topology says; an add that fails after the Wi-Fi phase is rolled back
// (radio off the medium and deleted, daemon ended); removed, its
// wpa_supplicant is ended for good and its
// radio deleted (not handed back to the machine's namespace); added again
// it gets a new radio and associates; down leaves nothing.
func TestLabEmuctlWiFiStationAddRemove(t *testing.T) {
	spec := wifiYAML(t, "eklwadd")
	lab := spec.Name
	radios0 := radioCount(t)
	upWiFi(t, spec)
	ctx := context.Background()
	// the lab's radios: the wiphys in its namespaces (each namespace
	// shows its own) and the medium's
	labRadios := func() int {
		st, err := emu.ReadState(lab)
		if err != nil {
			return 0
		}
		n := 0
		for _, ns := range st.Namespaces {
			h, err := netns.GetFromPath(filepath.Join(emu.NetnsDir, ns))
			if err != nil {
				continue
			}
			ws, err := wifi.Wiphys(int(h))
			h.Close()
			if err != nil {
				t.Fatalf("wiphys in %s: %v", ns, err)
			}
			n += len(ws)
		}
		return n
	}
	if n := labRadios(); n != 3 {
		t.Fatalf("the lab has %d radios after up, want 3", n)
	}
	join := func(round int) {
		t.Helper()
		t0 := time.Now()
		st, err := emu.AddNode(ctx, lab, topo.NodeRequest{Name: "sta3", Kind: "station", AP: "ap1"}, emu.Options{})
		if err != nil {
			t.Fatalf("round %d: node add sta3: %v", round, err)
		}
		t.Logf("round %d: sta3 added and associated in %v", round, time.Since(t0).Round(time.Millisecond))
		r := st.Medium.Radios[len(st.Medium.Radios)-1]
		if r.Node != "sta3" || r.Gone {
			t.Errorf("round %d: the medium's radios %d, last %+v", round, len(st.Medium.Radios), r)
		}
		for _, s := range emu.WiFiStatus(st) {
			if s.Node == "sta3" && (s.State != "COMPLETED" || s.SSID != "emuctl-lab") {
				t.Errorf("round %d: sta3 %s ssid %q", round, s.State, s.SSID)
			}
		}
		for _, to := range []string{"srv", "sta1"} {
			dst, _ := emu.PrimaryAddr(st.Spec.Node(to))
			// three tries, as up's pingall: the first echo after an
			// association is sometimes lost (up's TestLabEmuctlWiFi
			// allows the same)
			var err error
			tries := 0
			for tries < 3 {
				tries++
				if _, err = emu.Ping(ctx, lab, "sta3", dst, 3*time.Second); err == nil {
					break
				}
			}
			if tries > 1 {
				t.Logf("round %d: sta3 -> %s answered on try %d (%v)", round, to, tries, err)
			}
			if err != nil {
				t.Errorf("round %d: sta3 -> %s: %v", round, to, err)
				for _, c := range [][]string{{"sta3", "ip", "neigh"}, {"sta1", "ip", "neigh"}, {"ap1", "iw", "dev", "ap1-wlan0", "station", "dump"}, {"ap1", "bridge", "fdb", "show", "br", "ap1"}} {
					if cmd, err := emu.Command(lab, c[0], c[1:]); err == nil {
						out, _ := cmd.CombinedOutput()
						t.Logf("%v:\n%s", c, out)
					}
				}
				if ms, err := emu.LabMediumStats(lab); err == nil {
					t.Logf("medium radios %+v", ms.Radios)
				}
			}
		}
		built, err := emu.VerifyBuilt(lab)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range built {
			if !b.OK() {
				t.Errorf("round %d: %s reads back otherwise than the topology says: %s", round, b.Node, strings.Join(b.Problems, "; "))
			}
		}
		ms, err := emu.LabMediumStats(lab)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ms.Radios["sta3"]; !ok || ms.Unknown != 0 {
			t.Errorf("round %d: the medium's counters have no sta3 (%v), or unknown transmitters %d", round, ms.Radios, ms.Unknown)
		}
	}
	// an add that fails after the Wi-Fi phase rolls back: the radio
	// off the medium and deleted, its wpa_supplicant ended, no sta3
	if _, err := emu.AddNode(ctx, lab, topo.NodeRequest{Name: "sta3", Kind: "station", AP: "ap1"}, emu.Options{FaultAt: "change-routes"}); err == nil || !strings.Contains(err.Error(), "injected fault") {
		t.Fatalf("node add with a fault after the wifi phase: %v", err)
	}
	st, err := emu.ReadState(lab)
	if err != nil || st.Spec.Node("sta3") != nil || len(st.Medium.Radios) != 4 || !st.Medium.Radios[3].Gone {
		t.Fatalf("after the failed add: %v, sta3 %v, radios %+v", err, st.Spec.Node("sta3"), st.Medium.Radios)
	}
	if n := labRadios(); n != 3 {
		t.Errorf("the lab has %d radios after the failed add, want 3", n)
	}
	if n := radioCount(t); n != radios0 {
		t.Errorf("the machine's namespace has %d radios after the failed add, had %d", n, radios0)
	}
	ds, _ := emu.Daemons(lab)
	for _, d := range ds {
		if d.Node == "sta3" {
			t.Errorf("the supervisor keeps %s of sta3 after the failed add: %+v", d.What, d)
		}
	}
	join(1)
	if n := labRadios(); n != 4 {
		t.Errorf("the lab has %d radios with sta3, want 4", n)
	}
	st, _ = emu.ReadState(lab)
	srv, _ := emu.PrimaryAddr(st.Spec.Node("srv"))
	if g := tcpFlow(t, lab, "sta3", "srv", srv, "cubic", 5*time.Second, 2*time.Second, nil); g < 1e6 {
		t.Errorf("TCP sta3 -> srv over hwsim: %.2f Mbit/s, want > 1 Mbit/s", g/1e6)
	} else {
		t.Logf("TCP sta3 -> srv: %.1f Mbit/s", g/1e6)
	}
	ds, _ = emu.Daemons(lab)
	var wpas emu.DaemonStatus
	for _, d := range ds {
		if d.Node == "sta3" {
			wpas = d
		}
	}
	if _, err := emu.RemoveNode(ctx, lab, "sta3", emu.Options{}); err != nil {
		t.Fatal(err)
	}
	if n := labRadios(); n != 3 {
		t.Errorf("the lab has %d radios after sta3 left, want 3", n)
	}
	if n := radioCount(t); n != radios0 {
		t.Errorf("the machine's namespace has %d radios after sta3 left, had %d: its radio came back to it", n, radios0)
	}
	time.Sleep(time.Second) // past the supervisor's restart delay
	ds, _ = emu.Daemons(lab)
	for _, d := range ds {
		if d.Node == "sta3" {
			t.Errorf("the supervisor still keeps %s of sta3: %+v", d.What, d)
		}
	}
	if wpas.PID == 0 {
		t.Error("the supervisor kept no wpa_supplicant for sta3")
	} else if _, err := os.Stat("/proc/" + strconv.Itoa(wpas.PID)); err == nil && !zombie(wpas.PID) {
		t.Errorf("sta3's wpa_supplicant (pid %d) survived its removal", wpas.PID)
	}
	if st, _ = emu.ReadState(lab); st.Spec.Node("sta3") != nil {
		t.Error("the lab's topology still has sta3")
	}
	if _, err := emu.Ping(ctx, lab, "sta1", srv, 3*time.Second); err != nil {
		t.Errorf("sta1 -> srv after sta3 left: %v", err)
	}
	join(2)
	if err := emu.Down(lab, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the lab's radios to disappear", func() (bool, error) {
		ents, _ := os.ReadDir("/sys/class/ieee80211")
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "emu."+lab+".") {
				return false, nil
			}
		}
		return radioCount(t) == radios0, nil
	})
	if l := emu.Leaks(); len(l) > 0 {
		t.Errorf("leaks after down: %v", l)
	}
}

// An access point joins and leaves a running mac80211_hwsim lab
// (topologies/wifi.yaml, its AP on channel 6): added on channel 11 with a
// network of its own, it gets a radio on the running medium and a hostapd
// kept by the supervisor, and the change returns once its BSS is up; a
// wired host behind it and a station added to it answer each other, the
// station on the new AP's network and channel; everything reads back as
// the topology says. It is refused removal while its station is on it;
// once the station has left it goes — hostapd ended for good, radio
// deleted, not handed back to the machine's namespace — and the lab's
// first BSS carries on; down leaves nothing.
func TestLabEmuctlWiFiAPAddRemove(t *testing.T) {
	spec := wifiYAML(t, "eklwap")
	lab := spec.Name
	radios0 := radioCount(t)
	upWiFi(t, spec)
	ctx := context.Background()
	ap2 := topo.NodeRequest{Name: "ap2", Kind: "ap", Position: &[3]float64{10, 0, 0},
		Entry: `{wifi: {ssid: emuctl-two, mode: n, band: 2.4, channel: 11, width: 20, passphrase: "emuctl wifi two"}}`}
	// an add that fails after the Wi-Fi phase rolls back: the radio off
	// the medium and deleted, its hostapd ended, no ap2
	if _, err := emu.AddNode(ctx, lab, ap2, emu.Options{FaultAt: "change-routes"}); err == nil || !strings.Contains(err.Error(), "injected fault") {
		t.Fatalf("node add ap2 with a fault after the wifi phase: %v", err)
	}
	if st, err := emu.ReadState(lab); err != nil || st.Spec.Node("ap2") != nil || len(st.Medium.Radios) != 4 || !st.Medium.Radios[3].Gone {
		t.Fatalf("after the failed add: %v, radios %+v", err, st.Medium.Radios)
	}
	if n := radioCount(t); n != radios0 {
		t.Errorf("the machine's namespace has %d radios after the failed add, had %d", n, radios0)
	}
	time.Sleep(time.Second) // past the supervisor's restart delay
	if ds, _ := emu.Daemons(lab); len(ds) != 3 {
		t.Errorf("the supervisor keeps %d daemons after the failed add, want the lab's 3: %+v", len(ds), ds)
	}
	t0 := time.Now()
	st, err := emu.AddNode(ctx, lab, ap2, emu.Options{})
	if err != nil {
		t.Fatalf("node add ap2: %v", err)
	}
	t.Logf("ap2 added and its BSS up in %v", time.Since(t0).Round(time.Millisecond))
	if r := st.Medium.Radios[len(st.Medium.Radios)-1]; r.Node != "ap2" || r.AP != -1 || r.FreqMHz != 2462 {
		t.Errorf("ap2's radio on the medium: %+v", r)
	}
	for _, c := range []topo.NodeRequest{{Name: "h9"}, {Name: "sta9", Kind: "station", AP: "ap2", Position: &[3]float64{10, 5, 0}}} {
		t0 = time.Now()
		if _, err := emu.AddNode(ctx, lab, c, emu.Options{}); err != nil {
			t.Fatalf("node add %s: %v", c.Name, err)
		}
		t.Logf("%s added in %v", c.Name, time.Since(t0).Round(time.Millisecond))
	}
	if st, err = emu.AddLink(ctx, lab, topo.LinkRequest{A: "h9", B: "ap2"}, emu.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range emu.WiFiStatus(st) {
		switch s.Node {
		case "sta9":
			if s.State != "COMPLETED" || s.SSID != "emuctl-two" || s.FreqMHz != 2462 {
				t.Errorf("sta9: %s, ssid %q on %d MHz; want associated with emuctl-two on 2462", s.State, s.SSID, s.FreqMHz)
			}
		case "ap2":
			if s.State != "ENABLED" || s.FreqMHz != 2462 {
				t.Errorf("ap2: %s on %d MHz; want ENABLED on 2462", s.State, s.FreqMHz)
			}
		}
	}
	h9, _ := emu.PrimaryAddr(st.Spec.Node("h9"))
	var perr error
	for try := 1; try <= 3; try++ { // as up's pingall: the first echo after an association is sometimes lost
		if _, perr = emu.Ping(ctx, lab, "sta9", h9, 3*time.Second); perr == nil {
			break
		}
		t.Logf("sta9 -> h9, try %d: %v", try, perr)
	}
	if perr != nil {
		t.Errorf("sta9 -> h9 through ap2: %v", perr)
	}
	if g := tcpFlow(t, lab, "sta9", "h9", h9, "cubic", 5*time.Second, 2*time.Second, nil); g < 1e6 {
		t.Errorf("TCP sta9 -> h9 through ap2: %.2f Mbit/s, want > 1 Mbit/s", g/1e6)
	} else {
		t.Logf("TCP sta9 -> h9 through ap2: %.1f Mbit/s", g/1e6)
	}
	built, err := emu.VerifyBuilt(lab)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		if !b.OK() {
			t.Errorf("%s reads back otherwise than the topology says: %s", b.Node, strings.Join(b.Problems, "; "))
		}
	}
	ms, err := emu.LabMediumStats(lab)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := ms.Radios["ap2"]; !ok || r.Attempts == 0 || ms.Unknown != 0 {
		t.Errorf("the medium's counters: ap2 %+v (present %v), unknown transmitters %d", r, ok, ms.Unknown)
	}
	var hostapd emu.DaemonStatus
	ds, _ := emu.Daemons(lab)
	for _, d := range ds {
		if d.Node == "ap2" {
			hostapd = d
		}
	}
	if hostapd.PID == 0 {
		t.Fatal("the supervisor keeps no hostapd for ap2")
	}
	if _, err := emu.RemoveNode(ctx, lab, "ap2", emu.Options{}); err == nil || !strings.Contains(err.Error(), "(sta9 would be left without one)") {
		t.Errorf("ap2 removed with sta9 on it: %v", err)
	}
	for _, name := range []string{"sta9", "ap2"} {
		if _, err := emu.RemoveNode(ctx, lab, name, emu.Options{}); err != nil {
			t.Fatalf("node del %s: %v", name, err)
		}
	}
	if n := radioCount(t); n != radios0 {
		t.Errorf("the machine's namespace has %d radios after ap2 left, had %d: its radio came back to it", n, radios0)
	}
	time.Sleep(time.Second) // past the supervisor's restart delay
	ds, _ = emu.Daemons(lab)
	for _, d := range ds {
		if d.Node == "ap2" || d.Node == "sta9" {
			t.Errorf("the supervisor still keeps %s of %s: %+v", d.What, d.Node, d)
		}
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(hostapd.PID)); err == nil && !zombie(hostapd.PID) {
		t.Errorf("ap2's hostapd (pid %d) survived its removal", hostapd.PID)
	}
	st, _ = emu.ReadState(lab)
	srv, _ := emu.PrimaryAddr(st.Spec.Node("srv"))
	if _, err := emu.Ping(ctx, lab, "sta1", srv, 3*time.Second); err != nil {
		t.Errorf("sta1 -> srv after ap2 left: %v", err)
	}
	if err := emu.Down(lab, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the lab's radios to disappear", func() (bool, error) {
		return radioCount(t) == radios0, nil
	})
	if l := emu.Leaks(); len(l) > 0 {
		t.Errorf("leaks after down: %v", l)
	}
}
