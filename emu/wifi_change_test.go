package emu_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/traffic"
)

// TestWiFiEngineStationAddRemove: a lab with Wi-Fi changes while it runs
// on the engine backend. A wired host added behind the AP is reached from
// a station, whose address did not change. A station added with a
// position and a slow walk joins the medium on a new port: its UDP
// uplink is the model's for one saturated 802.11g station within ±5 %,
// wifi show and the medium list it, and it moves. Removed, it is off the
// medium (its port and namespace gone, its mobility forgotten) and the
// first station still carries the model's rate; added again, it gets a
// new radio, and every node reads back as the topology says. An access
// point added or removed is refused, changing
// nothing.
func TestWiFiEngineStationAddRemove(t *testing.T) {
	testutil.NeedRoot(t)
	ctx := context.Background()
	const lab = "twadd"
	upEngine(t, lab, "{}")
	st, err := emu.ReadState(lab)
	if err != nil {
		t.Fatal(err)
	}
	sta1Addr := st.Spec.Node("sta1").Iface("sta1-wlan0").Addrs[0]

	// a wired host on the AP's bridge, pinged from a station
	if _, err := emu.AddNode(ctx, lab, topo.NodeRequest{Name: "h9"}, emu.Options{}); err != nil {
		t.Fatal(err)
	}
	st, err = emu.AddLink(ctx, lab, topo.LinkRequest{A: "h9", B: "ap1"}, emu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := st.Spec.Node("sta1").Iface("sta1-wlan0").Addrs[0]; a != sta1Addr {
		t.Errorf("sta1 renumbered by a wired change: %s → %s", sta1Addr, a)
	}
	h9, _ := emu.PrimaryAddr(st.Spec.Node("h9"))
	if rtt, err := emu.Ping(ctx, lab, "sta1", h9, 3*time.Second); err != nil {
		t.Errorf("sta1 → h9 (added behind ap1): %v", err)
	} else {
		t.Logf("sta1 → h9: %v", rtt)
	}

	// refused, nothing changed
	for _, c := range []struct {
		do   func() error
		want string
	}{
		{func() error { _, err := emu.RemoveNode(ctx, lab, "ap1", emu.Options{}); return err }, "an access point cannot leave a running lab while stations use it (sta1, sta2 would be left without one)"},
	} {
		if err := c.do(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	if st2, _ := emu.ReadState(lab); len(st2.Spec.Nodes) != len(st.Spec.Nodes) || len(st2.Medium.Radios) != 3 {
		t.Fatalf("a refused change changed the lab: %d nodes (was %d), %d radios", len(st2.Spec.Nodes), len(st.Spec.Nodes), len(st2.Medium.Radios))
	}

	// a station that joins, and walks 0.5 m in 60 s (its rate stays)
	entry := "{wifi: {ap: ap1, rate: 54mbit}, position: [3, 4, 0], mobility: {waypoints: [{t: 0s, pos: [3, 4]}, {t: 60s, pos: [3, 4.5]}]}}"
	st, err = emu.AddNode(ctx, lab, topo.NodeRequest{Name: "sta3", Kind: "station", Entry: entry}, emu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(st.Medium.Radios); n != 4 || st.Medium.Radios[3].Node != "sta3" || st.Medium.Radios[3].Port != "r3" || st.Medium.Radios[3].AP != 0 {
		t.Fatalf("radios after the add: %+v", st.Medium.Radios)
	}
	udp := predict(t, 1, "udp", 0)
	r := run(t, lab, traffic.Flow{Client: "sta3", Server: "srv", Proto: traffic.UDP, Rate: 40e6})
	within(t, "UDP sta3 (added) → srv", steady(r, 0), udp, 0.05)
	var seen bool
	for _, x := range r.WiFi.Radios {
		seen = seen || x.Node == "sta3" && x.Attempts > 0
	}
	if !seen {
		t.Errorf("the run's medium counters lack sta3: %+v", r.WiFi.Radios)
	}
	ws := emu.WiFiStatus(st)
	found := false
	for _, w := range ws {
		if w.Node == "sta3" && w.Medium != nil {
			found = true
			t.Logf("wifi show sta3: position %v", w.Medium.Position)
		}
	}
	if !found {
		t.Errorf("wifi show lacks sta3's medium view: %+v", ws)
	}
	ms, err := emu.Mobility(lab)
	if err != nil {
		t.Fatal(err)
	}
	moving := false
	for _, m := range ms {
		if m.Node == "sta3" {
			moving = m.Running && m.Moves > 0 && m.Pos[1] > 4
			t.Logf("sta3's mobility: %+v", m)
		}
	}
	if !moving {
		t.Errorf("sta3 (t0: up) is not moving: %+v", ms)
	}

	// gone again
	if _, err := emu.RemoveNode(ctx, lab, "sta3", emu.Options{}); err != nil {
		t.Fatal(err)
	}
	st, _ = emu.ReadState(lab)
	if !st.Medium.Radios[3].Gone {
		t.Errorf("sta3's radio not marked gone: %+v", st.Medium.Radios[3])
	}
	if out, err := exec.Command("ip", "-n", st.Medium.Netns, "link", "show", "r3").CombinedOutput(); err == nil {
		t.Errorf("port r3 is still in the medium namespace:\n%s", out)
	}
	stats, err := emu.LabMediumStats(lab)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := stats.Radios["sta3"]; ok {
		t.Error("the medium still counts sta3")
	}
	if ms, err := emu.Mobility(lab); err == nil && len(ms) > 0 {
		t.Errorf("mobility after sta3 left: %+v", ms)
	}
	r = run(t, lab, traffic.Flow{Client: "sta1", Server: "srv", Proto: traffic.UDP, Rate: 40e6, Duration: 3 * time.Second})
	within(t, "UDP sta1 → srv after sta3 left", steady(r, 0), udp, 0.05)

	// and back, on a new radio
	st, err = emu.AddNode(ctx, lab, topo.NodeRequest{Name: "sta3", Kind: "station", Entry: "{wifi: {ap: ap1}, position: [0, 3, 0]}"}, emu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(st.Medium.Radios); n != 5 || st.Medium.Radios[4].Port != "r4" {
		t.Fatalf("radios after sta3 came back: %+v", st.Medium.Radios)
	}
	srv, _ := emu.PrimaryAddr(st.Spec.Node("srv"))
	if _, err := emu.Ping(ctx, lab, "sta3", srv, 3*time.Second); err != nil {
		t.Errorf("sta3 (back) → srv: %v", err)
	}
	doc, err := emu.Topology(lab)
	if err != nil || !strings.Contains(string(doc), "sta3:") || !strings.Contains(string(doc), "h9") {
		t.Errorf("the lab's topology now: %v\n%s", err, doc)
	}
	if _, err := topo.Load("back.yaml", doc); err != nil {
		t.Errorf("the lab's topology does not load: %v", err)
	}
	// every node, the added host, link and station too, read back as
	// the topology says
	built, err := emu.VerifyBuilt(lab)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		if !b.OK() || len(b.Ifaces) == 0 {
			t.Errorf("%s (%s) read back %+v: %s", b.Node, b.Kind, b.Ifaces, strings.Join(b.Problems, "; "))
		}
	}
}

// TestWiFiEngineAPAddRemove: an access point added to a running engine
// lab on a channel of its own (802.11g channel 11; the lab's BSS is on
// channel 1), with a wired host behind it and a station added to it:
// both BSSs carry, at the same time, the one-station goodput the 802.11
// model predicts, without colliding (two saturated stations on one
// channel would share it and collide); it reads back as the topology
// says. It is not removed while its station uses it; once the station
// has left it goes — its radio off the medium, its port and namespace
// gone — the host behind it stays, and the lab's first BSS carries on.
func TestWiFiEngineAPAddRemove(t *testing.T) {
	testutil.NeedRoot(t)
	ctx := context.Background()
	const lab = "twap"
	upEngine(t, lab, "{}")
	st, err := emu.AddNode(ctx, lab, topo.NodeRequest{Name: "ap2", Kind: "ap", Entry: "{wifi: {ssid: two, mode: g, channel: 11, rate: 54mbit}, position: [100, 0, 0]}"}, emu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(st.Medium.Radios); n != 4 || st.Medium.Radios[3].Node != "ap2" || st.Medium.Radios[3].AP != -1 || st.Medium.Radios[3].FreqMHz != 2462 || st.Medium.Radios[3].Port != "r3" {
		t.Fatalf("radios after ap2 was added: %+v", st.Medium.Radios)
	}
	for _, c := range []topo.NodeRequest{{Name: "h9"}, {Name: "sta9", Kind: "station", Entry: "{wifi: {ap: ap2, rate: 54mbit}, position: [100, 5, 0]}"}} {
		if _, err := emu.AddNode(ctx, lab, c, emu.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if st, err = emu.AddLink(ctx, lab, topo.LinkRequest{A: "h9", B: "ap2"}, emu.Options{}); err != nil {
		t.Fatal(err)
	}
	if r := st.Medium.Radios[4]; r.Node != "sta9" || r.AP != 3 || r.FreqMHz != 2462 {
		t.Fatalf("sta9's radio: %+v, want on ap2's (3) channel 11", r)
	}
	h9, _ := emu.PrimaryAddr(st.Spec.Node("h9"))
	if _, err := emu.Ping(ctx, lab, "sta9", h9, 3*time.Second); err != nil {
		t.Fatalf("sta9 → h9 through ap2: %v", err)
	}
	udp := predict(t, 1, "udp", 0)
	r := testutil.RetryStarved(t, "a saturated station on each BSS", true, func() *analysis.Result {
		return run(t, lab, traffic.Flow{Name: "ch1", Client: "sta1", Server: "srv", Proto: traffic.UDP, Rate: 40e6},
			traffic.Flow{Name: "ch11", Client: "sta9", Server: "h9", Proto: traffic.UDP, Rate: 40e6})
	})
	within(t, "UDP sta1 → srv (ap1, channel 1)", steady(r, 0), udp, 0.05)
	within(t, "UDP sta9 → h9 (ap2, added, channel 11)", steady(r, 1), udp, 0.05)
	for _, x := range r.WiFi.Radios {
		if x.Node == "sta1" || x.Node == "sta9" {
			t.Logf("%s: %d attempts, %d collisions", x.Node, x.Attempts, x.Collisions)
			if x.Attempts == 0 || x.Collisions*100 > x.Attempts {
				t.Errorf("%s: %d collisions in %d attempts: its BSS is not alone on its channel", x.Node, x.Collisions, x.Attempts)
			}
		}
	}
	built, err := emu.VerifyBuilt(lab)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		if !b.OK() {
			t.Errorf("%s (%s) read back %+v: %s", b.Node, b.Kind, b.Ifaces, strings.Join(b.Problems, "; "))
		}
	}
	doc, err := emu.Topology(lab)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := topo.Load("back.yaml", doc); err != nil || back.Node("ap2") == nil || back.Node("ap2").AP.Channel.FreqMHz != 2462 {
		t.Errorf("the lab's topology with ap2: %v\n%s", err, doc)
	}

	if _, err := emu.RemoveNode(ctx, lab, "ap2", emu.Options{}); err == nil || !strings.Contains(err.Error(), "(sta9 would be left without one)") {
		t.Errorf("ap2 removed with sta9 on it: %v", err)
	}
	for _, name := range []string{"sta9", "ap2"} {
		if st, err = emu.RemoveNode(ctx, lab, name, emu.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if r := st.Medium.Radios[3]; !r.Gone {
		t.Errorf("ap2's radio not marked gone: %+v", r)
	}
	if out, err := exec.Command("ip", "-n", st.Medium.Netns, "link", "show", "r3").CombinedOutput(); err == nil {
		t.Errorf("ap2's port r3 is still in the medium namespace:\n%s", out)
	}
	if _, err := os.Stat("/run/netns/" + topo.Namespace(lab, "ap2")); err == nil {
		t.Error("ap2's namespace is still there")
	}
	stats, err := emu.LabMediumStats(lab)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := stats.Radios["ap2"]; ok {
		t.Error("the medium still counts ap2")
	}
	if st.Spec.Node("h9") == nil || len(st.Spec.Node("h9").Interfaces) != 0 {
		t.Errorf("h9 after ap2 left: %+v (want it kept, without its link to ap2)", st.Spec.Node("h9"))
	}
	srv, _ := emu.PrimaryAddr(st.Spec.Node("srv"))
	if _, err := emu.Ping(ctx, lab, "sta1", srv, 3*time.Second); err != nil {
		t.Errorf("sta1 → srv after ap2 left: %v", err)
	}
}
