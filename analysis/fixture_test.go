package analysis

import (
	"math"
	"time"
)

// exampleResult is a small, deterministic result exercising every part of
// the format: two TCP flows (one with a recovery episode seen both in the
// samples and in trace events), an MPTCP flow with two subflows, a UDP
// flow with per-packet records, a probe, links, counters, a capture and
// conditions. testdata/example_result.json is its encoding (also the
// format example for producers).
func exampleResult() *Result {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := &Result{
		Version: Version, Tool: "emuctl test", Engine: "emuctl", Lab: "demo",
		Scenario: "example", Repetition: 1, Start: start, DurationS: 10, IntervalS: 0.5,
		Conditions: map[string]string{"kernel": "6.18.44", "hz": "250", "tcp_sack": "1", "gso_max_segs": "1"},
		Counters:   map[string]map[string]int64{"h1": {"TcpOutSegs": 16000, "TcpRetransSegs": 40}},
		Links: []Link{{Name: "r1:eth1->h2", Backend: "htb+pfifo", RateBps: 10e6, DelayUs: 5000, QueuePackets: 100,
			SentPackets: 16000, DroppedPackets: 35}},
		Captures: []CaptureRef{{Node: "h2", Iface: "h2-eth0", File: "h2.pcapng", Snaplen: 128, Filter: "tcp"}},
	}
	// f1: CUBIC, 0..10 s, ramps up over 2 s to 6 Mbit/s, recovery 5.0–6.0 s.
	f1 := Flow{ID: "f1", Proto: "tcp", CC: "cubic", From: "h1", To: "h2", Src: "10.0.0.1:40000", Dst: "10.0.1.2:5201",
		StartS: 0, EndS: 10, BottleneckBps: 10e6}
	// f2: BBR, 1..10 s, 3.5 Mbit/s.
	f2 := Flow{ID: "f2", Proto: "tcp", CC: "bbr", From: "h3", To: "h2", Src: "10.0.0.3:40001", Dst: "10.0.1.2:5201",
		StartS: 1, EndS: 10, BottleneckBps: 10e6}
	var acked1, acked2, segs1, segs2 uint64
	var retr1 uint32
	for i := 1; i <= 20; i++ {
		ts := float64(i) * 0.5
		rate := 6e6 * math.Min(1, ts/2)
		st := CAOpen
		if ts >= 5 && ts < 6 {
			st = CARecovery
			rate = 4e6
		}
		b := int64(rate * 0.5 / 8)
		acked1 += uint64(b)
		segs1 += uint64(b/1448) + 1
		if st == CARecovery {
			retr1 += 4
		}
		cw := uint32(10 + 4*i)
		if ts >= 5 {
			cw = uint32(0.7*float64(10+4*10)) + uint32(2*(i-10))
		}
		f1.Samples = append(f1.Samples, Sample{TS: ts, Bytes: b, GoodputBps: float64(b) * 8 / 0.5, TCP: &TCPInfo{
			BytesAcked: acked1, SegsOut: segs1, MSS: 1448, CwndSegs: cw, CwndBytes: uint64(cw) * 1448,
			SrttUs: uint32(10000 + 400*i), RttvarUs: 500, MinRttUs: 10200, Retrans: retr1,
			DeliveryRateBps: rate, PacingRateBps: 1.2 * rate, CAState: st}})
		if ts > 1 {
			b2 := int64(3.5e6 * 0.5 / 8)
			acked2 += uint64(b2)
			segs2 += uint64(b2/1448) + 1
			f2.Samples = append(f2.Samples, Sample{TS: ts, Bytes: b2, GoodputBps: 3.5e6, TCP: &TCPInfo{
				BytesAcked: acked2, SegsOut: segs2, MSS: 1448, CwndSegs: 30, CwndBytes: 30 * 1448,
				SrttUs: 12000, MinRttUs: 10100, DeliveryRateBps: 3.5e6, CAState: CAOpen}})
		}
	}
	f1.BytesReceived, f2.BytesReceived = int64(acked1), int64(acked2)
	r.CongStateEvents = []CongStateEvent{
		{TS: 4.71, Flow: "f1", State: CARecovery}, {TS: 4.92, Flow: "f1", State: CAOpen},
		{TS: 5.02, Flow: "f1", State: CARecovery}, {TS: 5.61, Flow: "f1", State: CAOpen},
	}
	// m1: MPTCP over two paths, 2..10 s.
	m1 := Flow{ID: "m1", Proto: "mptcp", CC: "cubic", From: "cli", To: "srv", StartS: 2, EndS: 10}
	for i := 5; i <= 20; i++ {
		ts := float64(i) * 0.5
		a, bb := int64(1e6*0.5/8), int64(0.5e6*0.5/8)
		m1.Samples = append(m1.Samples, Sample{TS: ts, Bytes: a + bb, GoodputBps: 1.5e6, Subflows: []SubflowSample{
			{ID: "1", Src: "10.1.0.1:40100", Dst: "10.1.0.2:5202", Bytes: a, GoodputBps: 1e6, TCP: TCPInfo{CwndSegs: 20, CwndBytes: 20 * 1428, MSS: 1428, SrttUs: 20000}},
			{ID: "2", Src: "10.2.0.1:40101", Dst: "10.2.0.2:5202", Bytes: bb, GoodputBps: 0.5e6, TCP: TCPInfo{CwndSegs: 8, CwndBytes: 8 * 1428, MSS: 1428, SrttUs: 60000 + uint32(1000*i)}},
		}})
	}
	// u1: UDP, 10 packets received of 12 sent, 160-byte payload.
	u1 := Flow{ID: "u1", Proto: "udp", From: "h1", To: "h2", StartS: 0, EndS: 10, BottleneckBps: 10e6,
		UDP: &UDPFlow{Sent: 12, Received: 11, Duplicates: 1, OutOfOrder: 1, PayloadBytes: 160}}
	owds := []float64{10, 12, 11, 15, 10, 10, 13, 11, 12, 10, 12}
	for i, owd := range owds {
		sent := start.UnixNano() + int64(i)*int64(time.Second) + int64(500*time.Millisecond)
		seq := uint64(i)
		if i == 10 {
			seq = 9 // duplicate
		}
		u1.UDP.Packets = append(u1.UDP.Packets, UDPPacket{Seq: seq, SentNs: sent, RecvNs: sent + int64(owd*1e6), OWDUs: owd * 1000})
	}
	for i := 1; i <= 20; i++ {
		u1.Samples = append(u1.Samples, Sample{TS: float64(i) * 0.5, Bytes: 160, GoodputBps: 2560, Packets: 1})
	}
	r.Flows = []Flow{f1, f2, m1, u1}
	// p1: ICMP probe h1→h2, 1 Hz, one lost.
	p1 := Probe{ID: "p1", Kind: "icmp", From: "h1", To: "h2", Flow: "f1", IntervalS: 1}
	for i, rtt := range []float64{10.4, 11, 25, 30, 0, 28, 31, 29, 27, 30} {
		p1.Samples = append(p1.Samples, ProbeSample{TS: float64(i), RTTUs: rtt * 1000, Lost: rtt == 0})
	}
	r.Probes = []Probe{p1}
	return r
}
