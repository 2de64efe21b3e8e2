package tc

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/units"
)

// want describes one expected qdisc of a plan.
type want struct {
	kind           string
	handle, parent string
	netem          *NetemOpts
	tbf            *TBFOpts
	fifo           uint32
}

func TestPlanKernel(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name string
		d    Dir
		mtu  int
		want []want
	}{
		{"unshaped", Dir{}, 1500, nil},
		{"delay", Dir{Delay: 10 * ms}, 1500, []want{
			// limit: 4 × ⌈10 Gbit/s × 10 ms / (8 × 1514)⌉ = 4 × ⌈8256.3⌉ = 33028
			{kind: "netem", handle: "1:", parent: "root", netem: &NetemOpts{Latency: 10 * ms, Limit: 33028}},
		}},
		{"rate only", Dir{Rate: 10_000_000}, 1500, []want{
			{kind: "netem", handle: "1:", parent: "root", netem: &NetemOpts{Rate: 1_250_000, Limit: 100}},
		}},
		{"1 kbit", Dir{Rate: 1000, QueuePackets: 5}, 1500, []want{
			{kind: "netem", handle: "1:", parent: "root", netem: &NetemOpts{Rate: 125, Limit: 5}},
		}},
		{"40 Gbit 64-bit rate", Dir{Rate: 40_000_000_000}, 1500, []want{
			{kind: "netem", handle: "1:", parent: "root", netem: &NetemOpts{Rate: 5_000_000_000, Limit: 100}},
		}},
		{"default queue is the BDP", Dir{Rate: 1_000_000_000, Delay: 10 * ms}, 1500, []want{
			// BDP 1 Gbit/s × 20 ms / 12112 bit = 1651.3 → 1652; delay stage limit adds 33028
			{kind: "netem", handle: "1:", parent: "root", netem: &NetemOpts{Latency: 10 * ms, Limit: 1652 + 33028}},
			{kind: "netem", handle: "2:", parent: "1:1", netem: &NetemOpts{Rate: 125_000_000, Limit: 1652}},
		}},
		{"rate delay loss queue", Dir{Rate: 10_000_000, Delay: 20 * ms, Loss: 1, Corrupt: 0.1, QueuePackets: 50}, 1500, []want{
			{kind: "netem", handle: "1:", parent: "root", netem: &NetemOpts{Latency: 20 * ms, Loss: 1, Corrupt: 0.1, Limit: 50 + 66052}},
			{kind: "netem", handle: "2:", parent: "1:1", netem: &NetemOpts{Rate: 1_250_000, Limit: 50}},
		}},
		{"duplicate with a rate: one netem", Dir{Rate: 10_000_000, Delay: 20 * ms, Duplicate: 0.5, QueuePackets: 50}, 1500, []want{
			// in flight: 10 Mbit/s × 20 ms / 12112 bit = 16.5 → 17
			{kind: "netem", handle: "1:", parent: "root", netem: &NetemOpts{Latency: 20 * ms, Duplicate: 0.5, Rate: 1_250_000, Limit: 50 + 17}},
		}},
		{"jitter keeps order", Dir{Delay: 10 * ms, Jitter: 2 * ms, JitterDist: DistNormal}, 1500, []want{
			// span 4 × 2 ms: 4 × ⌈10 Gbit/s × 18 ms / 12112 bit⌉ = 4 × 14862
			{kind: "netem", handle: "1:", parent: "root", netem: &NetemOpts{Latency: 10 * ms, Jitter: 2 * ms, Dist: DistNormal, Rate: OrderRate, Limit: 59448}},
		}},
		{"jitter reorders", Dir{Delay: 10 * ms, Jitter: 2 * ms, Reorder: true}, 1500, []want{
			{kind: "netem", handle: "1:", parent: "root", netem: &NetemOpts{Latency: 10 * ms, Jitter: 2 * ms, Dist: DistUniform, Limit: 39632}},
		}},
		{"gemodel", Dir{GE: &units.GilbertElliott{P: 1, R: 30, BadLoss: 80, GoodLoss: 0.1}}, 1500, []want{
			{kind: "netem", handle: "1:", parent: "root", netem: &NetemOpts{GE: &units.GilbertElliott{P: 1, R: 30, BadLoss: 80, GoodLoss: 0.1}, Limit: 10000}},
		}},
		{"byte queue", Dir{Rate: 10_000_000, QueueBytes: 30000}, 1500, []want{
			{kind: "netem", handle: "1:", parent: "root", netem: &NetemOpts{Rate: OrderRate, Limit: 10000 + 30000/64}},
			{kind: "tbf", handle: "2:", parent: "1:1", tbf: &TBFOpts{Rate: 1_250_000, Burst: 1518 + 1250, Limit: 30000}},
			{kind: "bfifo", handle: "3:", parent: "2:1", fifo: 30000},
		}},
		{"jumbo frames", Dir{Rate: 1_000_000_000, Delay: 10 * ms}, 9000, []want{
			// BDP 1e9 × 0.02 / (8 × 9014) = 277.4 → 278; delay limit max(10000, 4 × 1e10 × 0.01 / 72112)
			{kind: "netem", handle: "1:", parent: "root", netem: &NetemOpts{Latency: 10 * ms, Limit: 278 + 10000}},
			{kind: "netem", handle: "2:", parent: "1:1", netem: &NetemOpts{Rate: 125_000_000, Limit: 278}},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := PlanKernel(c.d, c.mtu)
			if err != nil {
				t.Fatal(err)
			}
			checkPlan(t, p, c.want)
		})
	}
}

