package kernellab

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/emuctl/emuctl/wifi/model"
)

// adhocMeshLab: two chains on hwsim radios, placed by the medium's path
// loss (b at 0.6 and c at 1.2 detection ranges from a): an IBSS on
// channel 1 and an 802.11s mesh on channel 11, 2 km apart.
const adhocMeshLab = `name: ekladh
wifi:
  medium: {seed: 5}
  adhoc: {cell: {mode: g, channel: 1}}
  mesh: {m1: {mode: n, channel: 11}}
nodes:
  ia: {kind: station, position: [0, 0], wifi: {adhoc: cell}}
  ib: {kind: station, position: [%[1]f, 0], wifi: {adhoc: cell}}
  ic: {kind: station, position: [%[2]f, 0], wifi: {adhoc: cell}}
  ma: {kind: station, position: [0, 2000], wifi: {mesh: m1}}
  mb: {kind: station, position: [%[1]f, 2000], wifi: {mesh: m1}}
  mc: {kind: station, position: [%[2]f, 2000], wifi: {mesh: m1}}
`

// nodePing pings, n times, node to's address in spec from node from:
// ping's output and whether all answered.
func nodePing(t *testing.T, spec *topo.Spec) func(from, to string, n int) (string, error) {
	return func(from, to string, n int) (string, error) {
		a, ok := emu.PrimaryAddr(spec.Node(to))
		if !ok {
			t.Fatalf("%s has no address", to)
		}
		var out []byte
		err := emu.InNode(spec.Name, from, func() (err error) {
			out, err = exec.Command("ping", "-c", fmt.Sprint(n), "-i", "0.3", "-W", "1", a.String()).CombinedOutput()
			return
		})
		return string(out), err
	}
}

// pingTries pings as ping does, up to three times while none answers
// (HWMP finds a mesh path on the first frames): the last try's output
// and error.
func pingTries(ping func(from, to string, n int) (string, error), from, to string, n int) (out string, err error) {
	for range 3 {
		if out, err = ping(from, to, n); err == nil {
			return out, nil
		}
	}
	return out, err
}

