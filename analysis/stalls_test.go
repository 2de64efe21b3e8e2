package analysis

import (
	"testing"
	"time"
)

func TestProbeRTTsUnstalled(t *testing.T) {
	p := &Probe{ID: "p1", Samples: []ProbeSample{
		{TS: 1.0, RTTUs: 5000},  // 1.000–1.005: clear
		{TS: 1.1, RTTUs: 30000}, // 1.100–1.130: overlaps the stall at 1.120
		{TS: 1.2, RTTUs: 5000},  // clear
		{TS: 1.3, Lost: true},   // lost: never counted
		{TS: 1.4, RTTUs: 5000},  // 1.400–1.405: overlaps the stall 1.404–1.410
		{TS: 9.0, RTTUs: 5000},  // outside the window
	}}
	stalls := []Window{{1.120, 1.125}, {1.404, 1.410}}
	got, dropped := ProbeRTTsMsUnstalled(p, Window{0, 5}, stalls)
	if dropped != 2 || len(got) != 2 || got[0] != 5 || got[1] != 5 {
		t.Fatalf("kept %v, dropped %d; want [5 5], 2", got, dropped)
	}
	if got, dropped := ProbeRTTsMsUnstalled(p, Window{0, 5}, nil); dropped != 0 || len(got) != 4 {
		t.Fatalf("without stalls: kept %v, dropped %d", got, dropped)
	}
}

func TestUDPDelaysUnstalled(t *testing.T) {
	start := time.Unix(1000, 0)
	s0 := start.UnixNano()
	ms := int64(time.Millisecond)
	f := &Flow{ID: "u", Proto: "udp", UDP: &UDPFlow{Packets: []UDPPacket{
		{Seq: 0, SentNs: s0 + 1000*ms, RecvNs: s0 + 1010*ms},             // 1.000–1.010 clear
		{Seq: 1, SentNs: s0 + 1100*ms, RecvNs: s0 + 1150*ms},             // 1.100–1.150 overlaps 1.140
		{Seq: 2, SentNs: s0 + 1200*ms, RecvNs: s0 + 1205*ms, OWDUs: 5e3}, // clear
	}}}
	got, dropped := UDPDelaysMsUnstalled(f, s0, Window{0, 5}, []Window{{1.140, 1.142}})
	if dropped != 1 || len(got) != 2 || got[0] != 10 || got[1] != 5 {
		t.Fatalf("kept %v, dropped %d; want [10 5], 1", got, dropped)
	}
}
