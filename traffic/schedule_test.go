package traffic

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
)

// windowGoodput is a flow's mean goodput over the samples lying wholly
// inside [from, to] s.
func windowGoodput(f *analysis.Flow, from, to float64) float64 {
	var bytes int64
	start, end := math.Inf(1), 0.0
	prev := f.StartS
	for _, s := range f.Samples {
		if prev >= from && s.TS <= to {
			bytes += s.Bytes
			start, end = min(start, prev), max(end, s.TS)
		}
		prev = s.TS
	}
	if end <= start {
		return 0
	}
	return float64(bytes) * 8 / (end - start)
}

// TestGoodputFollowsSchedule: a CUBIC flow through a 10 Mbit/s engine
// link (10 ms each way, 50-packet queue) whose a->b rate a schedule with
// t0: traffic drops to 1 Mbit/s at 2 s and restores at 4 s. The run's
// result carries both steps; the goodput follows the rate once one RTT
// plus the queue's drain at the new rate (20 frames at 1 Mbit/s: 0.24 s)
// has passed: ≥ 0.85 × capacity (R × 1448/1514) in each phase. And at
// every sample the bytes delivered so far never exceed the schedule's
// capacity integrated up to then (from the steps' actual times; 10 ms of
// slack for the sampling clock): a receiver may release data late (held
// behind a loss), never early.
func TestGoodputFollowsSchedule(t *testing.T) {
	needRoot(t)
	lab := yamlLab(t, `
name: ttrsched
nodes: {h1: {}, h2: {}}
links:
  - {name: bottleneck, endpoints: [h1, h2], link: {rate: 10mbit, delay: 10ms, queue: 20, backend: userspace}}
schedules:
  - name: drop
    t0: traffic
    link: bottleneck
    steps:
      - {at: 2s, a->b: {rate: 1mbit}}
      - {at: 4s, a->b: {rate: 10mbit}}
`)
	r := run(t, lab, Flow{Client: "h1", Server: "h2", Proto: TCP, Duration: 6 * time.Second, Interval: 100 * time.Millisecond, Sock: SockOpts{CC: "cubic"}})
	if len(r.Steps) != 2 {
		t.Fatalf("result has %d steps, want 2: %+v", len(r.Steps), r.Steps)
	}
	for i, want := range []float64{2, 4} {
		if s := r.Steps[i]; s.Error != "" || math.Abs(s.AtS-want) > 0.1 {
			t.Errorf("step %d at %.3f s (late %.1f ms, %s), want %g s", i, s.AtS, s.LateS*1000, s.Error, want)
		}
	}
	f := &r.Flows[0]
	capOf := func(bps float64) float64 { return bps * 1448 / 1514 }
	drain := 20 * 1514 * 8 / 1e6 // the queue at 1 Mbit/s
	rtt := 0.02 + drain
	phases := []struct {
		name     string
		from, to float64
		rate     float64
	}{
		{"10 Mbit/s", 0.5, 2, 10e6},
		{"1 Mbit/s", 2 + rtt + drain, 4, 1e6},
		{"10 Mbit/s again", 4 + 0.02 + 0.2, 6, 10e6},
	}
	for _, p := range phases {
		g := windowGoodput(f, p.from, p.to)
		c := capOf(p.rate)
		t.Logf("%s [%.2f, %.2f] s: goodput %.3f Mbit/s = %.3f × capacity", p.name, p.from, p.to, g/1e6, g/c)
		if g < 0.85*c {
			t.Errorf("%s: goodput %.3f Mbit/s below 0.85 × %.3f", p.name, g/1e6, c/1e6)
		}
	}
	a, b := r.Steps[0].AtS, r.Steps[1].AtS
	allowed := func(ts float64) float64 { // bytes the link could carry by ts
		bits := capOf(10e6) * min(ts, a)
		if ts > a {
			bits += capOf(1e6) * (min(ts, b) - a)
		}
		if ts > b {
			bits += capOf(10e6) * (ts - b)
		}
		return bits / 8
	}
	var cum int64
	worst := 0.0
	for _, smp := range f.Samples {
		cum += smp.Bytes
		lim := allowed(smp.TS + 0.01)
		worst = max(worst, float64(cum)/lim)
		if float64(cum) > lim {
			t.Errorf("by %.2f s %d bytes delivered, more than the schedule's capacity allowed (%.0f)", smp.TS, cum, lim)
			break
		}
	}
	t.Logf("delivered ÷ allowed by the schedule: at most %.4f over the run, %.4f at the end", worst, float64(cum)/allowed(f.Samples[len(f.Samples)-1].TS))
	for _, s := range r.Steps {
		t.Logf("step at %.3f s, %.1f ms late: %s", s.AtS, s.LateS*1000, s.What)
	}
}

