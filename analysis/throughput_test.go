package analysis

import (
	"math"
	"testing"
)

func TestCapacity(t *testing.T) {
	// experiments.md §1.5 and §4.2.
	for _, c := range []struct {
		rate float64
		fr   Framing
		want float64
	}{
		{10e6, TCPTimestamps, 9.564e6},
		{2e6, TCPTimestamps, 1.913e6},
		{12e6, TCPTimestamps, 11.477e6},
		{54e6, TCPTimestamps, 51.65e6},
		{50e6, TCPTimestamps, 47.82e6},
		{10e6, TCPNoTimestamps, 9.643e6},
	} {
		if got := Capacity(c.rate, c.fr); math.Abs(got-c.want) > 0.0005*c.want {
			t.Errorf("Capacity(%g, %v) = %g, want %g", c.rate, c.fr, got, c.want)
		}
	}
	if FramingTCP(1448) != TCPTimestamps || FramingTCP(0) != TCPTimestamps || FramingTCP(1460) != TCPNoTimestamps {
		t.Error("FramingTCP")
	}
	if FramingUDP(160) != (Framing{160, 202}) {
		t.Error("FramingUDP")
	}
}

// flowWith makes a flow with 1-second samples of the given byte counts,
// starting at 0.
func flowWith(bytes ...int64) *Flow {
	f := &Flow{ID: "f", Proto: "tcp", StartS: 0, EndS: float64(len(bytes))}
	for i, b := range bytes {
		f.Samples = append(f.Samples, Sample{TS: float64(i + 1), Bytes: b})
	}
	return f
}

func TestGoodputWindows(t *testing.T) {
	f := flowWith(100, 200, 300, 400)
	if g := Goodput(f, WholeRun(f)); g != 1000*8/4.0 {
		t.Errorf("whole run %g", g)
	}
	// Steady state from 2 s: samples 3 and 4.
	if g := Goodput(f, SteadyState(f, 2)); g != 700*8/2.0 {
		t.Errorf("steady %g", g)
	}
	// A window cutting samples in half: half of 200 + 300 + half of 400.
	if b := f.BytesIn(Window{1.5, 3.5}); b != 100+300+200 {
		t.Errorf("partial window bytes %g", b)
	}
	// Windows beyond the flow are clipped to its life for per-flow goodput …
	if g := Goodput(f, Window{2, 100}); g != 700*8/2.0 {
		t.Errorf("clipped %g", g)
	}
	// … but an aggregate counts the whole window.
	if g := AggregateGoodput([]Flow{*f}, Window{2, 6}); g != 700*8/4.0 {
		t.Errorf("aggregate %g", g)
	}
	// bytes_acked fallback when no sample has Bytes.
	g := &Flow{ID: "g", Proto: "tcp", EndS: 2, Samples: []Sample{
		{TS: 1, TCP: &TCPInfo{BytesAcked: 1000}}, {TS: 2, TCP: &TCPInfo{BytesAcked: 3000}}}}
	if b := g.BytesIn(Window{1, 2}); b != 2000 {
		t.Errorf("bytes_acked fallback %g", b)
	}
	// No samples: bytes_received over the whole flow only.
	h := &Flow{ID: "h", Proto: "tcp", StartS: 1, EndS: 3, BytesReceived: 500}
	if g := Goodput(h, WholeRun(h)); g != 2000 {
		t.Errorf("bytes_received %g", g)
	}
	if g := Goodput(h, Window{2, 3}); g != 0 {
		t.Errorf("partial window without samples %g", g)
	}
}

func TestCommonSteadyState(t *testing.T) {
	fl := []Flow{{StartS: 0, EndS: 20}, {StartS: 3, EndS: 15}}
	if w := CommonSteadyState(fl, 2); w != (Window{5, 15}) {
		t.Errorf("%+v", w)
	}
	fl[1].StartS = 19
	if w := CommonSteadyState(fl, 2); !w.Empty() {
		t.Errorf("non-overlapping flows: %+v", w)
	}
}

func TestRetransAndLoss(t *testing.T) {
	f := &Flow{Samples: []Sample{
		{TS: 1, TCP: &TCPInfo{SegsOut: 1000, Retrans: 0}},
		{TS: 2, TCP: &TCPInfo{SegsOut: 3000, Retrans: 10}},
		{TS: 3, TCP: &TCPInfo{SegsOut: 5000, Retrans: 50}},
	}}
	if r, ok := RetransRatio(f, Window{0, 3}); !ok || r != 50.0/5000 {
		t.Errorf("whole %g %v", r, ok)
	}
	if r, ok := RetransRatio(f, Window{1, 3}); !ok || r != 50.0/4000 {
		t.Errorf("from 1 s %g %v", r, ok)
	}
	if _, ok := RetransRatio(&Flow{}, Window{0, 1}); ok {
		t.Error("no counters should be !ok")
	}
	if r, ok := RetransRatioCounters(map[string]int64{"TcpRetransSegs": 5, "TcpOutSegs": 1000}); !ok || r != 0.005 {
		t.Errorf("counters %g", r)
	}
	if l := UDPLoss(&UDPFlow{Sent: 100, Received: 96, Duplicates: 1}); l != 0.05 {
		t.Errorf("udp loss %g", l)
	}
	l := &Link{SentPackets: 990, DroppedPackets: 10, RandomDrops: 20}
	if QueueDropRatio(l) != 0.01 || !near(RandomDropRatio(l), 20.0/1020, 1e-15) {
		t.Errorf("drop ratios %g %g", QueueDropRatio(l), RandomDropRatio(l))
	}
}

func TestCwnd(t *testing.T) {
	f := &Flow{Samples: []Sample{
		{TS: 1, TCP: &TCPInfo{CwndSegs: 10, MSS: 1448}},
		{TS: 2, TCP: &TCPInfo{CwndSegs: 30, CwndBytes: 43440}},
		{TS: 3},
	}}
	c := Cwnd(f, Window{0, 3})
	if c.N != 2 || c.MeanSegs != 20 || c.MaxSegs != 30 || c.MeanBytes != (14480+43440)/2.0 || c.MaxBytes != 43440 || c.MaxBits != 43440*8 {
		t.Errorf("%+v", c)
	}
}
