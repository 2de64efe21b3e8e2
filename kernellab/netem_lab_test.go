package kernellab

import (
	"net"
	"slices"
	"testing"
	"time"

	"github.com/emuctl/emuctl/tc"
)

// Tolerances for the RTT over two 10 ms netem qdiscs (20 ms in total). netem
// never sends early, so the floor (the smallest of the samples) must be at
// least 20 ms. Above it, software emulation (QEMU TCG, no KVM) adds timer and
// scheduling jitter. Measured in the lab: floor 20.4-21.2 ms, median
// 21.5-22.0 ms, max up to 28 ms; with the host's CPUs busy, median 23.4 ms
// and max 38 ms. So the floor may be up to 10 ms late and the median 25 ms.
const (
	netemDelay       = 10 * time.Millisecond // per direction
	netemFloorSlack  = 10 * time.Millisecond
	netemMedianSlack = 25 * time.Millisecond
	netemSamples     = 20
)

// TestLabNetemDelay: two namespaces joined by a veth, a 10 ms delay planned
// and applied by emuctl's tc package (netem) on both ends, and the
// round-trip time measured from Go with ICMP echo.
func TestLabNetemDelay(t *testing.T) {
	RequireLab(t, "needs sch_netem, which this kernel may lack")
	a, b := newNS(t, "netem-a"), newNS(t, "netem-b")
	veth(t, a, "eth0", b, "eth0")
	a.addr(t, "eth0", "10.71.0.1/24")
	b.addr(t, "eth0", "10.71.0.2/24")

	caps := tc.Probe()
	Require(t, "sch_netem", caps.Netem, errString(caps.Err("netem")))
	for _, ns := range []*testNS{a, b} {
		link := ns.link(t, "eth0")
		plan, err := tc.PlanKernel(tc.Dir{Delay: netemDelay}, link.Attrs().MTU)
		if err != nil {
			t.Fatal(err)
		}
		if err := tc.ApplyKernel(ns.H, link, plan); err != nil {
			t.Fatalf("%s: %v", ns.Name, err)
		}
		qs, err := tc.ReadTree(ns.H, link)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(qs, func(q tc.Qdisc) bool {
			return q.Kind == "netem" && q.Netem != nil && (q.Netem.Latency-netemDelay).Abs() < time.Microsecond
		}) {
			t.Fatalf("%s: no netem qdisc with %v latency read back: %+v", ns.Name, netemDelay, qs)
		}
	}

	// The first echo also resolves the neighbour (one more round trip): warm up.
	if _, err := icmpEcho(a, net.ParseIP("10.71.0.2"), 1, 0, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	rtts, err := icmpEcho(a, net.ParseIP("10.71.0.2"), netemSamples, 20*time.Millisecond, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rtts)
	floor, median := rtts[0], rtts[len(rtts)/2]
	want := 2 * netemDelay
	t.Logf("RTT over 2x%v netem: floor %v, median %v, max %v (%d samples)", netemDelay, floor, median, rtts[len(rtts)-1], len(rtts))
	if floor < want {
		t.Errorf("RTT floor %v is below the configured %v: netem is not delaying", floor, want)
	}
	if floor > want+netemFloorSlack {
		t.Errorf("RTT floor %v exceeds %v + %v", floor, want, netemFloorSlack)
	}
	if median > want+netemMedianSlack {
		t.Errorf("median RTT %v exceeds %v + %v", median, want, netemMedianSlack)
	}
}
