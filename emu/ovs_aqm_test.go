package emu

import (
	"fmt"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/tc"
)

// TestOVSQueueDiscipline: a discipline under OVS's HTB class instead of
// the pfifo — drop-head here (pfifo_head_drop; the kernel's codel,
// fq_codel, pie and red where it has them, the kernel lab's test). Under
// a CUBIC flow the 50-packet queue fills and holds (the RTT bound of 50
// frames), drops at its head, and OVS reconfiguring the QoS keeps it.
func TestOVSQueueDiscipline(t *testing.T) {
	needOVS(t)
	if !tc.Probe().AQM[tc.DropHead] {
		t.Skip("no pfifo_head_drop in this kernel")
	}
	const n, rate = 50, 10e6
	spec := loadYAML(t, "tovd", fmt.Sprintf(`name: tovd
nodes:
  h1: {}
  h2: {}
  s1: {kind: switch, type: ovs, ports: {s1-eth2: {qos: {max_rate: 10mbit, queue: "drophead limit %d"}}}}
links: [{endpoints: [h1, s1]}, {endpoints: [h2, s1]}]
`, n))
	st := up(t, spec, Options{})
	leaf := func() QueueStats {
		t.Helper()
		qs := InspectOVS(st).Queues["s1:s1-eth2"]
		if len(qs) != 1 {
			t.Fatalf("queue stats: %+v", qs)
		}
		return qs[0]
	}
	if q := leaf(); !q.LeafByEmu || q.Leaf != "pfifo_head_drop" {
		t.Fatalf("leaf under 1:1: %+v", q)
	}
	dst, _ := PrimaryAddr(spec.Node("h2"))
	base := pings(t, "tovd", "h1", dst, 10, 10*time.Millisecond)[0]
	physics := time.Duration(float64(n*1514*8) / rate * float64(time.Second))
	// the RTT bound is a timing one: judged on runs that had the CPU
	// (ovs-vswitchd's userspace datapath forwards every frame; a stall
	// holds the queue's frames longer than the queue does)
	type run struct {
		got    float64
		loaded []time.Duration
	}
	r := testutil.RetryStarved(t, "drop-head under OVS", true, func() run {
		var loaded []time.Duration
		got := bulkOnce(t, "tovd", "h1", "h2", 6*time.Second, 2*time.Second, "cubic", func(until time.Time) {
			loaded = pingsUntil(t, "tovd", "h1", dst, 30, 100*time.Millisecond, until)
		})
		return run{got, loaded}
	})
	got, loaded := r.got, r.loaded
	med, mx := loaded[len(loaded)/2], loaded[len(loaded)-1]
	q := leaf()
	t.Logf("drophead %d at 10 Mbit/s under OVS HTB: goodput %.2f Mbit/s, base RTT %v, under load median %v max %v (full queue %.1f ms); head drops %d",
		n, got/1e6, base, med, mx, float64(physics)/1e6, q.LeafDrops)
	if mx > base+physics+2*time.Millisecond {
		t.Errorf("RTT under load reached %v, above base + %v + 2 ms", mx, physics)
	}
	if float64(med-base) < 0.5*float64(physics) || q.LeafDrops == 0 {
		t.Errorf("the drop-head queue did not fill and drop: added %v of %v, drops %d", med-base, physics, q.LeafDrops)
	}
	if got < 0.9*capacity(10e6) {
		t.Errorf("goodput %.2f Mbit/s below 0.9 × capacity", got/1e6)
	}
}
