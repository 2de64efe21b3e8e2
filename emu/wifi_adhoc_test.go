package emu_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/traffic"
	"github.com/emuctl/emuctl/wifi"
	"github.com/emuctl/emuctl/wifi/model"
)

// Ad hoc (IBSS) networks on the engine backend: a chain a - b - c on
// channel 1 whose ends are out of each other's range, and four stations
// a few metres apart on channel 11 for saturated station-to-station
// traffic, measured against the model's one-hop prediction. Each receiver
// of the two pairs is as far from both senders (5.02 m), so that two
// frames that overlap are both lost, as the model's saturated stations
// near one receiver: with one sender 4.5 dB nearer than the other the
// medium lets the nearer frame survive some overlaps (capture: 35.2
// Mbit/s together instead of 30.8 in the medium alone, and so for two
// stations of an AP placed that way).
const adhocLab = `name: twadh
wifi:
  backend: engine
  medium: {retry_limit: 7, seed: 3}
  adhoc:
    chain: {mode: g, channel: 1}
    near: {mode: g, channel: 11, rate: 54mbit}
nodes:
  a:  {kind: station, position: [0, 0, 0], wifi: {adhoc: chain}}
  b:  {kind: station, position: [%.2f, 0, 0], wifi: {adhoc: chain}}
  c:  {kind: station, position: [%.2f, 0, 0], wifi: {adhoc: chain}}
  s1: {kind: station, position: [0, 500, 0], wifi: {adhoc: near}}
  s2: {kind: station, position: [5, 500.5, 0], wifi: {adhoc: near}}
  s3: {kind: station, position: [10, 500, 0], wifi: {adhoc: near}}
  s4: {kind: station, position: [5, 499.5, 0], wifi: {adhoc: near}}
`

