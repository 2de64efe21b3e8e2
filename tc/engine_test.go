package tc

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/emuctl/emuctl/units"

	"golang.org/x/sys/unix"
)

// Engine tests push real traffic through h1 <-> [engine] <-> h2 (see
// lab_test.go). Figures are logged with t.Logf; run with -v to see them.

func TestEngineGoodput(t *testing.T) {
	for _, mbit := range []float64{10, 54, 200} {
		t.Run(formatf("%gMbit", mbit), func(t *testing.T) {
			d := Dir{Rate: units.BitRate(mbit * 1e6)}
			l := newEngineLab(t, d, d, 1)
			g := goodput(t, l.h1, l.h2, ip2, time.Second, 2500*time.Millisecond)
			c := capacity(mbit * 1e6)
			st := l.eng.Stats()
			t.Logf("rate %g Mbit/s: goodput %.3f Mbit/s = %.4f × capacity %.3f; a→b queue drops %d, late mean %v max %v",
				mbit, g/1e6, g/c, c/1e6, st.AToB.QueueDrops, st.AToB.LateMean, st.AToB.LateMax)
			if g < 0.95*c || g > 1.02*c {
				t.Errorf("goodput %.3f Mbit/s outside [0.95, 1.02] × %.3f", g/1e6, c/1e6)
			}
		})
	}
}

// TestEngineGoodputHigh reports what the engine achieves at 2 Gbit/s and
// checks the unshaped 10 ms path carries at least 1 Gbit/s of TCP.
func TestEngineGoodputHigh(t *testing.T) {
	t.Run("rate2Gbit", func(t *testing.T) {
		d := Dir{Rate: 2e9}
		l := newEngineLab(t, d, d, 1)
		cpu0, t0 := cpuTime(), time.Now()
		g := goodput(t, l.h1, l.h2, ip2, time.Second, 2*time.Second)
		cpu := cpuTime() - cpu0
		t.Logf("rate 2 Gbit/s: goodput %.1f Mbit/s = %.3f × capacity; process CPU %.2f cores (traffic + engine); stats %+v",
			g/1e6, g/capacity(2e9), cpu.Seconds()/time.Since(t0).Seconds(), l.eng.Stats().AToB)
	})
	t.Run("delay10ms", func(t *testing.T) {
		d := Dir{Delay: 10 * time.Millisecond}
		l := newEngineLab(t, d, d, 1)
		cpu0, t0 := cpuTime(), time.Now()
		g := goodput(t, l.h1, l.h2, ip2, 1500*time.Millisecond, 2*time.Second)
		cpu := cpuTime() - cpu0
		st := l.eng.Stats().AToB
		t.Logf("10 ms each way, no rate: goodput %.1f Mbit/s; process CPU %.2f cores (traffic + engine); a→b %d packets in, %d out; late mean %v max %v",
			g/1e6, cpu.Seconds()/time.Since(t0).Seconds(), st.InPackets, st.OutPackets, st.LateMean, st.LateMax)
		if g < 1e9 {
			t.Errorf("goodput %.1f Mbit/s below 1 Gbit/s", g/1e6)
		}
	})
}

func cpuTime() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestEngineRTTFloor(t *testing.T) {
	for _, delay := range []time.Duration{2 * time.Millisecond, 20 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			d := Dir{Delay: delay}
			l := newEngineLab(t, d, d, 1)
			p := newPinger(t, l.h1)
			p.run(ip2, 5, 5*time.Millisecond, time.Second) // warm up
			s := summarize(p.run(ip2, 100, 10*time.Millisecond, time.Second))
			st := l.eng.Stats()
			t.Logf("delay %v each way: RTT %v (floor +%.3f ms over 2×delay); engine lateness mean %v/%v max %v/%v",
				delay, s, float64(s.min-2*delay)/1e6, st.AToB.LateMean, st.BToA.LateMean, st.AToB.LateMax, st.BToA.LateMax)
			if s.n < 95 {
				t.Fatalf("only %d of 100 echoes answered", s.n)
			}
			if s.min < 2*delay {
				t.Errorf("RTT %v below 2×delay: frames left early", s.min)
			}
			if s.min > 2*delay+300*time.Microsecond {
				t.Errorf("RTT floor %v more than 0.3 ms above 2×delay %v", s.min, 2*delay)
			}
		})
	}
}