// TestLabWiFiAdhocMesh: ad hoc and mesh on hwsim, the kernel running
// both (no daemon). In each chain the ends are out of each other's
// range: the IBSS's neighbours reach each other and its ends do not
// (IBSS forwards nothing); the mesh's ends do, through the middle mesh
// point (HWMP: mc's path at ma has mb as next hop, two hops), and a UDP
// flow from end to end arrives. wifi show reports the networks, the
// kernel's peers (mesh peer links ESTAB) and the mesh paths.
func TestLabWiFiAdhocMesh(t *testing.T) {
	requireHwsim(t)
	probe, err := topo.Load("ekladh.yaml", fmt.Appendf(nil, adhocMeshLab, 1.0, 2.0))
	if err != nil {
		t.Fatal(err)
	}
	d, ok := wifi.MediumSettings(*probe.WiFiMedium).PathLoss.DistanceAt(wifi.LabTxPowerDBm - model.DefaultDetectDBm)
	if !ok {
		t.Fatal("the lab's path loss gives no detection range")
	}
	t.Logf("detection range %.1f m: b at %.1f m, c at %.1f m", d, 0.6*d, 1.2*d)
	spec, err := topo.Load("ekladh.yaml", fmt.Appendf(nil, adhocMeshLab, 0.6*d, 1.2*d))
	if err != nil {
		t.Fatal(err)
	}
	upWiFi(t, spec)
	ping := nodePing(t, spec)
	status := func() map[string]emu.WiFiNodeStatus {
		st, err := emu.ReadState("ekladh")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]emu.WiFiNodeStatus{}
		for _, w := range emu.WiFiStatus(st) {
			out[w.Node] = w
		}
		return out
	}
	mac := func(n string) string { return strings.ToLower(spec.Node(n).Interfaces[0].MAC) }

	ws := status()
	for _, n := range []string{"ia", "ib", "ic"} {
		if w := ws[n]; w.State != "IBSS" || w.Adhoc != "cell" || w.FreqMHz != 2412 || !w.Running {
			t.Errorf("%s: %+v, want joined to the IBSS cell on 2412 MHz", n, w)
		}
	}
	for _, n := range []string{"ma", "mb", "mc"} {
		if w := ws[n]; w.State != "MESH" || !w.Mesh || w.FreqMHz != 2462 {
			t.Errorf("%s: %+v, want a mesh point of m1 on 2462 MHz", n, w)
		}
	}

	// IBSS: neighbours reach each other, the ends do not
	dump := func(nodes ...string) {
		ws := status()
		for _, n := range nodes {
			w := ws[n]
			t.Logf("%s (%s) %s: peers %+v; medium %+v", n, mac(n), w.State, w.Peers, w.Medium)
		}
	}
	for _, p := range [][2]string{{"ia", "ib"}, {"ib", "ic"}, {"ic", "ib"}} {
		t0 := time.Now()
		out, err := ping(p[0], p[1], 4)
		for err != nil && time.Since(t0) < 20*time.Second {
			out, err = ping(p[0], p[1], 4)
		}
		if err != nil {
			dump("ia", "ib", "ic")
			t.Errorf("IBSS: %s cannot reach %s in range: %v\n%s", p[0], p[1], err, out)
		} else if time.Since(t0) > 5*time.Second {
			t.Logf("IBSS: %s reached %s after %v", p[0], p[1], time.Since(t0).Round(time.Millisecond))
		}
	}
	if out, err := ping("ia", "ic", 4); err == nil {
		t.Errorf("IBSS: ia reached ic at 1.2 detection ranges (an IBSS forwards nothing):\n%s", out)
	} else {
		t.Logf("IBSS: ia -> ic fails as it should: %s", lastLine(out))
	}

	// mesh: peer links come up between neighbours only
	deadline := time.Now().Add(30 * time.Second)
	for {
		ws = status()
		estab := map[string]bool{}
		for _, p := range ws["mb"].Peers {
			if p.PlinkState == "ESTAB" {
				estab[p.MAC] = true
			}
		}
		if estab[mac("ma")] && estab[mac("mc")] {
			t.Logf("mb's peer links: %d ESTAB (ma, mc)", len(estab))
			break
		}
		if time.Now().After(deadline) {
			for _, n := range []string{"ma", "mb", "mc"} {
				t.Logf("%s (%s): peers %+v; medium %+v", n, mac(n), ws[n].Peers, ws[n].Medium)
			}
			t.Fatalf("mb's mesh peer links to ma and mc not established within 30 s")
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, p := range ws["ma"].Peers {
		if p.MAC == mac("mc") && p.PlinkState == "ESTAB" {
			t.Errorf("ma peered with mc at 1.2 detection ranges")
		}
	}
	// the mesh forwards: ma reaches mc through mb
	out, perr := pingTries(ping, "ma", "mc", 5)
	if perr != nil {
		t.Fatalf("mesh: ma cannot reach mc through mb: %v\n%s", perr, out)
	}
	t.Logf("mesh: ma -> mc: %s", lastLine(out))
	var path *wifi.MeshPath
	for _, p := range status()["ma"].MeshPaths {
		if p.Dst == mac("mc") {
			path = &p
		}
	}
	if path == nil || path.NextHop != mac("mb") || path.HopCount != 2 {
		t.Errorf("ma's mesh path to mc: %+v, want next hop mb (%s), 2 hops", path, mac("mb"))
	} else {
		t.Logf("ma's path to mc: next hop mb, %d hops, metric %d", path.HopCount, path.Metric)
	}
	// and carries a flow from end to end
	got := udpFlows(t, "ekladh", []string{"ma"}, "mc", 300e3, 8*time.Second, 2*time.Second)
	t.Logf("UDP ma -> mc over two mesh hops: %.0f of 300 kbit/s", got[0]/1e3)
	if got[0] < 0.9*300e3 {
		t.Errorf("UDP across the mesh: %.0f kbit/s of 300 offered", got[0]/1e3)
	}
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestLabWiFiAdhocMeshAdd: members join a running IBSS and 802.11s mesh
// on hwsim (the chains of TestLabWiFiAdhocMesh, their third members added
// at run time, 1.2 detection ranges from the first): each change returns
// once the new member has joined and hears its neighbour; the IBSS's new
// end reaches its neighbour and not the far end (IBSS forwards nothing),
// the mesh's new end reaches the far end through the middle mesh point;
// removed, their radios are gone and not handed back to the machine's
// namespace, and down leaves nothing.
func TestLabWiFiAdhocMeshAdd(t *testing.T) {
	requireHwsim(t)
	const two = `name: ekladd
wifi:
  medium: {seed: 5}
  adhoc: {cell: {mode: g, channel: 1}}
  mesh: {m1: {mode: n, channel: 11}}
nodes:
  ia: {kind: station, position: [0, 0], wifi: {adhoc: cell}}
  ib: {kind: station, position: [%[1]f, 0], wifi: {adhoc: cell}}
  ma: {kind: station, position: [0, 2000], wifi: {mesh: m1}}
  mb: {kind: station, position: [%[1]f, 2000], wifi: {mesh: m1}}
`
	probe, err := topo.Load("ekladd.yaml", fmt.Appendf(nil, two, 1.0))
	if err != nil {
		t.Fatal(err)
	}
	d, ok := wifi.MediumSettings(*probe.WiFiMedium).PathLoss.DistanceAt(wifi.LabTxPowerDBm - model.DefaultDetectDBm)
	if !ok {
		t.Fatal("the lab's path loss gives no detection range")
	}
	spec, err := topo.Load("ekladd.yaml", fmt.Appendf(nil, two, 0.6*d))
	if err != nil {
		t.Fatal(err)
	}
	radios0 := radioCount(t)
	upWiFi(t, spec)
	ctx := context.Background()
	for _, c := range []struct{ name, entry string }{{"ic", "{wifi: {adhoc: cell}}"}, {"mc", "{wifi: {mesh: m1}}"}} {
		y := 0.0
		if c.name == "mc" {
			y = 2000
		}
		t0 := time.Now()
		if _, err := emu.AddNode(ctx, "ekladd", topo.NodeRequest{Name: c.name, Kind: "station", Position: &[3]float64{1.2 * d, y, 0}, Entry: c.entry}, emu.Options{}); err != nil {
			t.Fatalf("node add %s: %v", c.name, err)
		}
		t.Logf("%s added and joined in %v", c.name, time.Since(t0).Round(time.Millisecond))
	}
	st, err := emu.ReadState("ekladd")
	if err != nil {
		t.Fatal(err)
	}
	ping := nodePing(t, st.Spec)
	for _, w := range emu.WiFiStatus(st) {
		if (w.Node == "ic" && (w.Adhoc != "cell" || w.FreqMHz != 2412)) || (w.Node == "mc" && (w.Adhoc != "m1" || w.FreqMHz != 2462)) {
			t.Errorf("%s: network %q on %d MHz", w.Node, w.Adhoc, w.FreqMHz)
		}
	}
	if out, err := ping("ic", "ib", 3); err != nil {
		t.Errorf("ad hoc: ic (added) cannot reach its neighbour ib: %v\n%s", err, out)
	}
	if _, err := ping("ic", "ia", 2); err == nil {
		t.Error("ad hoc: ic (added) reaches ia, out of its range: an IBSS does not forward")
	}
	out, perr := pingTries(ping, "mc", "ma", 5)
	if perr != nil {
		t.Errorf("mesh: mc (added) cannot reach ma through mb: %v\n%s", perr, out)
	} else {
		t.Logf("mesh: mc -> ma through mb: %s", lastLine(out))
	}
	built, err := emu.VerifyBuilt("ekladd")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		if !b.OK() {
			t.Errorf("%s reads back otherwise than the topology says: %s", b.Node, strings.Join(b.Problems, "; "))
		}
	}
	for _, name := range []string{"ic", "mc"} {
		if _, err := emu.RemoveNode(ctx, "ekladd", name, emu.Options{}); err != nil {
			t.Fatalf("node del %s: %v", name, err)
		}
	}
	if n := radioCount(t); n != radios0 {
		t.Errorf("the machine's namespace has %d radios after ic and mc left, had %d", n, radios0)
	}
	if out, err := ping("ia", "ib", 3); err != nil {
		t.Errorf("ad hoc: ia -> ib after ic left: %v\n%s", err, out)
	}
	if err := emu.Down("ekladd", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the lab's radios to disappear", func() (bool, error) {
		return radioCount(t) == radios0, nil
	})
	if l := emu.Leaks(); len(l) > 0 {
		t.Errorf("leaks after down: %v", l)
	}
}
