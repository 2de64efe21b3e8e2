//go:build linux

package tc

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/internal/testutil/netlab"
	"github.com/emuctl/emuctl/kernellab"
	"github.com/emuctl/emuctl/units"
)

// Kernel-path tests. This machine's kernel has TBF but no netem: the
// shaper path is tested for real here, the netem path in the kernel lab
// (`make test-kernel`, a VM with a distribution kernel).

// pair is h1 (tct1, 10.9.0.1) <-> h2 (tct2, 10.9.0.2), GSO limits set.
const ip1, ip2 = "10.9.0.1", "10.9.0.2"

func newPair(t *testing.T) (*netlab.Node, *netlab.Node) {
	t.Helper()
	requireRoot(t)
	h1, h2 := netlab.NewNode(t, "h1"), netlab.NewNode(t, "h2")
	netlab.Veth(t, h1, "tct1", h2, "tct2")
	h1.Addr(t, "tct1", ip1+"/24")
	h2.Addr(t, "tct2", ip2+"/24")
	for _, x := range []struct {
		n    *netlab.Node
		name string
	}{{h1, "tct1"}, {h2, "tct2"}} {
		if err := SetGSOLimits(x.n.H, x.n.Link(t, x.name)); err != nil {
			t.Fatal(err)
		}
	}
	return h1, h2
}

// mustPlan(t)(PlanX(...)) fails the test on a planning error.
func mustPlan(t *testing.T) func(*KernelPlan, error) *KernelPlan {
	return func(p *KernelPlan, err error) *KernelPlan {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
}

func TestSetGSOLimits(t *testing.T) {
	h1, _ := newPair(t)
	l := h1.Link(t, "tct1").Attrs()
	if l.GSOMaxSegs != 1 || l.GSOMaxSize != 1514 || l.GROMaxSize != 1514 {
		t.Errorf("gso_max_segs %d gso_max_size %d gro_max_size %d, want 1, 1514, 1514", l.GSOMaxSegs, l.GSOMaxSize, l.GROMaxSize)
	}
}

// TestApplyShaper installs, re-applies, changes and removes a TBF tree
// and checks the rate it gives TCP.
func TestApplyShaper(t *testing.T) {
	netlab.SkipInLab(t)
	h1, h2 := newPair(t)
	link := h1.Link(t, "tct1")
	p := mustPlan(t)(PlanShaper(Dir{Rate: 50e6, QueuePackets: 50}, 1500))
	if err := ApplyKernel(h1.NS, link, p); err != nil {
		t.Fatal(err)
	}
	tree, err := ReadTree(h1.NS, link)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree) != 2 || tree[0].Kind != "tbf" || tree[0].TBF.Rate != 6_250_000 || tree[0].TBF.Limit != 50 ||
		tree[1].Kind != "pfifo" || tree[1].Parent != 1<<16|1 || tree[1].FIFO.Limit != 50 {
		t.Fatalf("installed tree:\n%s", formatTree(tree))
	}
	if b := tree[0].TBF.Burst; b < 1518+6250-2 || b > 1518+6250+2 {
		t.Errorf("tbf burst read back as %d, want %d", b, 1518+6250)
	}
	// timed: a run that lacked CPU is made again, never judged
	g := testutil.RetryStarved(t, "TCP through TBF", false, func() float64 {
		return netlab.Goodput(t, h1, h2, ip2, time.Second, 2*time.Second)
	})
	t.Logf("TBF 50 Mbit/s on the sender's egress: goodput %.3f Mbit/s = %.4f × capacity", g/1e6, g/netlab.Capacity(50e6))
	if g < 0.95*netlab.Capacity(50e6) || g > 1.02*netlab.Capacity(50e6) {
		t.Errorf("goodput %.2f Mbit/s, want ≈ %.2f", g/1e6, netlab.Capacity(50e6)/1e6)
	}
	before, _ := ReadTree(h1.NS, link)
	// applying the same plan again changes nothing but keeps the counters
	if err := ApplyKernel(h1.NS, link, p); err != nil {
		t.Fatal(err)
	}
	// a new rate and queue are changed in place: counters survive
	p2 := mustPlan(t)(PlanShaper(Dir{Rate: 20e6, QueuePackets: 30}, 1500))
	if err := ApplyKernel(h1.NS, link, p2); err != nil {
		t.Fatal(err)
	}
	after, _ := ReadTree(h1.NS, link)
	if len(after) != 2 || after[0].TBF.Rate != 2_500_000 || after[0].TBF.Limit != 30 || after[1].FIFO.Limit != 30 {
		t.Fatalf("after change:\n%s", formatTree(after))
	}
	if after[0].Stats == nil || after[0].Stats.Packets < before[0].Stats.Packets || before[0].Stats.Packets == 0 {
		t.Errorf("tree was rebuilt instead of changed: packets %d → %d", before[0].Stats.Packets, after[0].Stats.Packets)
	}
	text, err := ReadBack(h1.NS, link)
	if err != nil || !strings.Contains(text, "tbf 1: parent root rate 20Mbit") || !strings.Contains(text, "\n  pfifo 2: parent 1:1 limit 30p") {
		t.Errorf("ReadBack: %v\n%s", err, text)
	}
	t.Logf("ReadBack after change:\n%s", text)
	// bytes instead of packets: the shape changes (pfifo → bfifo), rebuilt
	p3 := mustPlan(t)(PlanShaper(Dir{Rate: 20e6, QueueBytes: 60000}, 1500))
	if err := ApplyKernel(h1.NS, link, p3); err != nil {
		t.Fatal(err)
	}
	if tr, _ := ReadTree(h1.NS, link); len(tr) != 2 || tr[1].Kind != "bfifo" || tr[1].FIFO.Limit != 60000 || tr[0].TBF.Limit != 60000 {
		t.Errorf("bytes queue:\n%s", formatTree(tr))
	}
	// unshaped: back to the device default
	if err := ApplyKernel(h1.NS, link, &KernelPlan{}); err != nil {
		t.Fatal(err)
	}
	if tr, _ := ReadTree(h1.NS, link); len(tr) != 0 {
		t.Errorf("after removal:\n%s", formatTree(tr))
	}
	if err := ApplyKernel(h1.NS, link, &KernelPlan{}); err != nil {
		t.Errorf("removing twice: %v", err)
	}
}

