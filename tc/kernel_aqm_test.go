//go:build linux

package tc

import (
	"testing"
	"time"

	"github.com/emuctl/emuctl/kernellab"
	"github.com/emuctl/emuctl/units"
)

// TestApplyDisciplines installs every discipline's tree on a veth end,
// reads it back (kinds, parents and the leaf's parameters as the kernel
// reports them), changes it in place, and removes it. It needs the
// discipline qdiscs and netem: in the kernel lab (`make test-kernel`);
// here drop-head alone runs on the shaper path.
func TestApplyDisciplines(t *testing.T) {
	h1, _ := newPair(t)
	link := h1.Link(t, "tct1")
	caps := Probe()
	ms := time.Millisecond
	for _, c := range []struct {
		aqm    AQM
		limit  int
		leaf   string
		change AQM // applied in place afterwards
	}{
		{AQM{Discipline: CoDel, Target: 3 * ms, Interval: 60 * ms, ECN: true}, 500, "codel",
			AQM{Discipline: CoDel, Target: 4 * ms, Interval: 60 * ms}},
		{AQM{Discipline: FQCoDel, ECN: true, Flows: 256}, 800, "fq_codel",
			AQM{Discipline: FQCoDel, ECN: true, Flows: 256, Target: 10 * ms}},
		{AQM{Discipline: PIE, Alpha: 0.25, Beta: 2}, 300, "pie",
			AQM{Discipline: PIE, Target: 20 * ms}},
		{AQM{Discipline: RED, ECN: true, Min: 30000, Max: 90000, Probability: 10}, 200, "red",
			AQM{Discipline: RED, Min: 20000, Max: 60000, Probability: 5}},
		{AQM{Discipline: Cake, ECN: true, Target: 4 * ms, Interval: 80 * ms}, 0, "cake",
			AQM{Discipline: Cake, ECN: true}},
		{AQM{Discipline: DropHead}, 50, "pfifo_head_drop", AQM{Discipline: DropHead}},
	} {
		t.Run(c.aqm.Discipline, func(t *testing.T) {
			kernellab.Require(t, "qdisc "+c.leaf, caps.AQM[c.aqm.Discipline], caps.Reasons[c.aqm.Discipline])
			d := Dir{Rate: 10 * units.Mbit, QueuePackets: c.limit, AQM: &c.aqm}
			plan := PlanShaper
			if caps.Netem {
				plan = PlanKernel
			} else {
				d.Delay = 0
			}
			p := mustPlan(t)(plan(d, 1500))
			if err := ApplyKernel(h1.NS, link, p); err != nil {
				t.Fatal(err)
			}
			tree, err := ReadTree(h1.NS, link)
			if err != nil {
				t.Fatal(err)
			}
			if len(tree) != len(p.Qdiscs) {
				t.Fatalf("installed:\n%splanned:\n%s", formatTree(tree), p)
			}
			got, want := tree[len(tree)-1], p.Qdiscs[len(p.Qdiscs)-1]
			if got.Kind != c.leaf || got.Parent != want.Parent {
				t.Fatalf("leaf %s parent %s, want %s parent %s", got.Kind, handleString(got.Parent), c.leaf, handleString(want.Parent))
			}
			checkLeaf(t, got, want)
			if got.Stats == nil {
				t.Error("no counters read back")
			} else if c.leaf != "pfifo_head_drop" && !got.Stats.XStats {
				t.Errorf("%s: no xstats decoded", c.leaf)
			}
			t.Logf("installed:\n%s", formatTree(tree))
			// change in place: same shape, new parameters, counters kept
			d.AQM = &c.change
			p2 := mustPlan(t)(plan(d, 1500))
			if err := ApplyKernel(h1.NS, link, p2); err != nil {
				t.Fatal(err)
			}
			tree, _ = ReadTree(h1.NS, link)
			checkLeaf(t, tree[len(tree)-1], p2.Qdiscs[len(p2.Qdiscs)-1])
			if err := ApplyKernel(h1.NS, link, &KernelPlan{MTU: 1500}); err != nil {
				t.Fatal(err)
			}
			if tree, _ := ReadTree(h1.NS, link); len(tree) != 0 {
				t.Errorf("left behind:\n%s", formatTree(tree))
			}
		})
	}
}

// checkLeaf compares the parameters a leaf reads back with the plan's.
func checkLeaf(t *testing.T, got, want Qdisc) {
	t.Helper()
	if want.FIFO != nil {
		if got.FIFO == nil || got.FIFO.Limit != want.FIFO.Limit {
			t.Errorf("%s limit %+v, want %d", got.Kind, got.FIFO, want.FIFO.Limit)
		}
		return
	}
	g, w := got.AQM, want.AQM
	if g == nil {
		t.Fatalf("%s: options not read back", got.Kind)
	}
	ga, wa := g.AQM, w.AQM
	ok := ga.ECN == wa.ECN
	// The kernel keeps CoDel's times in 1024 ns units (codel_time_t) and
	// PIE's update period in jiffies (15 ms reads back as 16 ms at
	// HZ=250): the read-back is the planned value so quantised.
	near := func(a, b, tol time.Duration) bool { return (a - b).Abs() <= tol }
	us := time.Microsecond
	switch got.Kind {
	case "codel":
		ok = ok && g.Limit == w.Limit && near(ga.Target, wa.Target, 2*us) && near(ga.Interval, wa.Interval, 2*us)
	case "fq_codel":
		ok = ok && g.Limit == w.Limit && near(ga.Target, wa.Target, 2*us) && near(ga.Interval, wa.Interval, 2*us) && ga.Flows == wa.Flows && ga.Quantum == wa.Quantum
	case "pie":
		ok = ok && g.Limit == w.Limit && ga.Target == wa.Target && ga.TUpdate >= wa.TUpdate && ga.TUpdate < wa.TUpdate+10*time.Millisecond &&
			ga.Alpha == wa.Alpha && ga.Beta == wa.Beta
		if ga.TUpdate != wa.TUpdate {
			t.Logf("pie: tupdate %v reads back as %v (the kernel's timer counts jiffies)", wa.TUpdate, ga.TUpdate)
		}
	case "red":
		ok = ok && g.Limit == w.Limit && ga.Min == wa.Min && ga.Max == wa.Max && ga.Weight == wa.Weight &&
			(ga.Probability-wa.Probability) < 1e-6 && (wa.Probability-ga.Probability) < 1e-6
	case "cake":
		ok = g.Rate == w.Rate && ga.Target == wa.Target && ga.Interval == wa.Interval
	}
	if !ok {
		t.Errorf("%s read back %+v (limit %d, rate %d), planned %+v (limit %d, rate %d)", got.Kind, ga, g.Limit, g.Rate, wa, w.Limit, w.Rate)
	}
}
