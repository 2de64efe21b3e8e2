package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/internal/testutil/netlab"
	"github.com/emuctl/emuctl/kernellab"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/units"
)

// TestAQMEngineVsKernel runs the same scenarios through the engine's
// disciplines and the kernel's qdiscs (netem + tbf + codel/fq_codel/pie/
// red, emuctl's kernel plan) and holds the engine to the kernel, a
// reference nobody here wrote: goodput and the median RTT of echoes
// beside the flows must agree within 20 %. It needs netem and the
// qdiscs: it runs in the kernel lab (`make test-kernel`), or on a machine
// that has them. The link runs at 5 Mbit/s: under software emulation
// (QEMU TCG on a busy 2-core host) neither the kernel nor the engine
// keeps a 10 Mbit/s CUBIC flow at capacity (measured: 5.4-8.5 Mbit/s,
// run to run), which would compare the emulator's hiccups.
func TestAQMEngineVsKernel(t *testing.T) {
	testutil.NeedRoot(t)
	caps := tc.Probe()
	kernellab.Require(t, "sch_netem", caps.Netem, caps.Reasons["netem"])
	for _, c := range []struct {
		name  string
		aqm   *tc.AQM
		limit int
		flows int
		ecn   bool
	}{
		{"droptail 100", nil, 100, 1, false},
		{"codel", &tc.AQM{Discipline: tc.CoDel}, aqmLimit, 1, false},
		{"fq_codel", &tc.AQM{Discipline: tc.FQCoDel, ECN: true}, aqmLimit, 2, false},
		{"pie", &tc.AQM{Discipline: tc.PIE}, aqmLimit, 1, false},
		{"red ecn", &tc.AQM{Discipline: tc.RED, ECN: true, Min: 20 * 1514, Max: 60 * 1514, Probability: 10}, aqmLimit, 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.aqm != nil {
				kernellab.Require(t, "qdisc "+c.aqm.Discipline, caps.AQM[c.aqm.Discipline], caps.Reasons[c.aqm.Discipline])
			}
			d := tc.Dir{Rate: cmpRate, Delay: aqmDelay, QueuePackets: c.limit, AQM: c.aqm}
			warm, measure := 3*time.Second, 8*time.Second
			// One comparison is two runs of 11 s, one after the other,
			// under software emulation on a shared machine. A pair during
			// which the VM lost its CPU for longer than maxStall (a 2 ms
			// timer woke that late: seen 107-447 ms while the host built
			// Go) is invalid, not judged, and measured again; a valid pair
			// that disagrees is measured once more too (a CUBIC sawtooth
			// phase can put one pair apart): two valid pairs that disagree
			// fail. Of at most four pairs, none valid, or a disagreement
			// never measured again on a valid pair, skips the case as not
			// judged.
			var disagreed []string
			twice := false
			for try := 1; try <= 4; try++ {
				var k, e aqmResult
				var kq kernelQueue
				load := testutil.MeasureHost(func() {
					k, kq = runKernelAQM(t, d, c.flows, c.ecn, warm, measure)
					e = runEngineAQM(t, d, c.flows, c.ecn, warm, measure)
				})
				gr := e.goodput / k.goodput
				rr := float64(e.load.P50) / float64(k.load.P50)
				t.Logf("%s (try %d, %v):\n  kernel: goodput %.3f Mbit/s; echo RTT idle %v; under load %v; %s\n  engine: goodput %.3f Mbit/s; echo RTT idle %v; under load %v; sojourn p50 %v p95 %v; limit drops %d, aqm drops %d, marks %d; late mean %v\n  engine/kernel: goodput %.3f, RTT p50 %.3f, RTT p95 %.3f",
					c.name, try, load, k.goodput/1e6, k.idle, k.load, kq, e.goodput/1e6, e.idle, e.load, e.st.Sojourn.P50, e.st.Sojourn.P95,
					e.st.QueueDrops, e.st.AQMDrops, e.st.Marks, e.st.LateMean, gr, rr, float64(e.load.P95)/float64(k.load.P95))
				if load.Stall > maxStall {
					t.Logf("%s: pair %d invalid, not judged: a 2 ms timer woke %v late (> %v)", c.name, try, load.Stall.Round(time.Millisecond), maxStall)
					continue
				}
				var bad []string
				if gr < 0.8 || gr > 1.25 {
					bad = append(bad, fmt.Sprintf("goodput: engine %.3f vs kernel %.3f Mbit/s (ratio %.3f, want within 20 %%)", e.goodput/1e6, k.goodput/1e6, gr))
				}
				if rr < 0.8 || rr > 1.25 {
					bad = append(bad, fmt.Sprintf("echo RTT p50 under load: engine %v vs kernel %v (ratio %.3f, want within 20 %%)", e.load.P50, k.load.P50, rr))
				}
				if len(bad) == 0 {
					return
				}
				if disagreed != nil {
					disagreed, twice = append(disagreed, bad...), true
					break
				}
				disagreed = bad
				t.Logf("%s: valid pair %d disagrees, measuring once more: %s", c.name, try, strings.Join(bad, "; "))
			}
			switch {
			case disagreed == nil:
				t.Skipf("%s: four pairs invalid (the VM starved), not judged", c.name)
			case !twice:
				t.Skipf("%s: one valid pair disagreed (%s) and the others were invalid (the VM starved): not judged", c.name, strings.Join(disagreed, "; "))
			}
			for _, b := range disagreed {
				t.Error(b)
			}
		})
	}
}

