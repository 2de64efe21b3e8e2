package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil/netlab"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/units"
)

// The queue disciplines on real traffic: CUBIC bulk flows from h1 to h2
// through the engine at 10 Mbit/s, 5 ms each way, a 1000-packet limit,
// ICMP echoes from h1 beside them. The engine's own counters give the
// exact sojourn times; the echoes measure what any packet sharing the
// link sees.

const (
	aqmRate  = 10 * units.Mbit
	aqmDelay = 5 * time.Millisecond
	aqmLimit = 1000
)

// aqmResult is one run's measurements.
type aqmResult struct {
	goodput    float64 // bit/s, all bulk flows, over the measured window
	idle, load netlab.RTTStats
	st         DirStats
}

func (r aqmResult) String() string {
	return fmt.Sprintf("goodput %.3f Mbit/s (%.3f × capacity); ping idle %v; under load %v; sojourn p50 %v p95 %v p99 %v (%d pkts); queue drops %d, aqm drops %d, marks %d; engine late mean %v",
		r.goodput/1e6, r.goodput/netlab.Capacity(float64(aqmRate)), r.idle, r.load, r.st.Sojourn.P50, r.st.Sojourn.P95, r.st.Sojourn.P99,
		r.st.Sojourn.Packets, r.st.QueueDrops, r.st.AQMDrops, r.st.Marks, r.st.LateMean)
}

// runAQM runs flows CUBIC bulk flows (ECN on the sender when ecn) through
// an engine link whose a→b direction is d, for warm + measure, pinging
// every 20 ms during measure (every 100 ms with ecn: the echoes are not
// ECN-capable, and RED or CoDel drop those they pick, which the ECN
// checks must tell apart).
func runAQM(t *testing.T, d tc.Dir, flows int, ecn bool, warm, measure time.Duration) aqmResult {
	t.Helper()
	back := tc.Dir{Rate: aqmRate, Delay: aqmDelay}
	l := newEngineLab(t, d, back, 1)
	r := runTraffic(t, l.h1, l.h2, flows, ecn, warm, measure)
	r.st = l.eng.Stats().AToB
	// A run the machine starved of CPU measures the machine, not the
	// discipline: invalid, not a failure (the suites' C6 bound).
	if r.st.LateMean > 250*time.Microsecond {
		t.Skipf("run invalid: the engine was %v late on average (CPU starved): %v", r.st.LateMean, r)
	}
	return r
}

// runTraffic measures goodput and echo RTTs from h1 to h2 (ip2) with
// flows bulk flows running (see runAQM).
func runTraffic(t *testing.T, h1, h2 *netlab.Node, flows int, ecn bool, warm, measure time.Duration) aqmResult {
	t.Helper()
	if ecn {
		h1.Sysctl(t, "net/ipv4/tcp_ecn", "1")
	}
	p := netlab.NewPinger(t, h1)
	var r aqmResult
	r.idle = netlab.Summarize(p.Run(ip2, 20, 10*time.Millisecond, time.Second))
	var bulks []*netlab.Bulk
	for i := range flows {
		bulks = append(bulks, netlab.StartBulk(t, h1, h2, ip2, 5101+i))
	}
	time.Sleep(warm)
	got := func() int64 {
		var n int64
		for _, b := range bulks {
			n += b.Received.Load()
		}
		return n
	}
	b0, t0 := got(), time.Now()
	every := 20 * time.Millisecond
	if ecn {
		every = 100 * time.Millisecond
	}
	rtts := p.Run(ip2, int(measure/every), every, 0)
	b1, t1 := got(), time.Now()
	r.goodput = float64(b1-b0) * 8 / t1.Sub(t0).Seconds()
	r.load = netlab.Summarize(rtts)
	for _, b := range bulks {
		b.Stop()
	}
	return r
}

func aqmDir(a *tc.AQM) tc.Dir {
	return tc.Dir{Rate: aqmRate, Delay: aqmDelay, QueuePackets: aqmLimit, AQM: a}
}

// TestEngineCoDel: one CUBIC flow; CoDel keeps the standing queue near its
// 5 ms target (p50 sojourn ≤ 15 ms; drop-tail with the same 1000-packet
// limit would hold ~1 s) at ≥ 0.95 × capacity, by dropping at the head.
func TestEngineCoDel(t *testing.T) {
	r := runAQM(t, aqmDir(&tc.AQM{Discipline: tc.CoDel}), 1, false, 2*time.Second, 4*time.Second)
	t.Logf("codel: %v", r)
	checkCapacity(t, r, 0.95)
	if r.st.Sojourn.P50 > 15*time.Millisecond {
		t.Errorf("codel sojourn p50 %v > 15 ms", r.st.Sojourn.P50)
	}
	if r.st.AQMDrops == 0 || r.st.Marks != 0 || r.st.QueueDrops != 0 {
		t.Errorf("codel without ECN: aqm drops %d (want > 0), marks %d, limit drops %d (want 0)", r.st.AQMDrops, r.st.Marks, r.st.QueueDrops)
	}
	if added := r.load.P50 - r.idle.Min; added > 20*time.Millisecond {
		t.Errorf("ping under load p50 %v above the idle floor: codel did not hold the queue", added)
	}
}

