package traffic

import (
	"math"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
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
