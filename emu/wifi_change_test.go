package emu_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

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
		{func() error {
			_, err := emu.AddNode(ctx, lab, topo.NodeRequest{Name: "ap2", Kind: "ap", Entry: "{wifi: {ssid: two, mode: g, channel: 6}}"}, emu.Options{})
			return err
		}, "an access point cannot be added to a running lab"},
		{func() error { _, err := emu.RemoveNode(ctx, lab, "ap1", emu.Options{}); return err }, "an access point cannot be removed"},
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