// TestMahimahiLinkDelivery: a Pantheon-style mahimahi: line through the
// whole stack (topology, supervisor, engine) with a generated 3-s trace —
// 12 Mbit/s, a 400 ms outage, 4 Mbit/s in bursts — and UDP offered at 15
// Mbit/s in 1472-byte datagrams (one opportunity each): the receiver gets
// no more datagrams than the trace offered opportunities, the engine
// delivered no more bytes (at mahimahi's count) than 1504 per opportunity.
// (The counts span the whole run, flow set-up included, so how much of
// the trace a busy queue uses is TestEngineTraceDelivery's to check.)
func TestMahimahiLinkDelivery(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	var b strings.Builder
	for ms := 1; ms <= 1000; ms++ {
		fmt.Fprintf(&b, "%d\n", ms)
	}
	for ms := 1400; ms < 3000; ms += 3 {
		fmt.Fprintf(&b, "%d\n%d\n%d\n", ms, ms, ms)
	}
	b.WriteString("3000\n")
	if err := os.WriteFile(filepath.Join(dir, "step.trace"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	lab := yamlLab(t, fmt.Sprintf(`
name: ttrmm
nodes: {h1: {}, h2: {}}
links:
  - endpoints: [h1, h2]
    link: {mahimahi: "mm-delay 10 mm-link %[1]s/step.trace %[1]s/step.trace --uplink-queue=droptail --uplink-queue-args=packets=60"}
`, dir))
	before, err := emu.ShowLinks(lab)
	if err != nil || before[0].Stats == nil {
		t.Fatalf("link show: %v %+v", err, before)
	}
	r := run(t, lab, Flow{Client: "h1", Server: "h2", Proto: UDP, Rate: 15_000_000, Size: 1472, Duration: 4 * time.Second})
	after, err := emu.ShowLinks(lab)
	if err != nil || after[0].Stats == nil {
		t.Fatal(err)
	}
	s0, s1 := before[0].Stats.AToB, after[0].Stats.AToB
	opps := s1.TraceOpps - s0.TraceOpps
	pkts, bytes := s1.OutPackets-s0.OutPackets, s1.OutBytes-s0.OutBytes
	got := r.Flows[0].UDP.Received
	t.Logf("trace offered %d opportunities during the run; the engine sent %d frames (%d bytes, %.4f of the trace's bytes at mahimahi's count), the receiver got %d datagrams; queue drops %d",
		opps, pkts, bytes, float64(bytes-10*pkts)/(1504*float64(opps)), got, s1.QueueDrops-s0.QueueDrops)
	if cost := bytes - 10*pkts; cost > 1504*(opps+1) {
		t.Errorf("the engine delivered %d bytes at mahimahi's count, more than %d opportunities carry", cost, opps)
	}
	if uint64(got) > opps+1 {
		t.Errorf("%d datagrams received, more than the %d opportunities the trace offered", got, opps)
	}
	if pkts == 0 || got == 0 {
		t.Errorf("nothing crossed the traced link")
	}
}
