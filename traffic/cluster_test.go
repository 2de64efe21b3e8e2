package traffic

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/internal/testutil"
)

// Traffic on a lab over two local machines: a shaped cut link (10 Mbit/s,
// 5 ms) carries an iperf3 flow whose ends run on their own machines (the
// workers' exec): goodput R × 1448/1514 within [0.95, 1.02], the sender's
// RTT at least the 2 × 5 ms floor, the result saying which machines ran
// it and what was not read.
func TestClusterTrafficIperf3(t *testing.T) {
	needRoot(t)
	needIperf3(t)
	lab := yamlLab(t, `name: ttrcl
machines:
  m1: {ssh: local, underlay: 192.168.253.1}
  m2: {ssh: local, underlay: 192.168.253.2}
nodes: {h1: {machine: m1}, h2: {machine: m2}}
links:
  - endpoints: [h1, h2]
    link: {rate: 10mbit, delay: 5ms}
`)
	capacity := 10e6 * 1448 / 1514
	r := testutil.RetryStarved(t, "iperf3 across two machines", true, func() *struct {
		g, rtt float64
		cond   map[string]string
	} {
		res := run(t, lab, Flow{Name: "f1", Client: "h1", Server: "h2", Duration: 4 * time.Second, Interval: 500 * time.Millisecond, Engine: EngineIperf3, Sock: SockOpts{CC: "cubic"}})
		f := res.Flow("f1")
		if f == nil || len(f.Samples) == 0 {
			t.Fatalf("no flow f1 or no samples: %+v", res.Flows)
		}
		minRTT := 0.0
		for _, s := range f.Samples {
			if s.TCP != nil && s.TCP.SrttUs > 0 && (minRTT == 0 || float64(s.TCP.SrttUs)/1e3 < minRTT) {
				minRTT = float64(s.TCP.SrttUs) / 1e3
			}
		}
		return &struct {
			g, rtt float64
			cond   map[string]string
		}{goodputOf(res, "f1"), minRTT, res.Conditions}
	})
	t.Logf("iperf3 h1 (m1) -> h2 (m2) over the cut link: %.3f Mbit/s = %.3f × capacity, smallest sender RTT %.2f ms; conditions machines=%q",
		r.g/1e6, r.g/capacity, r.rtt, r.cond["machines"])
	if r.g < 0.95*capacity || r.g > 1.02*capacity {
		t.Errorf("goodput %.3f Mbit/s, want [0.95, 1.02] × %.3f", r.g/1e6, capacity/1e6)
	}
	if r.rtt < 10 {
		t.Errorf("sender RTT %.2f ms below the 2 × 5 ms floor", r.rtt)
	}
	if r.cond["machines"] != "m1, m2" || !strings.Contains(r.cond["machines_read"], "queue on the machine that sends it") || r.cond["queue_samples_error"] != "" {
		t.Errorf("conditions %v", r.cond)
	}
	// Ctrl-C: iperf3's client is interrupted through its worker (the end
	// of its input, which also crosses SSH) and prints what it measured
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	part, err := Run(ctx, lab, []Flow{{Name: "c", Client: "h1", Server: "h2", Duration: 20 * time.Second, Engine: EngineIperf3}}, Options{})
	c := (*analysis.Flow)(nil)
	var got int64
	if part != nil {
		if c = part.Flow("c"); c != nil {
			for _, s := range c.Samples {
				got += s.Bytes
			}
		}
	}
	// its intervals so far (an interrupted client has no server summary)
	if err == nil || c == nil || got == 0 || c.EndS < 1.5 || time.Since(t0) > 10*time.Second {
		t.Errorf("iperf3 interrupted after 2.5 s: %v after %v, flow %+v", err, time.Since(t0), c)
	} else {
		t.Logf("iperf3 interrupted after 2.5 s: returned after %v with %d samples, %d bytes, up to %.2f s", time.Since(t0).Round(time.Millisecond), len(c.Samples), got, c.EndS)
	}
}

