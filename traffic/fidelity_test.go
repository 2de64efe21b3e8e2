package traffic

import (
	"math"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/internal/testutil"
)

// Fidelity against the link engine (the quality bar). These need
// link shaping and skip with "needs link shaping" where this build only
// parses link parameters.

// TestFidelityTCPGoodput: on a 50 Mbit/s link emuctl's steady TCP goodput
// is within 3 % of iperf3's, and both are in [0.95, 1.02] × R × 1448/1514.
func TestFidelityTCPGoodput(t *testing.T) {
	needRoot(t)
	needIperf3(t)
	const link = "rate=50mbit"
	lab := gen(t, "single,2", "ttrfid", link)
	capacity := 50e6 * 1448 / 1514
	steady := func(r *analysis.Result) float64 {
		f := &r.Flows[0]
		if f.BottleneckBps != 50e6 {
			t.Errorf("%s: bottleneck %.0f bit/s recorded, want 50e6", r.Engine, f.BottleneckBps)
		}
		return analysis.Goodput(f, analysis.SteadyState(f, 2))
	}
	f := Flow{Client: "h1", Server: "h2", Duration: 8 * time.Second, Sock: SockOpts{CC: "cubic"}}
	// a run that lacked CPU (sender, receiver and engine share two cores
	// with whatever else runs: a stall over 20 ms; the flow itself keeps
	// the cores busy) is made again, then left unjudged
	native := testutil.RetryStarved(t, "emuctl", true, func() float64 { return steady(run(t, lab, f)) })
	f.Engine = EngineIperf3
	iperf := testutil.RetryStarved(t, "iperf3", true, func() float64 { return steady(run(t, lab, f)) })
	t.Logf("50 Mbit/s: emuctl %.3f Mbit/s (%.4f of capacity), iperf3 %.3f Mbit/s (%.4f), ratio %.4f",
		native/1e6, native/capacity, iperf/1e6, iperf/capacity, native/iperf)
	if math.Abs(native/iperf-1) > 0.03 {
		t.Errorf("emuctl %.3f Mbit/s vs iperf3 %.3f Mbit/s: more than 3 %% apart", native/1e6, iperf/1e6)
	}
	for name, g := range map[string]float64{"emuctl": native, "iperf3": iperf} {
		// 0.93: on a 2-core machine the sender, the receiver and the link
		// engine share the cores; a busy moment (short of a starved run)
		// costs a few percent
		if g < 0.93*capacity || g > 1.02*capacity {
			t.Errorf("%s goodput %.3f Mbit/s outside [0.93, 1.02] × %.3f Mbit/s", name, g/1e6, capacity/1e6)
		}
	}
}

// TestFidelityUDPLoss: a 5 % Bernoulli loss on the path shows up as 5 %
// UDP loss within three standard deviations.
func TestFidelityUDPLoss(t *testing.T) {
	needRoot(t)
	lab := yamlLab(t, `
name: ttrloss
nodes: {h1: {}, h2: {}}
links:
  - {endpoints: [h1, h2], link: {loss: 5%}}
`)
	r := run(t, lab, Flow{Client: "h1", Server: "h2", Proto: UDP, Rate: 2_000_000, Size: 125, Duration: 5 * time.Second})
	u := r.Flows[0].UDP
	n, p := float64(u.Sent), 0.05
	lost := float64(u.Sent - (u.Received - u.Duplicates))
	sigma := math.Sqrt(n * p * (1 - p))
	t.Logf("sent %d, lost %.0f (%.3f %%), expected %.0f ± %.1f (3σ)", u.Sent, lost, 100*lost/n, n*p, 3*sigma)
	if math.Abs(lost-n*p) > 3*sigma {
		t.Errorf("lost %.0f of %.0f datagrams: outside %.0f ± %.1f (3σ of 5 %% Bernoulli)", lost, n, n*p, 3*sigma)
	}
}

// TestFidelityOWD: on an idle 10 ms link the one-way delay is 10 ms
// within the link engine's accuracy (emu's verify tolerance: not below by
// more than 0.2 ms, floor not above by more than 5 % + 0.5 ms).
func TestFidelityOWD(t *testing.T) {
	needRoot(t)
	lab := yamlLab(t, `
name: ttrowd
nodes: {h1: {}, h2: {}}
links:
  - {endpoints: [h1, h2], link: {delay: 10ms}}
`)
	r := run(t, lab, Flow{Client: "h1", Server: "h2", Proto: UDP, Rate: 128_000, Size: 160, Duration: 3 * time.Second, Probe: ProbeICMP})
	u := r.Flows[0].UDP
	t.Logf("one-way delay min/mean/max %.3f/%.3f/%.3f ms, jitter %.1f µs", u.OWDMinUs/1e3, u.OWDMeanUs/1e3, u.OWDMaxUs/1e3, u.JitterRFC3550Us)
	if u.OWDMinUs < 9800 || u.OWDMinUs > 10000*1.05+500 {
		t.Errorf("minimum one-way delay %.3f ms on a 10 ms link", u.OWDMinUs/1e3)
	}
	if u.OWDMeanUs > 10000*1.05+1000 {
		t.Errorf("mean one-way delay %.3f ms on an idle 10 ms link", u.OWDMeanUs/1e3)
	}
	var rtt []float64
	for _, s := range r.Probes[0].Samples {
		rtt = append(rtt, s.RTTUs)
	}
	if m := analysis.Summarise(rtt); m.Min < 19800 || m.Median > 22000 {
		t.Errorf("ICMP RTT min %.3f ms median %.3f ms over a 10 ms link (both ways)", m.Min/1e3, m.Median/1e3)
	}
}
