package analysis

import (
	"math"
	"testing"
	"time"
)

func nearly(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestProbeRTTsUnstalled(t *testing.T) {
	p := &Probe{ID: "p1", Samples: []ProbeSample{
		{TS: 1.0, RTTUs: 5000},  // 1.000–1.005: clear
		{TS: 1.1, RTTUs: 30000}, // 1.100–1.130: the 5 ms stall at 1.120 inside
		{TS: 1.3, Lost: true},   // lost: never counted
		{TS: 1.4, RTTUs: 5000},  // 1.400–1.405: the stall 1.404–1.410 covers 1 ms of it
		{TS: 9.0, RTTUs: 5000},  // outside the window
	}}
	stalls := []Window{{1.120, 1.125}, {1.404, 1.410}}
	got, touched := ProbeRTTsMsUnstalled(p, Window{0, 5}, stalls)
	if touched != 2 || len(got) != 3 || !nearly(got[0], 5) || !nearly(got[1], 25) || !nearly(got[2], 4) {
		t.Fatalf("got %v, touched %d; want [5 25 4], 2", got, touched)
	}
	if got, touched := ProbeRTTsMsUnstalled(p, Window{0, 5}, nil); touched != 0 || len(got) != 3 || !nearly(got[1], 30) {
		t.Fatalf("without stalls: %v, %d", got, touched)
	}
}

func TestUDPDelaysUnstalled(t *testing.T) {
	start := time.Unix(1000, 0)
	s0 := start.UnixNano()
	ms := int64(time.Millisecond)
	f := &Flow{ID: "u", Proto: "udp", UDP: &UDPFlow{Packets: []UDPPacket{
		{Seq: 0, SentNs: s0 + 1000*ms, RecvNs: s0 + 1010*ms},             // clear
		{Seq: 1, SentNs: s0 + 1100*ms, RecvNs: s0 + 1150*ms},             // 2 ms of stall inside
		{Seq: 2, SentNs: s0 + 1200*ms, RecvNs: s0 + 1205*ms, OWDUs: 5e3}, // clear
	}}}
	got, touched := UDPDelaysMsUnstalled(f, s0, Window{0, 5}, []Window{{1.140, 1.142}})
	if touched != 1 || len(got) != 3 || !nearly(got[0], 10) || !nearly(got[1], 48) || !nearly(got[2], 5) {
		t.Fatalf("got %v, touched %d; want [10 48 5], 1", got, touched)
	}
}