func checkPlan(t *testing.T, p *KernelPlan, ws []want) {
	t.Helper()
	if len(p.Qdiscs) != len(ws) {
		t.Fatalf("plan has %d qdiscs, want %d:\n%s", len(p.Qdiscs), len(ws), p)
	}
	for i, w := range ws {
		q := p.Qdiscs[i]
		if q.Kind != w.kind || handleString(q.Handle) != w.handle || handleString(q.Parent) != w.parent {
			t.Errorf("qdisc %d: %s %s parent %s, want %s %s parent %s", i, q.Kind,
				handleString(q.Handle), handleString(q.Parent), w.kind, w.handle, w.parent)
		}
		switch {
		case w.netem != nil:
			if q.Netem == nil || !netemEqual(*q.Netem, *w.netem) {
				t.Errorf("qdisc %d netem:\n got %+v\nwant %+v", i, deref(q.Netem), *w.netem)
			}
		case w.tbf != nil:
			if q.TBF == nil || *q.TBF != *w.tbf {
				t.Errorf("qdisc %d tbf: got %+v want %+v", i, q.TBF, *w.tbf)
			}
		default:
			if q.FIFO == nil || q.FIFO.Limit != w.fifo {
				t.Errorf("qdisc %d fifo: got %+v want limit %d", i, q.FIFO, w.fifo)
			}
		}
		checkEncodes(t, i, q)
	}
}

func deref(n *NetemOpts) NetemOpts {
	if n == nil {
		return NetemOpts{}
	}
	return *n
}

func netemEqual(a, b NetemOpts) bool {
	ga, gb := a.GE, b.GE
	a.GE, b.GE = nil, nil
	if (ga == nil) != (gb == nil) || (ga != nil && *ga != *gb) {
		return false
	}
	return a == b
}