// The native engine on a lab over two local machines (split.go): each
// flow's two ends run on their nodes' machines and the controller joins
// them. Over the shaped cut link (10 Mbit/s, 5 ms each way):
//   - TCP h1 (m1) -> h2 (m2): goodput within [0.95, 1.02] × R × 1448/1514,
//     the sender's smallest smoothed RTT at least the 10 ms floor and
//     below floor + one 64 KiB... queue (the link's own bound), the
//     per-interval bytes adding up to the bytes received;
//     and the cut link's queue on h1's machine sampled through the run
//     (checkCutQueue);
//   - TCP reversed with two streams (h2 sends): both streams paired and
//     together at capacity, the queue read on h2's machine;
//   - UDP h1 -> h2 at 4 Mbit/s: nothing lost, and one-way delays (the
//     two halves' clocks joined by the offset measured before the run):
//     the smallest is the 5 ms delay plus a frame's transmission at
//     10 Mbit/s (1490 bytes: 1.192 ms), within [-0.1, +0.5] ms, the mean
//     within 1 ms of it (no queue at 40 % load);
//   - TCP h2 -> h3, both on m2 (no cut, no clock): a flow inside one
//     machine runs the same way.
func TestClusterTrafficNative(t *testing.T) {
	needRoot(t)
	lab := yamlLab(t, `name: ttrcn
machines:
  m1: {ssh: local, underlay: 192.168.252.1}
  m2: {ssh: local, underlay: 192.168.252.2}
nodes: {h1: {machine: m1}, h2: {machine: m2}, h3: {machine: m2}}
links:
  - endpoints: [h1, h2]
    link: {rate: 10mbit, delay: 5ms}
  - endpoints: [h2, h3]
`)
	capacity := 10e6 * 1448 / 1514
	res := testutil.RetryStarved(t, "native TCP across two machines", true, func() *analysis.Result {
		return run(t, lab, Flow{Name: "f1", Client: "h1", Server: "h2", Duration: 4 * time.Second, Interval: 250 * time.Millisecond, Sock: SockOpts{CC: "cubic"}})
	})
	f := res.Flow("f1")
	if f == nil || len(f.Samples) < 10 {
		t.Fatalf("flow f1: %+v", res.Flows)
	}
	g := goodputOf(res, "f1")
	var sum int64
	minRTT := 0.0
	for _, s := range f.Samples {
		sum += s.Bytes
		if s.TCP != nil && s.TCP.SrttUs > 0 && (minRTT == 0 || float64(s.TCP.SrttUs)/1e3 < minRTT) {
			minRTT = float64(s.TCP.SrttUs) / 1e3
		}
	}
	t.Logf("native TCP h1 (m1) -> h2 (m2): %.3f Mbit/s = %.3f × capacity, %d samples, smallest srtt %.2f ms, %d of %d bytes in the samples, cc %s, %s -> %s; clock %q",
		g/1e6, g/capacity, len(f.Samples), minRTT, sum, f.BytesReceived, f.CC, f.Src, f.Dst, res.Conditions["clock_offset[m1->m2]"])
	if g < 0.95*capacity || g > 1.02*capacity {
		t.Errorf("goodput %.3f Mbit/s, want [0.95, 1.02] × %.3f", g/1e6, capacity/1e6)
	}
	if minRTT < 10 {
		t.Errorf("smallest srtt %.2f ms below the 2 × 5 ms floor", minRTT)
	}
	if sum != f.BytesReceived || f.BytesReceived == 0 || f.BytesSent < f.BytesReceived {
		t.Errorf("samples add up to %d bytes, received %d, sent %d", sum, f.BytesReceived, f.BytesSent)
	}
	if f.CC != "cubic" || !strings.HasPrefix(f.Src, "10.") || !strings.HasPrefix(f.Dst, "10.") {
		t.Errorf("cc %q src %q dst %q", f.CC, f.Src, f.Dst)
	}
	if !strings.Contains(res.Conditions["clock_offset[m1->m2]"], "at up") {
		t.Errorf("conditions carry no clock offset: %v", res.Conditions)
	}
	// the nodes were read on their machines: sysctls, offloads, counters
	if res.Conditions["sysctl.h1.net.ipv4.tcp_sack"] == "" || res.Conditions["sysctl.h2.net.ipv4.tcp_sack"] == "" ||
		res.Conditions["iface.h2.h2-eth0"] == "" || res.Counters["h1"]["TcpOutSegs"] == 0 || res.Conditions["snapshot_error"] != "" {
		t.Errorf("node snapshots missing: conditions %v, counters %v", res.Conditions, res.Counters)
	} else {
		t.Logf("read on their machines: h1 sent %d segments (TcpOutSegs), h2's tcp_sack %s, h2-eth0 %s",
			res.Counters["h1"]["TcpOutSegs"], res.Conditions["sysctl.h2.net.ipv4.tcp_sack"], res.Conditions["iface.h2.h2-eth0"])
	}
	checkCutQueue(t, res, "h1", 10e6, 4*time.Second)

	rev := testutil.RetryStarved(t, "native TCP reversed, two streams", true, func() *analysis.Result {
		return run(t, lab, Flow{Name: "r", Client: "h1", Server: "h2", Reverse: true, Parallel: 2, Duration: 4 * time.Second, Interval: 250 * time.Millisecond})
	})
	var total float64
	for _, id := range []string{"r#0", "r#1"} {
		fr := rev.Flow(id)
		if fr == nil || fr.From != "h2" || fr.To != "h1" || fr.BytesReceived == 0 {
			t.Fatalf("stream %s: %+v", id, fr)
		}
		total += goodputOf(rev, id)
	}
	t.Logf("reversed, 2 streams h2 -> h1: together %.3f Mbit/s = %.3f × capacity", total/1e6, total/capacity)
	if total < 0.95*capacity || total > 1.02*capacity {
		t.Errorf("two streams together %.3f Mbit/s, want [0.95, 1.02] × %.3f", total/1e6, capacity/1e6)
	}
	checkCutQueue(t, rev, "h2", 10e6, 4*time.Second)

	ures := testutil.RetryStarved(t, "native UDP across two machines", false, func() *analysis.Result {
		return run(t, lab, Flow{Name: "u", Client: "h1", Server: "h2", Proto: UDP, Rate: 4_000_000, Duration: 3 * time.Second, Interval: 250 * time.Millisecond})
	})
	u := ures.Flow("u")
	if u == nil || u.UDP == nil {
		t.Fatalf("flow u: %+v", ures.Flows)
	}
	t.Logf("native UDP h1 -> h2 at 4 Mbit/s: sent %d, received %d, one-way delay min %.0f mean %.0f max %.0f us, jitter %.0f us",
		u.UDP.Sent, u.UDP.Received, u.UDP.OWDMinUs, u.UDP.OWDMeanUs, u.UDP.OWDMaxUs, u.UDP.JitterRFC3550Us)
	if u.UDP.Sent < 1000 || u.UDP.Received != u.UDP.Sent {
		t.Errorf("sent %d, received %d: want everything (4 Mbit/s on a 10 Mbit/s link)", u.UDP.Sent, u.UDP.Received)
	}
	// the measured clock offset's own error is the exchange's (tens of µs)
	floor := 5000 + 1490*8/10e6*1e6
	if u.UDP.OWDMinUs < floor-100 || u.UDP.OWDMinUs > floor+500 || u.UDP.OWDMeanUs > u.UDP.OWDMinUs+1000 {
		t.Errorf("one-way delays min %.0f mean %.0f us, want min in [%.0f, %.0f], mean within 1 ms of it", u.UDP.OWDMinUs, u.UDP.OWDMeanUs, floor-100, floor+500)
	}
	var pk int
	for _, p := range u.UDP.Packets {
		if p.RecvNs < p.SentNs || p.SentNs < ures.Start.UnixNano() {
			pk++
		}
	}
	if pk > 0 || len(u.UDP.Packets) != int(u.UDP.Received) {
		t.Errorf("%d of %d kept datagrams with times out of the run", pk, len(u.UDP.Packets))
	}

	// probes (ICMP and UDP echo) and a capture, each on its node's machine
	dir := t.TempDir()
	pres, err := Run(context.Background(), lab, []Flow{
		{Name: "pi", Client: "h1", Server: "h2", Duration: 2 * time.Second, Probe: ProbeICMP, ProbeRate: 20},
		{Name: "pu", Client: "h2", Server: "h1", Proto: UDP, Rate: 200_000, Duration: 2 * time.Second, Probe: ProbeUDP, ProbeRate: 20},
	}, Options{Captures: []CaptureSpec{{Node: "h2", Iface: "h2-eth0", Filter: "tcp"}}, CaptureDir: dir, ResultDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(pres.Probes) != 2 {
		t.Fatalf("probes: %+v", pres.Probes)
	}
	for _, pr := range pres.Probes {
		n, lost, minRTT, maxTS := 0, 0, 0.0, 0.0
		for _, ps := range pr.Samples {
			n++
			maxTS = max(maxTS, ps.TS)
			if ps.Lost {
				lost++
			} else if minRTT == 0 || ps.RTTUs < minRTT {
				minRTT = ps.RTTUs
			}
		}
		t.Logf("probe %s (%s, %s -> %s): %d sent, %d lost, smallest RTT %.0f us, last at %.2f s", pr.ID, pr.Kind, pr.From, pr.To, n, lost, minRTT, maxTS)
		// 20 Hz for 2 s; the round trip's floor is the link's 2 × 5 ms
		if n < 38 || n > 41 || lost > 0 || minRTT < 10000 || maxTS > 3 {
			t.Errorf("probe %s: %d sent (want 40), %d lost, smallest RTT %.0f us (floor 10 000), last at %.2f s", pr.ID, n, lost, minRTT, maxTS)
		}
	}
	if len(pres.Captures) != 1 {
		t.Fatalf("captures %+v", pres.Captures)
	}
	rep, err := analysis.ACKFrequencyFile(filepath.Join(dir, pres.Captures[0].File))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Conns) == 0 || rep.Conns[0].ACKsPerData < 0.3 || rep.Conns[0].ACKsPerData > 1.05 {
		t.Errorf("capture on h2 (machine m2): %d packets, %+v: want the flow with delayed ACKs", rep.Packets, rep.Conns)
	} else {
		t.Logf("capture on h2 (machine m2): %d packets, %.3f ACKs per data packet", rep.Packets, rep.Conns[0].ACKsPerData)
	}

	in := run(t, lab, Flow{Name: "in", Client: "h2", Server: "h3", Duration: time.Second, Interval: 100 * time.Millisecond})
	if fi := in.Flow("in"); fi == nil || fi.BytesReceived == 0 || len(fi.Samples) < 5 {
		t.Errorf("flow inside machine m2: %+v", fi)
	}

	// Ctrl-C: the halves stop, the partial result comes back
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	part, err := Run(ctx, lab, []Flow{{Name: "c", Client: "h1", Server: "h2", Duration: 20 * time.Second}, {Name: "cu", Client: "h2", Server: "h1", Proto: UDP, Duration: 20 * time.Second}}, Options{})
	if err == nil || part == nil || time.Since(t0) > 8*time.Second {
		t.Fatalf("cancelled after 1.5 s: %v after %v, result %v", err, time.Since(t0), part != nil)
	}
	c, cu := part.Flow("c"), part.Flow("cu")
	if c == nil || c.BytesReceived == 0 || cu == nil || cu.UDP == nil || cu.UDP.Received == 0 || part.Conditions["interrupted"] != "true" {
		t.Errorf("partial result: %+v", part.Flows)
	} else {
		t.Logf("cancelled at 1.5 s: returned after %v, TCP %d bytes received, UDP %d datagrams", time.Since(t0).Round(time.Millisecond), c.BytesReceived, cu.UDP.Received)
	}
}

// checkCutQueue: the direction of the shaped cut link that from sends,
// whose queue is on from's machine, was watched there through the run of
// dur: a sample every 20 ms (at least half of them arrived), a TCP flow
// at capacity kept a standing queue (p95 > 0) within the configured
// limit (+1: the engine counts the packet in transmission), and no
// packet waited longer than the full queue takes to drain at rate (the
// engine measures every packet's sojourn, the kernel estimates it from
// the backlog).
func checkCutQueue(t *testing.T, res *analysis.Result, from string, rate float64, dur time.Duration) {
	t.Helper()
	if e := res.Conditions["queue_samples_error"]; e != "" {
		t.Errorf("queues not sampled: %s", e)
	}
	var l *analysis.Link
	for i := range res.Links {
		if strings.HasPrefix(res.Links[i].Name, from+":") && res.Links[i].RateBps == rate {
			l = &res.Links[i]
		}
	}
	if l == nil {
		t.Errorf("no link direction from %s at %.0f bit/s in %+v", from, rate, res.Links)
		return
	}
	drain := float64(l.QueuePackets+1) * 1514 * 8 / rate * 1e3
	t.Logf("queue of %s (%s, limit %d packets) on %s's machine: %d samples every %.0f ms, occupancy p50/p95 %.0f/%.0f packets, sojourn p50/p95/p99 %.2f/%.2f/%.2f ms (%s; the full queue drains in %.2f ms)",
		l.Name, l.Backend, l.QueuePackets, from, l.QueueSamples, l.QueueSampleMs, l.QueueP50Pkts, l.QueueP95Pkts, l.SojournP50Ms, l.SojournP95Ms, l.SojournP99Ms, l.SojournFrom, drain)
	if want := int(dur / (20 * time.Millisecond) / 2); l.QueueSamples < want || l.QueueSampleMs != 20 {
		t.Errorf("%d queue samples every %.0f ms, want at least %d every 20 ms", l.QueueSamples, l.QueueSampleMs, want)
	}
	if l.QueuePackets <= 0 || l.QueueP95Pkts <= 0 || l.QueueP95Pkts > float64(l.QueuePackets+1) {
		t.Errorf("queue occupancy p95 %.0f packets, want in (0, %d]", l.QueueP95Pkts, l.QueuePackets+1)
	}
	if l.SojournFrom == "" || l.SojournP99Ms <= 0 || l.SojournP99Ms > drain*1.05 {
		t.Errorf("sojourn p99 %.2f ms (%q), want in (0, %.2f]", l.SojournP99Ms, l.SojournFrom, drain*1.05)
	}
	// two meters agree: a packet that finds n packets queued at a constant
	// rate waits n frame times (the median sampled occupancy against the
	// median sojourn of every packet)
	if frame := 1514 * 8 / rate * 1e3; l.QueueP50Pkts >= 10 {
		if r := l.SojournP50Ms / (l.QueueP50Pkts * frame); r < 0.75 || r > 1.25 {
			t.Errorf("median sojourn %.2f ms is %.2f × the median occupancy's %.0f × %.3f ms, want [0.75, 1.25]", l.SojournP50Ms, r, l.QueueP50Pkts, frame)
		}
	}
	// the link's own counters, read on its machine: every segment the
	// sender put out, new (OutSegs) or again (RetransSegs), was sent or
	// dropped there
	segs := res.Counters[from]["TcpOutSegs"] + res.Counters[from]["TcpRetransSegs"]
	t.Logf("the link's counters: %d sent, %d dropped at the queue, %d lost at random; %s sent %d TCP segments (%d again)", l.SentPackets, l.DroppedPackets, l.RandomDrops, from, segs, res.Counters[from]["TcpRetransSegs"])
	if through := l.SentPackets + l.DroppedPackets + l.RandomDrops; segs == 0 || through < segs-5 || through > segs+5 || l.RandomDrops != 0 {
		t.Errorf("the link passed or dropped %d packets (%d at random), %s sent %d segments", through, l.RandomDrops, from, segs)
	}
}
