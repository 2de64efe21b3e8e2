package kernellab

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
)

// TestLabEmuctlOVSQueueDiscipline: an OVS port's linux-htb class with the
// kernel's codel or fq_codel as its leaf instead of emuctl's pfifo (qos:
// {queue: ...}), on the kernel datapath, with a netem stage on the
// sender's link so the queue can build (TCP Small Queues would keep it
// empty otherwise). Under one CUBIC flow at 10 Mbit/s with a 1000-packet
// limit: the leaf is emuctl's and drops by its own rule (nothing at the
// limit), pings beside the flow see at most 15 ms more than the idle
// path's worst (CoDel's p50 sojourn bound of #18; the full 1000-frame
// drop-tail queue would add 1.2 s), and the flow keeps ≥ 0.9 × capacity
// (the bound TestLabEmuctlOVSKernelDatapath holds with its netem stage).
//
// The emulated machine stalls (QEMU TCG on a shared host: a 2 ms timer
// woke up to 50-200 ms late): a stall longer than a discipline's standing
// queue drains it and costs goodput, as it would on a real router that
// stopped. A run whose longest stall exceeds maxStall (the suites' C7b)
// is invalid: the timing bounds it fails are reported, not judged, and
// the run is made once more; a bound it meets is met.
func TestLabEmuctlOVSQueueDiscipline(t *testing.T) {
	RequireLab(t, "creates the kernel's ovs-system datapath")
	_, err := os.Stat("/sys/module/openvswitch")
	Require(t, "openvswitch kernel module", err == nil, errString(err))
	requireTools(t, "openvswitch-switch", "ovsdb-tool", "ovsdb-server", "ovs-vswitchd")
	caps := tc.Probe()
	for _, disc := range []string{tc.CoDel, tc.FQCoDel} {
		t.Run(disc, func(t *testing.T) {
			Require(t, "qdisc "+disc, caps.AQM[disc], caps.Reasons[disc])
			for attempt := 1; attempt <= 2; attempt++ {
				r := ovsDisciplineRun(t, disc)
				capRatio := r.goodput / (10e6 * 1448 / 1514)
				t.Logf("%s under OVS HTB 10 Mbit/s, kernel datapath (attempt %d): goodput %.2f Mbit/s (%.3f × capacity), idle RTT %v..%v, under load median %v (+%v) max %v; longest stall %v; queue %+v",
					disc, attempt, r.goodput/1e6, capRatio, r.base, r.idleMax, r.med, r.med-r.base, r.max, r.stall, r.q)
				// not timing: the leaf is emuctl's discipline, dropping by its rule
				if len(r.q) != 1 || !r.q[0].LeafByEmu || !strings.HasPrefix(r.q[0].Leaf, disc) {
					t.Fatalf("the leaf under the HTB class is not emuctl's %s: %+v", disc, r.q)
				}
				if r.q[0].LeafDrops == 0 {
					t.Errorf("%s dropped nothing under a CUBIC flow (CUBIC does not stop growing unless told)", disc)
				}
				if capRatio > 1.02 {
					t.Errorf("goodput %.3f × capacity: above the link", capRatio)
				}
				var failed []string
				if capRatio < 0.90 {
					failed = append(failed, fmt.Sprintf("goodput %.3f × capacity, want ≥ 0.90", capRatio))
				}
				if r.med > r.idleMax+15*time.Millisecond {
					failed = append(failed, fmt.Sprintf("RTT under load median %v, more than 15 ms above the idle maximum %v: %s does not hold the queue", r.med, r.idleMax, disc))
				}
				switch {
				case len(failed) == 0:
					return
				case r.stall <= maxStall:
					for _, f := range failed {
						t.Error(f)
					}
					return
				}
				t.Logf("attempt %d INVALID: the emulated machine stalled %v (> %v), so these are not judged: %s", attempt, r.stall, maxStall, strings.Join(failed, "; "))
			}
			t.Logf("%s: no valid run in 2 attempts; the timing bounds stay unjudged here (the link engine's are held on the host: tc/engine)", disc)
		})
	}
}

// maxStall is the longest the emulated machine may stop scheduling a
// test for its run to be valid (the suites' C7b).
const maxStall = 20 * time.Millisecond

type ovsDiscResult struct {
	goodput                 float64
	base, idleMax, med, max time.Duration
	stall                   time.Duration // longest a 2 ms timer woke late during the flow
	q                       []emu.QueueStats
}

// ovsDisciplineRun brings the lab up, measures and takes it down.
func ovsDisciplineRun(t *testing.T, disc string) ovsDiscResult {
	t.Helper()
	const lab = "eklovq"
	spec, err := topo.Load("ovsq.yaml", []byte(`name: eklovq
nodes:
  h1: {}
  h2: {}
  s1: {kind: switch, type: ovs, datapath: kernel, ports: {s1-eth2: {qos: {max_rate: 10mbit, queue: "`+disc+` limit 1000"}}}}
links:
  - endpoints: [h1, s1]
    link: {delay: 5ms}
  - endpoints: [h2, s1]
`))
	if err != nil {
		t.Fatal(err)
	}
	st, err := emu.Deploy(context.Background(), spec, emu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := emu.Down(lab, nil); err != nil {
			t.Error(err)
		}
	}()
	dst, _ := emu.PrimaryAddr(spec.Node("h2"))
	ping := func(n int, gap time.Duration) []time.Duration {
		var out []time.Duration
		for i := 0; i < n; i++ {
			if rtt, err := emu.Ping(context.Background(), lab, "h1", dst, 3*time.Second); err == nil {
				out = append(out, rtt)
			}
			time.Sleep(gap)
		}
		if len(out) < n/2 {
			t.Fatalf("only %d of %d pings answered", len(out), n)
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	var r ovsDiscResult
	idle := ping(20, 20*time.Millisecond)
	r.base, r.idleMax = idle[0], idle[len(idle)-1]
	var loaded []time.Duration
	stop := watchStalls()
	r.goodput = cubicFlow(t, lab, dst, 12*time.Second, 4*time.Second, func() { loaded = ping(40, 150*time.Millisecond) })
	r.stall = stop()
	r.med, r.max = loaded[len(loaded)/2], loaded[len(loaded)-1]
	r.q = emu.InspectOVS(st).Queues["s1:s1-eth2"]
	return r
}

// watchStalls times a 2 ms sleep over and over until the returned
// function is called, which returns the longest it woke late (the
// suites' host_stall).
func watchStalls() func() time.Duration {
	var worst atomic.Int64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		const tick = 2 * time.Millisecond
		for {
			select {
			case <-done:
				return
			default:
			}
			t0 := time.Now()
			time.Sleep(tick)
			if late := int64(time.Since(t0) - tick); late > worst.Load() {
				worst.Store(late)
			}
		}
	}()
	return func() time.Duration {
		close(done)
		<-stopped
		return time.Duration(worst.Load())
	}
}