const cmpRate = 5 * units.Mbit

// maxStall: a pair during which a 2 ms timer woke later than this is
// invalid (about five times the stalls a quiet TCG guest shows, 16-40 ms).
const maxStall = 100 * time.Millisecond

// runEngineAQM is runAQM without the lateness gate (software emulation
// is late by nature; the kernel beside it is the yardstick).
func runEngineAQM(t *testing.T, d tc.Dir, flows int, ecn bool, warm, measure time.Duration) aqmResult {
	t.Helper()
	l := &engineLab{}
	l.h1, l.e, l.h2 = labNodes(t)
	l.start(t, d, tc.Dir{Rate: d.Rate, Delay: aqmDelay}, 1)
	r := runTraffic(t, l.h1, l.h2, flows, ecn, warm, measure)
	r.st = l.eng.Stats().AToB
	return r
}

// kernelQueue is what the kernel's queue did over a run.
type kernelQueue struct {
	leaf               tc.Qdisc
	delayP50, delayP95 time.Duration // backlog × 8 / rate, sampled every 10 ms after warm-up
}

func (k kernelQueue) String() string {
	s := k.leaf.Stats
	if s == nil {
		return "no counters"
	}
	return fmt.Sprintf("%s: drops %d (limit %d, aqm %d), marks %d; queueing delay (backlog/rate, sampled) p50 %v p95 %v", k.leaf.Kind,
		s.Drops, s.LimitDrops, s.AQMDrops(), s.Marks, k.delayP50, k.delayP95)
}

// runKernelAQM: h1 <-veth-> h2 with emuctl's kernel plan for d on h1's
// egress (and the plain rate and delay back), the same traffic.
func runKernelAQM(t *testing.T, d tc.Dir, flows int, ecn bool, warm, measure time.Duration) (aqmResult, kernelQueue) {
	t.Helper()
	h1, h2 := netlab.NewNode(t, "kh1"), netlab.NewNode(t, "kh2")
	netlab.Veth(t, h1, "tct1", h2, "tct2")
	h1.Addr(t, "tct1", ip1+"/24")
	h2.Addr(t, "tct2", ip2+"/24")
	h1.Neigh(t, "tct1", ip2, h2.Link(t, "tct2").Attrs().HardwareAddr)
	h2.Neigh(t, "tct2", ip1, h1.Link(t, "tct1").Attrs().HardwareAddr)
	for _, x := range []struct {
		n    *netlab.Node
		name string
		d    tc.Dir
	}{{h1, "tct1", d}, {h2, "tct2", tc.Dir{Rate: d.Rate, Delay: aqmDelay}}} {
		link := x.n.Link(t, x.name)
		if err := tc.SetGSOLimits(x.n.H, link); err != nil {
			t.Fatal(err)
		}
		p, err := tc.PlanKernel(x.d, link.Attrs().MTU)
		if err != nil {
			t.Fatal(err)
		}
		if err := tc.ApplyKernel(x.n.NS, link, p); err != nil {
			t.Fatal(err)
		}
	}
	link := h1.Link(t, "tct1")
	var mu sync.Mutex
	var delays []time.Duration
	stop := make(chan struct{})
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if time.Since(start) < warm+time.Second {
				continue
			}
			tree, err := tc.ReadTree(h1.NS, link)
			if err != nil || len(tree) == 0 || tree[len(tree)-1].Stats == nil {
				continue
			}
			b := tree[len(tree)-1].Stats.Backlog
			mu.Lock()
			delays = append(delays, time.Duration(float64(b)*8/float64(d.Rate)*1e9))
			mu.Unlock()
		}
	}()
	r := runTraffic(t, h1, h2, flows, ecn, warm, measure)
	close(stop)
	<-done
	var kq kernelQueue
	if tree, err := tc.ReadTree(h1.NS, link); err == nil && len(tree) > 0 {
		kq.leaf = tree[len(tree)-1]
	}
	slices.Sort(delays)
	if n := len(delays); n > 0 {
		kq.delayP50, kq.delayP95 = delays[n/2], delays[n*95/100]
	}
	return r, kq
}