func TestEngineLoss(t *testing.T) {
	const n = 20000
	for _, loss := range []units.Percent{1, 10} {
		t.Run(formatf("%g%%", loss), func(t *testing.T) {
			l := newEngineLab(t, Dir{Loss: loss}, Dir{}, 42)
			sink := newUDPSink(t, l.h2, ip2, 6000)
			udpSend(t, l.h1, ip2, 6000, n, 100, 20, time.Millisecond)
			time.Sleep(100 * time.Millisecond)
			got := sink.count()
			st := l.eng.Stats().AToB
			p := loss.Prob()
			mean, sigma := n*(1-p), math.Sqrt(n*p*(1-p))
			z := (float64(got) - mean) / sigma
			t.Logf("loss %g%%: %d of %d delivered (expected %.0f ± %.1f, z = %.2f); engine: in %d, loss drops %d, out %d",
				loss, got, n, mean, sigma, z, st.InPackets, st.LossDrops, st.OutPackets)
			if math.Abs(z) > 3 {
				t.Errorf("delivered %d, more than 3σ from %.0f", got, mean)
			}
			if st.InPackets != n || int(st.LossDrops)+got != n {
				t.Errorf("accounting: in %d, loss drops %d + delivered %d != %d sent", st.InPackets, st.LossDrops, got, n)
			}
		})
	}
}

// TestEngineQueueBound: a 20-packet queue at 2 Mbit/s must bound the RTT
// under a bulk TCP flow to base + 20 full frames' serialisation + 2 ms,
// and must actually fill (TSQ must not hide it). The queue's own peak is
// exact; the RTT check uses the 98th percentile so a process descheduled
// by the (shared, 2-CPU) machine does not count as queueing.
func TestEngineQueueBound(t *testing.T) {
	const rate = 2e6
	base := 5 * time.Millisecond
	d := Dir{Rate: rate, Delay: base, QueuePackets: 20}
	l := newEngineLab(t, d, d, 1)
	p := newPinger(t, l.h1)
	idle := summarize(p.run(ip2, 20, 10*time.Millisecond, time.Second))
	b := startBulk(t, l.h1, l.h2, ip2, 5002)
	time.Sleep(1500 * time.Millisecond)
	rtts := p.run(ip2, 150, 20*time.Millisecond, 2*time.Second)
	b.stop()
	s := summarize(rtts)
	q := time.Duration(20 * 1514 * 8 / rate * float64(time.Second))
	bound := idle.min + q + 2*time.Millisecond
	st := l.eng.Stats().AToB
	t.Logf("2 Mbit/s, 20-packet queue, base RTT %v: idle %v; under CUBIC load %v (p98 %.3f ms); bound %v; queue peak %d, drops %d, engine lateness max %v",
		2*base, idle, s, float64(percentile(rtts, 98))/1e6, bound, st.QueuePeak, st.QueueDrops, st.LateMax)
	if s.n < 50 {
		t.Fatalf("only %d echoes answered under load", s.n)
	}
	if st.QueuePeak != 20 {
		t.Errorf("queue peak %d packets, want exactly 20 (bounded and filled)", st.QueuePeak)
	}
	if p98 := percentile(rtts, 98); p98 > bound {
		t.Errorf("RTT under load p98 %v, above the bound %v", p98, bound)
	}
	if s.p50 < idle.min+q/2 {
		t.Errorf("median RTT under load %v: the queue does not fill (expected near %v)", s.p50, idle.min+q)
	}
}

// TestEngineQueueCubic: one CUBIC flow into a 100-packet queue at
// 10 Mbit/s adds up to 100 × 1514 × 8 / 10 Mbit/s = 121 ms of RTT.
func TestEngineQueueCubic(t *testing.T) {
	const rate = 10e6
	d := Dir{Rate: rate, Delay: time.Millisecond, QueuePackets: 100}
	l := newEngineLab(t, d, d, 1)
	p := newPinger(t, l.h1)
	idle := summarize(p.run(ip2, 20, 10*time.Millisecond, time.Second))
	b := startBulk(t, l.h1, l.h2, ip2, 5003)
	time.Sleep(2 * time.Second)
	rtts := p.run(ip2, 150, 20*time.Millisecond, 2*time.Second)
	b.stop()
	s := summarize(rtts)
	full := time.Duration(100 * 1514 * 8 / rate * float64(time.Second))
	added := percentile(rtts, 98) - idle.min
	st := l.eng.Stats().AToB
	t.Logf("10 Mbit/s, 100-packet queue: idle %v; under CUBIC %v; added RTT p98 %.1f ms, max %.1f ms, mean %.1f ms (full queue = %.1f ms); queue peak %d",
		idle, s, float64(added)/1e6, float64(s.max-idle.min)/1e6, float64(s.mean-idle.min)/1e6, float64(full)/1e6, st.QueuePeak)
	if st.QueuePeak != 100 {
		t.Errorf("queue peak %d packets, want 100", st.QueuePeak)
	}
	if added < full-10*time.Millisecond || added > full+3*time.Millisecond {
		t.Errorf("added RTT (p98) %v, expected ≈ %v", added, full)
	}
	if s.mean-idle.min < full/2 {
		t.Errorf("mean added RTT %v: the queue is not kept full", s.mean-idle.min)
	}
}