// TestEngineDropTailBloat is CoDel's contrast: the same flow into a
// 1000-packet drop-tail queue. CUBIC leaves slow start early (HyStart)
// and takes tens of seconds to fill 1.2 s of buffer (the bufferbloat
// suite measures that), but within seconds the queue already holds ten
// times CoDel's bound, and grows without a drop.
func TestEngineDropTailBloat(t *testing.T) {
	r := runAQM(t, aqmDir(nil), 1, false, 3*time.Second, 3*time.Second)
	t.Logf("droptail: %v", r)
	checkCapacity(t, r, 0.95)
	if added := r.load.P50 - r.idle.Min; added < 150*time.Millisecond {
		t.Errorf("drop-tail 1000: ping p50 only %v over the idle floor, expected a bloating queue (≥ 150 ms)", added)
	}
	if r.st.QueueDrops != 0 {
		t.Errorf("drop-tail 1000 dropped %d packets in 6 s", r.st.QueueDrops)
	}
}

// TestEngineFQCoDel: two bulk flows and a sparse ping: the ping's flow is
// new at every echo and goes first, so it sees at most the frame in
// service (1.2 ms) — the bound is 5 ms over the idle RTT.
func TestEngineFQCoDel(t *testing.T) {
	r := runAQM(t, aqmDir(&tc.AQM{Discipline: tc.FQCoDel, ECN: true}), 2, false, 2*time.Second, 4*time.Second)
	t.Logf("fq_codel: %v", r)
	checkCapacity(t, r, 0.95)
	if extra := r.load.P50 - r.idle.P50; extra > 5*time.Millisecond {
		t.Errorf("sparse ping median %v is %v over the idle median %v (> 5 ms)", r.load.P50, extra, r.idle.P50)
	}
	if r.st.Sojourn.P50 > 15*time.Millisecond {
		t.Errorf("fq_codel sojourn p50 %v > 15 ms", r.st.Sojourn.P50)
	}
}

// TestEnginePIE: PIE holds the queueing delay near its 15 ms reference.
func TestEnginePIE(t *testing.T) {
	r := runAQM(t, aqmDir(&tc.AQM{Discipline: tc.PIE}), 1, false, 2*time.Second, 4*time.Second)
	t.Logf("pie: %v", r)
	checkCapacity(t, r, 0.95)
	if p := r.st.Sojourn.P50; p < 15*time.Millisecond/2 || p > 2*15*time.Millisecond {
		t.Errorf("pie sojourn p50 %v, want within [0.5, 2] × the 15 ms reference", p)
	}
	if r.st.AQMDrops == 0 {
		t.Error("pie dropped nothing early")
	}
}

// TestEngineREDECN: RED with ECN marks the ECN-capable flow instead of
// dropping it — marks > 0, no drop at the hard limit, and early drops
// only for what is not ECN-capable (the 40 echoes: each is dropped with
// the marking probability, a few percent at most) — and holds the queue
// below its max threshold. Thresholds of 20 and 60 packets and 10 % at
// max (Floyd's rules for this 8-packet BDP; the defaults, a quarter of
// the limit, leave the queue at ~80 packets with a mark every few
// seconds). An ECN CUBIC flow backs off at each mark, so marks are few
// (about one or two a second) and the average hovers near min.
func TestEngineREDECN(t *testing.T) {
	red := &tc.AQM{Discipline: tc.RED, ECN: true, Min: 20 * 1514, Max: 60 * 1514, Probability: 10}
	r := runAQM(t, aqmDir(red), 1, true, 2*time.Second, 4*time.Second)
	t.Logf("red ecn: %v", r)
	checkCapacity(t, r, 0.95)
	echoes := r.load.N + 2 // answered, plus a couple lost (dropped)
	if r.st.Marks == 0 || r.st.QueueDrops != 0 || r.st.AQMDrops > uint64(echoes)/10 {
		t.Errorf("red ecn: marks %d (want > 0), limit drops %d (want 0), early drops %d (want only echoes, ≤ %d)", r.st.Marks, r.st.QueueDrops, r.st.AQMDrops, echoes/10)
	}
	if p95, max := r.st.Sojourn.P95, 60*1514*8*time.Second/time.Duration(aqmRate); p95 > max {
		t.Errorf("red sojourn p95 %v above the max threshold's %v", p95, max)
	}
}

func checkCapacity(t *testing.T, r aqmResult, frac float64) {
	t.Helper()
	c := netlab.Capacity(float64(aqmRate))
	if r.goodput < frac*c || r.goodput > 1.02*c {
		t.Errorf("goodput %.3f Mbit/s, want within [%.2f, 1.02] × capacity %.3f", r.goodput/1e6, frac, c/1e6)
	}
}