// TestShaperQueueAtRouter: TBF + pfifo on an L3 router's egress, where IP
// forwarding has orphaned the packets, holds a real 20-packet queue.
func TestShaperQueueAtRouter(t *testing.T) {
	requireRoot(t)
	netlab.SkipInLab(t)
	h1, r, h2 := netlab.NewNode(t, "h1"), netlab.NewNode(t, "r"), netlab.NewNode(t, "h2")
	netlab.Veth(t, h1, "tct1", r, "tctr1")
	netlab.Veth(t, r, "tctr2", h2, "tct2")
	h1.Addr(t, "tct1", "10.9.1.1/24")
	r.Addr(t, "tctr1", "10.9.1.254/24")
	r.Addr(t, "tctr2", "10.9.2.254/24")
	h2.Addr(t, "tct2", "10.9.2.1/24")
	h1.Route(t, "10.9.2.0/24", "10.9.1.254")
	h2.Route(t, "10.9.1.0/24", "10.9.2.254")
	r.Sysctl(t, "net/ipv4/ip_forward", "1")
	for _, x := range []struct {
		n    *netlab.Node
		name string
	}{{h1, "tct1"}, {r, "tctr1"}, {r, "tctr2"}, {h2, "tct2"}} {
		if err := SetGSOLimits(x.n.H, x.n.Link(t, x.name)); err != nil {
			t.Fatal(err)
		}
	}
	const rate = 2e6
	if err := ApplyKernel(r.NS, r.Link(t, "tctr2"), mustPlan(t)(PlanShaper(Dir{Rate: rate, QueuePackets: 20}, 1500))); err != nil {
		t.Fatal(err)
	}
	p := netlab.NewPinger(t, h1)
	idle := netlab.Summarize(p.Run("10.9.2.1", 20, 10*time.Millisecond, time.Second))
	b := netlab.StartBulk(t, h1, h2, "10.9.2.1", 5004)
	time.Sleep(1500 * time.Millisecond)
	s := netlab.Summarize(p.Run("10.9.2.1", 100, 20*time.Millisecond, 2*time.Second))
	b.Stop()
	q := time.Duration(20 * 1514 * 8 / rate * float64(time.Second))
	bound := idle.Min + q + 2*time.Millisecond
	text, _ := ReadBack(r.NS, r.Link(t, "tctr2"))
	t.Logf("router egress TBF 2 Mbit/s + pfifo 20: idle %v; under CUBIC %v; bound %v\n%s", idle, s, bound, text)
	if s.Max > bound {
		t.Errorf("RTT %v above the bound %v", s.Max, bound)
	}
	if s.P50 < idle.Min+q/2 {
		t.Errorf("median RTT %v: the queue does not fill", s.P50)
	}
}