// TestEngineAsymmetric checks each direction gets its own parameters.
func TestEngineAsymmetric(t *testing.T) {
	ab := Dir{Rate: 20e6, Delay: 3 * time.Millisecond}
	ba := Dir{Rate: 5e6, Delay: 12 * time.Millisecond}
	l := newEngineLab(t, ab, ba, 1)
	sinkAB := newUDPSink(t, l.h2, ip2, 6001)
	sinkBA := newUDPSink(t, l.h1, ip1, 6001)
	udpSend(t, l.h1, ip2, 6001, 50, 64, 1, 5*time.Millisecond)
	udpSend(t, l.h2, ip1, 6001, 50, 64, 1, 5*time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	owAB, owBA := summarize(sinkAB.delays()), summarize(sinkBA.delays())
	gAB := goodput(t, l.h1, l.h2, ip2, 700*time.Millisecond, 1500*time.Millisecond)
	gBA := goodput(t, l.h2, l.h1, ip1, 700*time.Millisecond, 1500*time.Millisecond)
	t.Logf("one-way a→b %v; b→a %v; goodput a→b %.2f Mbit/s (cap %.2f), b→a %.2f Mbit/s (cap %.2f)",
		owAB, owBA, gAB/1e6, capacity(20e6)/1e6, gBA/1e6, capacity(5e6)/1e6)
	within := func(what string, got, want, tol time.Duration) {
		if got < want || got > want+tol {
			t.Errorf("%s: %v, expected %v (+%v)", what, got, want, tol)
		}
	}
	within("one-way a→b min", owAB.min, ab.Delay, 500*time.Microsecond)
	within("one-way b→a min", owBA.min, ba.Delay, 500*time.Microsecond)
	if gAB < 0.93*capacity(20e6) || gAB > 1.02*capacity(20e6) {
		t.Errorf("a→b goodput %.2f Mbit/s, expected ≈ %.2f", gAB/1e6, capacity(20e6)/1e6)
	}
	if gBA < 0.93*capacity(5e6) || gBA > 1.02*capacity(5e6) {
		t.Errorf("b→a goodput %.2f Mbit/s, expected ≈ %.2f", gBA/1e6, capacity(5e6)/1e6)
	}
}

// TestEngineUpdate changes a running link (emuctl link set).
func TestEngineUpdate(t *testing.T) {
	d := Dir{Delay: 5 * time.Millisecond}
	l := newEngineLab(t, d, d, 1)
	p := newPinger(t, l.h1)
	before := summarize(p.run(ip2, 20, 10*time.Millisecond, time.Second))
	d2 := Dir{Delay: 25 * time.Millisecond, Rate: 20e6}
	if err := l.eng.Update(d2, d2); err != nil {
		t.Fatal(err)
	}
	after := summarize(p.run(ip2, 20, 10*time.Millisecond, time.Second))
	g := goodput(t, l.h1, l.h2, ip2, 1500*time.Millisecond, 1500*time.Millisecond)
	t.Logf("delay 5 ms: %v; after Update to 25 ms + 20 Mbit/s: %v, goodput %.2f Mbit/s", before, after, g/1e6)
	if before.min > 11*time.Millisecond || after.min < 50*time.Millisecond || after.min > 51*time.Millisecond {
		t.Errorf("RTT floors %v → %v, expected ≈ 10 ms → 50 ms", before.min, after.min)
	}
	if g < 0.93*capacity(20e6) || g > 1.02*capacity(20e6) {
		t.Errorf("goodput after Update %.2f Mbit/s, expected ≈ %.2f", g/1e6, capacity(20e6)/1e6)
	}
	if err := l.eng.Update(Dir{Loss: 200}, Dir{}); err == nil {
		t.Error("Update accepted loss 200%")
	}
}

// TestEngineJitterOrder: jitter keeps arrival order unless Reorder.
func TestEngineJitterOrder(t *testing.T) {
	for _, reorder := range []bool{false, true} {
		t.Run(formatf("reorder=%v", reorder), func(t *testing.T) {
			d := Dir{Delay: 10 * time.Millisecond, Jitter: 5 * time.Millisecond, JitterDist: DistNormal, Reorder: reorder}
			l := newEngineLab(t, d, Dir{}, 7)
			sink := newUDPSink(t, l.h2, ip2, 6002)
			udpSend(t, l.h1, ip2, 6002, 2000, 64, 10, time.Millisecond)
			time.Sleep(100 * time.Millisecond)
			s := summarize(sink.delays())
			t.Logf("normal jitter σ=5ms, reorder=%v: one-way %v, %d of %d out of order", reorder, s, sink.reorders(), sink.count())
			if sink.count() != 2000 {
				t.Errorf("%d of 2000 delivered", sink.count())
			}
			if !reorder && sink.reorders() != 0 {
				t.Errorf("%d datagrams reordered with Reorder=false", sink.reorders())
			}
			if reorder && sink.reorders() < 100 {
				t.Errorf("only %d datagrams reordered with Reorder=true and jitter 5 ms at 10 kpps", sink.reorders())
			}
		})
	}
}

// TestEngineTiming measures the engine's added one-way latency with UDP
// probes (the sender and receiver share the process's monotonic clock).
func TestEngineTiming(t *testing.T) {
	d := Dir{Delay: 10 * time.Millisecond}
	l := newEngineLab(t, d, Dir{}, 1)
	sink := newUDPSink(t, l.h2, ip2, 6003)
	udpSend(t, l.h1, ip2, 6003, 2000, 64, 1, 500*time.Microsecond)
	time.Sleep(50 * time.Millisecond)
	ow := sink.delays()
	s := summarize(ow)
	st := l.eng.Stats().AToB
	extra := func(x time.Duration) float64 { return float64(x-d.Delay) / 1e3 }
	t.Logf("one-way over a 10 ms engine link, %d probes: +%.0f µs min, +%.0f p50, +%.0f p90, +%.0f p99, +%.0f max (µs above 10 ms, incl. both sockets' wake-ups); engine late mean %v max %v",
		s.n, extra(s.min), extra(s.p50), extra(percentile(ow, 90)), extra(percentile(ow, 99)), extra(s.max), st.LateMean, st.LateMax)
	if s.n < 1990 {
		t.Errorf("%d of 2000 probes arrived", s.n)
	}
	if s.min < d.Delay {
		t.Errorf("a probe arrived %v early", d.Delay-s.min)
	}
	if s.p50 > d.Delay+300*time.Microsecond {
		t.Errorf("median one-way %v, more than 0.3 ms above the delay", s.p50)
	}
}

// TestEngineLifecycle: construction errors, Close without Run, Close
// stopping Run, Stats after Close.
func TestEngineLifecycle(t *testing.T) {
	requireRoot(t)
	e := newNode(t, "eng")
	h := newNode(t, "h")
	veth(t, h, "tct1", e, "tcta")
	veth(t, e, "tctb", h, "tct2")
	if _, err := NewEngine(e.ns, "tcta", "tcta", Dir{}, Dir{}, 0); err == nil {
		t.Error("same interface twice accepted")
	}
	if _, err := NewEngine(e.ns, "tcta", "tctx", Dir{}, Dir{}, 0); err == nil {
		t.Error("missing interface accepted")
	}
	if _, err := NewEngine(e.ns, "tcta", "tctb", Dir{Loss: -1}, Dir{}, 0); err == nil {
		t.Error("invalid Dir accepted")
	}
	eng, err := NewEngine(e.ns, "tcta", "tctb", Dir{}, Dir{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	eng.Close()
	eng.Close()
	if err := eng.Run(context.Background()); err == nil {
		t.Error("Run after Close succeeded")
	}
	eng, err = NewEngine(e.ns, "tcta", "tctb", Dir{Delay: time.Millisecond}, Dir{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- eng.Run(context.Background()) }()
	time.Sleep(50 * time.Millisecond)
	eng.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after Close: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not stop Run")
	}
	_ = eng.Stats()
	if ab, _ := eng.Config(); ab.Delay != time.Millisecond {
		t.Errorf("Config %v", ab)
	}
}
