package tc

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/units"
)

func TestPlanAQM(t *testing.T) {
	ms := time.Millisecond
	codel := &AQM{Discipline: CoDel}
	for _, c := range []struct {
		name  string
		d     Dir
		kinds []string // kind handle parent, in order
		leaf  AQMOpts
	}{
		{"codel, netem orphans", Dir{Rate: 10 * units.Mbit, AQM: codel},
			[]string{"netem 1: root", "tbf 2: 1:1", "codel 3: 2:1"},
			AQMOpts{AQM: AQM{Discipline: CoDel, Target: 5 * ms, Interval: 100 * ms}, Limit: 1000, MTU: 1500}},
		{"fq_codel with a limit and delay", Dir{Rate: 10 * units.Mbit, Delay: 5 * ms, QueuePackets: 500, AQM: &AQM{Discipline: FQCoDel, ECN: true}},
			[]string{"netem 1: root", "tbf 2: 1:1", "fq_codel 3: 2:1"},
			AQMOpts{AQM: AQM{Discipline: FQCoDel, ECN: true, Target: 5 * ms, Interval: 100 * ms, Flows: 1024, Quantum: 1514}, Limit: 500, MTU: 1500}},
		{"pie", Dir{Rate: 10 * units.Mbit, AQM: &AQM{Discipline: PIE, Alpha: 0.13}},
			[]string{"netem 1: root", "tbf 2: 1:1", "pie 3: 2:1"},
			AQMOpts{AQM: AQM{Discipline: PIE, Target: 15 * ms, TUpdate: 15 * ms, Alpha: 0.125, Beta: 1.25}, Limit: 1000, MTU: 1500}},
		{"cake shapes itself", Dir{Rate: 10 * units.Mbit, AQM: &AQM{Discipline: Cake, ECN: true}},
			[]string{"netem 1: root", "cake 2: 1:1"},
			AQMOpts{AQM: AQM{Discipline: Cake, ECN: true, Target: 5 * ms, Interval: 100 * ms}, Rate: 1_250_000, MTU: 1500}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := PlanKernel(c.d, 1500)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Qdiscs) != len(c.kinds) {
				t.Fatalf("plan:\n%s", p)
			}
			for i, k := range c.kinds {
				q := p.Qdiscs[i]
				if got := q.Kind + " " + handleString(q.Handle) + " " + handleString(q.Parent); got != k {
					t.Errorf("qdisc %d: %s, want %s", i, got, k)
				}
				checkEncodes(t, i, q)
			}
			n := p.Qdiscs[0].Netem
			if n == nil || n.Rate != OrderRate || n.Latency != c.d.Delay {
				t.Errorf("delay stage %+v: must orphan (OrderRate) and carry the delay", n)
			}
			leaf := p.Qdiscs[len(p.Qdiscs)-1].AQM
			if leaf == nil || *leaf != c.leaf {
				t.Errorf("leaf:\n got %+v\nwant %+v", leaf, c.leaf)
			}
		})
	}
	// RED: thresholds from iproute2's rules, limit in bytes.
	p, err := PlanKernel(Dir{Rate: 10 * units.Mbit, QueuePackets: 1000, AQM: &AQM{Discipline: RED, ECN: true}}, 1500)
	if err != nil {
		t.Fatal(err)
	}
	red := p.Qdiscs[2].AQM
	if red.Limit != 1514000 || red.AQM.Max != 378500 || red.AQM.Min != 126166 || red.AQM.Probability != 2 || red.AQM.Weight != 1.0/128 {
		t.Errorf("red %+v", red)
	}
	// drop-head: pfifo_head_drop under tbf; without netem tbf is the root.
	p, err = PlanShaper(Dir{Rate: 10 * units.Mbit, QueuePackets: 50, AQM: &AQM{Discipline: DropHead}}, 1500)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Qdiscs) != 2 || p.Qdiscs[1].Kind != "pfifo_head_drop" || p.Qdiscs[1].FIFO.Limit != 50 || p.Qdiscs[0].Parent != handleRoot {
		t.Errorf("drophead plan:\n%s", p)
	}
	// jitter with reordering keeps netem free of OrderRate
	p, _ = PlanKernel(Dir{Rate: 10 * units.Mbit, Delay: 10 * ms, Jitter: ms, Reorder: true, AQM: codel}, 1500)
	if p.Qdiscs[0].Netem.Rate != 0 {
		t.Errorf("reorder lost: %+v", p.Qdiscs[0].Netem)
	}
	s := p.String()
	for _, sub := range []string{"codel 3: parent 2:1 (queue codel) limit 1000 target 5ms interval 100ms", "tbf 2: parent 1:1 (bottleneck)"} {
		if !strings.Contains(s, sub) {
			t.Errorf("plan text lacks %q:\n%s", sub, s)
		}
	}
}