// TestWiFiEngineAdhoc: in a chain placed by the path-loss model (b at
// 0.6, c at 1.2 detection ranges from a) a reaches b and b reaches c, a
// never reaches c (no ARP answer, and with c's MAC given by hand every
// frame fails its retry chain: IBSS does not forward); one saturated UDP
// flow between two stations and two pairs contending carry the model's
// one-hop goodput within ±5 %.
func TestWiFiEngineAdhoc(t *testing.T) {
	testutil.NeedRoot(t)
	probe, err := topo.Load("twadh.yaml", fmt.Appendf(nil, adhocLab, 1.0, 2.0))
	if err != nil {
		t.Fatal(err)
	}
	d, ok := wifi.MediumSettings(*probe.WiFiMedium).PathLoss.DistanceAt(wifi.LabTxPowerDBm - model.DefaultDetectDBm)
	if !ok {
		t.Fatal("the lab's path loss gives no detection range")
	}
	spec, err := topo.Load("twadh.yaml", fmt.Appendf(nil, adhocLab, 0.6*d, 1.2*d))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("detection range %.2f m: b at %.2f m, c at %.2f m", d, 0.6*d, 1.2*d)
	st := deployEngine(t, spec)
	addr := func(n string) string {
		a, ok := emu.PrimaryAddr(spec.Node(n))
		if !ok {
			t.Fatalf("%s has no address", n)
		}
		return a.String()
	}
	ping := func(from, to string) error {
		return emu.InNode("twadh", from, func() error {
			return exec.Command("ping", "-c", "3", "-i", "0.2", "-W", "1", addr(to)).Run()
		})
	}
	for _, p := range [][2]string{{"a", "b"}, {"b", "c"}, {"c", "b"}, {"b", "a"}} {
		if err := ping(p[0], p[1]); err != nil {
			t.Errorf("%s cannot reach %s in range: %v", p[0], p[1], err)
		}
	}
	if err := ping("a", "c"); err == nil {
		t.Error("a reaches c, out of its range: an ad hoc network does not forward")
	}
	// past ARP: c's MAC given to a by hand, every frame is tried on the
	// air and fails its whole retry chain; b hears them and forwards none
	cmac := ""
	for _, ifc := range spec.Node("c").Interfaces {
		if ifc.Wireless {
			cmac = ifc.MAC
		}
	}
	stats := func() *wifi.MediumStats {
		ms, err := emu.LabMediumStats("twadh")
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	before := stats()
	if err := emu.InNode("twadh", "a", func() error {
		return exec.Command("ip", "neigh", "replace", addr("c"), "dev", "a-wlan0", "lladdr", cmac, "nud", "permanent").Run()
	}); err != nil {
		t.Fatal(err)
	}
	if err := ping("a", "c"); err == nil {
		t.Error("a reaches c with c's MAC known: frames crossed a link out of range")
	}
	after := stats()
	failed := after.Radios["a"].Failed - before.Radios["a"].Failed
	t.Logf("a's frames to c: %d failed after their retry chains; c's radio received nothing from a (%d deliveries by the medium in all)", failed, after.Deliveries-before.Deliveries)
	if failed < 3 {
		t.Errorf("a's unicast pings to c: %d frames failed their retry chain, want ≥ 3 (one per ping)", failed)
	}
	status := emu.WiFiStatus(st)
	for _, w := range status {
		if w.Node != "a" {
			continue
		}
		t.Logf("wifi show: a in %s: %+v", w.Adhoc, w.AdhocPeers)
		if w.Adhoc != "chain" || len(w.AdhocPeers) != 2 || !w.AdhocPeers[0].InRange || w.AdhocPeers[0].Rate == "" || w.AdhocPeers[1].InRange {
			t.Errorf("wifi show for a: network %q, peers %+v, want b in range with a rate and c out of range", w.Adhoc, w.AdhocPeers)
		}
	}

	// saturated station to station: one hop (no AP relay), as the model's
	// one sender to its receiver; two pairs share the channel as two
	// saturated senders do
	one := predict(t, 1, "udp", 0)
	got := testutil.RetryStarved(t, "UDP s1 → s2", true, func() float64 {
		return steady(run(t, "twadh", traffic.Flow{Client: "s1", Server: "s2", Proto: traffic.UDP, Rate: 40e6}), 0)
	})
	within(t, "UDP s1 → s2 (ad hoc, one hop)", got, one, 0.05)
	two := predict(t, 2, "udp", 0)
	pair := testutil.RetryStarved(t, "UDP s1 → s2 and s3 → s4", true, func() [2]float64 {
		r := run(t, "twadh", traffic.Flow{Name: "p1", Client: "s1", Server: "s2", Proto: traffic.UDP, Rate: 30e6},
			traffic.Flow{Name: "p2", Client: "s3", Server: "s4", Proto: traffic.UDP, Rate: 30e6})
		return [2]float64{steady(r, 0), steady(r, 1)}
	})
	x, y := pair[0], pair[1]
	within(t, "UDP s1 → s2 + s3 → s4 (two pairs contending)", x+y, two, 0.05)
	jain := (x + y) * (x + y) / (2 * (x*x + y*y))
	t.Logf("two pairs: %.2f + %.2f Mbit/s, Jain %.3f", x/1e6, y/1e6, jain)
	if jain < 0.95 {
		t.Errorf("two contending pairs: Jain %.3f, want ≥ 0.95", jain)
	}
}

// TestWiFiEngineAdhocAddRemove: a member added to a running ad hoc
// network sends one hop straight to the member it addresses: alone, it
// carries the model's one-hop goodput to s2 within ±5 %; with s1 (as far
// from s2) sending to s2 too, the two share the channel as the model's
// two saturated stations. Removed, it is off the medium and its port is
// gone, and the network carries on.
func TestWiFiEngineAdhocAddRemove(t *testing.T) {
	testutil.NeedRoot(t)
	ctx := context.Background()
	spec, err := topo.Load("twadr.yaml", []byte(`name: twadr
wifi:
  backend: engine
  medium: {retry_limit: 7, seed: 3}
  adhoc:
    near: {mode: g, channel: 11, rate: 54mbit}
nodes:
  s1: {kind: station, position: [0, 0, 0], wifi: {adhoc: near}}
  s2: {kind: station, position: [5, 0.5, 0], wifi: {adhoc: near}}
`))
	if err != nil {
		t.Fatal(err)
	}
	deployEngine(t, spec)
	st, err := emu.AddNode(ctx, "twadr", topo.NodeRequest{Name: "s5", Kind: "station", Position: &[3]float64{10, 0, 0}, Entry: "{wifi: {adhoc: near}}"}, emu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Medium.Radios[2]; r.Node != "s5" || r.Adhoc != 1 || r.AP != -1 || r.FreqMHz != 2462 || r.Port != "r2" {
		t.Fatalf("s5's radio: %+v, want a member of network 1 on channel 11, port r2", r)
	}
	s2, _ := emu.PrimaryAddr(st.Spec.Node("s2"))
	if _, err := emu.Ping(ctx, "twadr", "s5", s2, 3*time.Second); err != nil {
		t.Fatalf("s5 → s2: %v", err)
	}
	one := predict(t, 1, "udp", 0)
	got := testutil.RetryStarved(t, "UDP s5 → s2", true, func() float64 {
		return steady(run(t, "twadr", traffic.Flow{Client: "s5", Server: "s2", Proto: traffic.UDP, Rate: 40e6}), 0)
	})
	within(t, "UDP s5 (added) → s2, one hop", got, one, 0.05)
	pair := testutil.RetryStarved(t, "UDP s1 → s2 and s5 → s2", true, func() [2]float64 {
		r := run(t, "twadr", traffic.Flow{Name: "p1", Client: "s1", Server: "s2", Proto: traffic.UDP, Rate: 30e6},
			traffic.Flow{Name: "p5", Client: "s5", Server: "s2", Proto: traffic.UDP, Rate: 30e6})
		return [2]float64{steady(r, 0), steady(r, 1)}
	})
	within(t, "UDP s1 + s5 → s2 together", pair[0]+pair[1], predict(t, 2, "udp", 0), 0.05)
	for _, w := range emu.WiFiStatus(st) {
		if w.Node == "s5" && w.Adhoc != "near" {
			t.Errorf("wifi show for s5: network %q, want near", w.Adhoc)
		}
	}
	built, err := emu.VerifyBuilt("twadr")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		if !b.OK() {
			t.Errorf("%s (%s) read back %+v: %s", b.Node, b.Kind, b.Ifaces, strings.Join(b.Problems, "; "))
		}
	}
	if st, err = emu.RemoveNode(ctx, "twadr", "s5", emu.Options{}); err != nil {
		t.Fatal(err)
	}
	if !st.Medium.Radios[2].Gone {
		t.Errorf("s5's radio not marked gone: %+v", st.Medium.Radios[2])
	}
	if out, err := exec.Command("ip", "-n", st.Medium.Netns, "link", "show", "r2").CombinedOutput(); err == nil {
		t.Errorf("s5's port r2 is still in the medium namespace:\n%s", out)
	}
	if ms, err := emu.LabMediumStats("twadr"); err != nil {
		t.Fatal(err)
	} else if _, ok := ms.Radios["s5"]; ok {
		t.Error("the medium still counts s5")
	}
	if _, err := emu.Ping(ctx, "twadr", "s1", s2, 3*time.Second); err != nil {
		t.Errorf("s1 → s2 after s5 left: %v", err)
	}
}