// TestApplyNetemMissing: on a kernel without netem the netem plan fails
// cleanly with ErrNotSupported and leaves the device default.
func TestApplyNetemMissing(t *testing.T) {
	requireRoot(t)
	if Probe().Netem {
		t.Skip("this kernel has netem")
	}
	h1, _ := newPair(t)
	link := h1.Link(t, "tct1")
	err := ApplyKernel(h1.NS, link, mustPlan(t)(PlanKernel(Dir{Delay: time.Millisecond}, 1500)))
	if !errors.Is(err, ErrNotSupported) {
		t.Fatalf("netem plan without netem: %v, want ErrNotSupported", err)
	}
	t.Logf("error: %v", err)
	if tr, _ := ReadTree(h1.NS, link); len(tr) != 0 {
		t.Errorf("left behind:\n%s", formatTree(tr))
	}
}

// requireNetem skips without netem (naming `make test-kernel`), except in
// the kernel lab (EMUCTL_KERNEL_LAB=1) where a missing netem is a failure.
func requireNetem(t *testing.T) {
	t.Helper()
	requireRoot(t)
	c := Probe()
	kernellab.Require(t, "sch_netem", c.Netem, c.Reasons["netem"])
}

// TestApplyNetem installs netem plans on both ends of a veth pair and
// checks the tree, the delay, the rate and the queue.
func TestApplyNetem(t *testing.T) {
	requireNetem(t)
	h1, h2 := newPair(t)
	l1, l2 := h1.Link(t, "tct1"), h2.Link(t, "tct2")
	const rate = 20e6
	d := Dir{Rate: rate, Delay: 10 * time.Millisecond, QueuePackets: 50}
	p := mustPlan(t)(PlanKernel(d, 1500))
	p.SetSeed(1)
	if err := ApplyKernel(h1.NS, l1, p); err != nil {
		t.Fatal(err)
	}
	if err := ApplyKernel(h2.NS, l2, p); err != nil {
		t.Fatal(err)
	}
	tree, err := ReadTree(h1.NS, l1)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree) != 2 || tree[0].Kind != "netem" || tree[0].Netem.Latency != 10*time.Millisecond ||
		tree[1].Kind != "netem" || tree[1].Parent != 1<<16|1 || tree[1].Netem.Rate != 2_500_000 || tree[1].Netem.Limit != 50 {
		t.Fatalf("installed tree:\n%s", formatTree(tree))
	}
	slack := netlab.LabSlack()
	pg := netlab.NewPinger(t, h1)
	pg.Run(ip2, 3, 10*time.Millisecond, time.Second) // warm up
	idle := netlab.Summarize(pg.Run(ip2, 30, 10*time.Millisecond, time.Second))
	t.Logf("netem 10 ms each way: idle RTT %v", idle)
	if idle.Min < 20*time.Millisecond || idle.Min > 21*time.Millisecond+slack {
		t.Errorf("RTT floor %v, want 20 ms (+1 ms)", idle.Min)
	}
	b := netlab.StartBulk(t, h1, h2, ip2, 5005)
	time.Sleep(1500 * time.Millisecond)
	b0, t0 := b.Received.Load(), time.Now()
	rtts := pg.Run(ip2, 100, 20*time.Millisecond, 2*time.Second)
	g := float64(b.Received.Load()-b0) * 8 / time.Since(t0).Seconds()
	b.Stop()
	s := netlab.Summarize(rtts)
	q := time.Duration(50 * 1514 * 8 / rate * float64(time.Second))
	t.Logf("under CUBIC: RTT %v (queue adds up to %v); goodput %.2f Mbit/s (cap %.2f)", s, q, g/1e6, netlab.Capacity(rate)/1e6)
	if p98 := netlab.Percentile(rtts, 98); p98 > idle.Min+q+2*time.Millisecond+slack {
		t.Errorf("RTT p98 %v above base + queue + 2 ms", p98)
	}
	lo := 0.93
	if kernellab.InLab() {
		lo = 0.7 // TCP under QEMU TCG falls short of the rate now and then; the rate itself is the kernel's
	}
	// the queue fills only behind a sender that keeps up with the rate:
	// under QEMU TCG one that fell short (16.76 of 19.13 Mbit/s in a
	// rehearsal, median RTT 32.9 ms) leaves it half empty, not judged
	switch {
	case s.P50 >= idle.Min+q/2:
	case g < 0.93*netlab.Capacity(rate) && kernellab.InLab():
		t.Logf("median RTT %v with the emulated sender at %.2f of capacity: the queue's fill not judged", s.P50, g/netlab.Capacity(rate))
	default:
		t.Errorf("median RTT %v: the queue does not fill (TSQ?)", s.P50)
	}
	if g < lo*netlab.Capacity(rate) || g > 1.02*netlab.Capacity(rate) {
		t.Errorf("goodput %.2f Mbit/s, want [%.2f, 1.02] × %.2f", g/1e6, lo, netlab.Capacity(rate)/1e6)
	}
	// re-apply: unchanged; change: in place
	if err := ApplyKernel(h1.NS, l1, p); err != nil {
		t.Fatal(err)
	}
	d2 := Dir{Rate: 10e6, Delay: 5 * time.Millisecond, Jitter: time.Millisecond, JitterDist: DistNormal,
		GE: &units.GilbertElliott{P: 1, R: 20, BadLoss: 50, GoodLoss: 0}, QueuePackets: 30}
	if err := ApplyKernel(h1.NS, l1, mustPlan(t)(PlanKernel(d2, 1500))); err != nil {
		t.Fatal(err)
	}
	tree, _ = ReadTree(h1.NS, l1)
	t.Logf("after change:\n%s", formatTree(tree))
	if len(tree) != 2 || tree[0].Netem.Latency != 5*time.Millisecond || tree[0].Netem.Jitter != time.Millisecond ||
		tree[0].Netem.GE == nil || tree[1].Netem.Rate != 1_250_000 || tree[1].Netem.Limit != 30 {
		t.Errorf("changed tree:\n%s", formatTree(tree))
	}
	// every layout the planner makes must be accepted by the kernel
	for _, dd := range []Dir{
		{Delay: time.Millisecond},
		{Rate: 1e6},
		{Rate: 40e9},
		{Loss: 1, Duplicate: 1, Corrupt: 1},
		{Delay: time.Millisecond, Jitter: time.Millisecond, JitterDist: DistPareto, Reorder: true},
		{Rate: 5e6, QueueBytes: 20000, Delay: time.Millisecond},
		{Rate: 5e6, Duplicate: 1, Delay: time.Millisecond, QueuePackets: 20},
		{},
	} {
		if err := ApplyKernel(h1.NS, l1, mustPlan(t)(PlanKernel(dd, 1500))); err != nil {
			t.Errorf("%v: %v", dd, err)
		}
	}
}