func TestPlanAQMRefused(t *testing.T) {
	for _, c := range []struct {
		d    Dir
		want string
	}{
		{Dir{Rate: 1e7, AQM: &AQM{Discipline: RED, Gentle: true}}, "gentle"},
		{Dir{Rate: 1e7, QueueBytes: 100000, AQM: &AQM{Discipline: CoDel}}, "counts its limit in packets"},
	} {
		_, err := PlanKernel(c.d, 1500)
		if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want ErrNotSupported mentioning %q", c.d, err, c.want)
		}
	}
	if err := (&AQM{Discipline: Cake, ECN: true}).EngineSupports(); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "COBALT") {
		t.Errorf("cake in the engine: %v", err)
	}
}

func TestAQMValidate(t *testing.T) {
	for _, c := range []struct {
		a    AQM
		want string // "" = valid
	}{
		{AQM{Discipline: CoDel, Target: time.Millisecond, Interval: 50 * time.Millisecond, ECN: true}, ""},
		{AQM{Discipline: "fq-codel"}, `"fq-codel" unknown`},
		{AQM{Discipline: DropTail, ECN: true}, "cannot mark ECN"},
		{AQM{Discipline: DropHead, ECN: true}, "cannot mark ECN"},
		{AQM{Discipline: Cake}, "always marks"},
		{AQM{Discipline: CoDel, TUpdate: time.Millisecond}, "codel has no tupdate"},
		{AQM{Discipline: PIE, Interval: time.Millisecond}, "pie has no interval"},
		{AQM{Discipline: PIE, Alpha: 3}, "alpha 3 out of range"},
		{AQM{Discipline: CoDel, Flows: 10}, "codel has no flows"},
		{AQM{Discipline: FQCoDel, Flows: 70000}, "flows 70000 out of range"},
		{AQM{Discipline: CoDel, Target: 200 * time.Millisecond}, ""},
		{AQM{Discipline: CoDel, Target: 200 * time.Millisecond, Interval: 100 * time.Millisecond}, "below interval"},
		{AQM{Discipline: RED, Min: 30000, Max: 20000}, "above max"},
		{AQM{Discipline: RED, Weight: 0.002}, "power of two"},
		{AQM{Discipline: RED, Weight: 1, Probability: 100}, ""},
		{AQM{Discipline: PIE, Gentle: true}, "pie has no gentle"},
	} {
		err := c.a.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.a.String(), err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.a.String(), err, c.want)
		}
	}
	if err := (Dir{AQM: &AQM{Discipline: CoDel}}).Validate(); err == nil || !strings.Contains(err.Error(), "needs a rate") {
		t.Errorf("codel without a rate: %v", err)
	}
}

func TestAQMDefaults(t *testing.T) {
	d := Dir{Rate: units.Mbit, AQM: &AQM{Discipline: FQCoDel}}
	if pk, _ := d.QueueLimits(1500); pk != 10240 {
		t.Errorf("fq_codel default limit %d", pk)
	}
	if got := RoundWeight(0.002); got != 1.0/512 {
		t.Errorf("RoundWeight(0.002) = %g", got)
	}
	// iproute2's burst rule: min 126166 B, max 378500 B, avpkt 1000 → W = 2^-7
	if n := redEWMALog(126166, 378500); n != 7 {
		t.Errorf("Wlog %d, want 7", n)
	}
	stab, cl := REDIdleTable(7, 10*units.Mbit)
	// 1000-byte packets at 10 Mbit/s take 800 µs; -ln(1-2^-7) = 0.00784
	// per packet: 31 bits after 3163 packet times = 2.53 s.
	lW := -math.Log(1-1.0/128) / 800
	if cl != 13 || stab[1] != byte(8192*lW) || stab[255] != 31 {
		t.Errorf("stab cell log %d, stab[1] %d (want %d)", cl, stab[1], byte(8192*lW))
	}
	r := AQM{Discipline: RED, Min: 30000, Max: 30000, Probability: 100, Weight: 1}.RED(1_250_000)
	if r.Wlog != 0 || r.MaxP != math.MaxUint32 || r.MinTh != 30000 {
		t.Errorf("step marking RED %+v", r)
	}
}