func TestPlanShaper(t *testing.T) {
	p, err := PlanShaper(Dir{Rate: 10_000_000, QueuePackets: 20}, 1500)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, p, []want{
		{kind: "tbf", handle: "1:", parent: "root", tbf: &TBFOpts{Rate: 1_250_000, Burst: 1518 + 1250, Limit: 20}},
		{kind: "pfifo", handle: "2:", parent: "1:1", fifo: 20},
	})
	// 40 Gbit/s: 64-bit rate, burst = one frame + 1 ms of line rate.
	p, err = PlanShaper(Dir{Rate: 40_000_000_000}, 1500)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, p, []want{
		{kind: "tbf", handle: "1:", parent: "root", tbf: &TBFOpts{Rate: 5_000_000_000, Burst: 1518 + 5_000_000, Limit: 100}},
		{kind: "pfifo", handle: "2:", parent: "1:1", fifo: 100},
	})
	p, err = PlanShaper(Dir{Rate: 1000, QueueBytes: 3000}, 1500)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, p, []want{
		{kind: "tbf", handle: "1:", parent: "root", tbf: &TBFOpts{Rate: 125, Burst: 1518, Limit: 3000}},
		{kind: "bfifo", handle: "2:", parent: "1:1", fifo: 3000},
	})
	if _, err := PlanShaper(Dir{Rate: 1e6, Delay: time.Millisecond}, 1500); !errors.Is(err, ErrNotSupported) {
		t.Errorf("shaper with delay: %v, want ErrNotSupported", err)
	}
	if p, _ := PlanShaper(Dir{}, 1500); len(p.Qdiscs) != 0 {
		t.Errorf("unshaped shaper plan: %v", p)
	}
}

func TestPlanErrors(t *testing.T) {
	if _, err := PlanKernel(Dir{Rate: 1e6, QueuePackets: 10, QueueBytes: 10000}, 1500); !errors.Is(err, ErrNotSupported) {
		t.Errorf("both queue kinds: %v, want ErrNotSupported", err)
	}
	if _, err := PlanKernel(Dir{}, 20); err == nil {
		t.Error("mtu 20 accepted")
	}
	_, err := PlanKernel(Dir{Loss: 101, Delay: -time.Second, JitterDist: "lognormal"}, 1500)
	if err == nil {
		t.Fatal("bad Dir accepted")
	}
	for _, s := range []string{"loss 101%", "delay -1s", `"lognormal"`} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}
}

func TestPlanString(t *testing.T) {
	p, _ := PlanKernel(Dir{Rate: 10e6, Delay: 5 * time.Millisecond, Jitter: time.Millisecond, Loss: 1}, 1500)
	s := p.String()
	for _, sub := range []string{"netem 1: parent root (delay)", "delay 5ms jitter 1ms distribution uniform", "loss 1%", "rate ordering-only",
		"\n  netem 2: parent 1:1 (bottleneck) limit 100", "rate 10Mbit"} {
		if !strings.Contains(s, sub) {
			t.Errorf("plan text lacks %q:\n%s", sub, s)
		}
	}
}

func TestDefaultQueuePackets(t *testing.T) {
	for _, c := range []struct {
		d    Dir
		want int
	}{
		{Dir{}, 0},
		{Dir{Rate: 10e6}, 100},
		{Dir{Rate: 10e6, Delay: 50 * time.Millisecond}, 100},     // BDP 82.6
		{Dir{Rate: 100e6, Delay: 50 * time.Millisecond}, 826},    // 825.6
		{Dir{Rate: 40e9, Delay: 100 * time.Millisecond}, 660502}, // 660501.98
	} {
		if got := DefaultQueuePackets(c.d, 1500); got != c.want {
			t.Errorf("DefaultQueuePackets(%v) = %d, want %d", c.d, got, c.want)
		}
	}
}

func TestDirString(t *testing.T) {
	d := Dir{Rate: 2_500_000, Delay: 5 * time.Millisecond, Jitter: time.Millisecond, JitterDist: DistPareto, Loss: 0.5, QueuePackets: 20}
	if got, want := d.String(), "rate 2.5Mbit delay 5ms jitter 1ms pareto loss 0.5% queue 20p"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if (Dir{}).String() != "unshaped" {
		t.Error("zero Dir is not unshaped")
	}
}
