package analysis

import (
	"testing"
	"time"
)

func TestJitter(t *testing.T) {
	d := []float64{10, 12, 11, 15, 10}
	// |Δ| = 2, 1, 4, 5 → mean 3.
	if got := JitterMeanAbsDelta(d); got != 3 {
		t.Errorf("mean |Δ| = %g, want 3", got)
	}
	// RFC 3550 by hand: J1 = 2/16, J2 = J1 + (1−J1)/16, ...
	j := 0.0
	for _, x := range []float64{2, 1, 4, 5} {
		j += (x - j) / 16
	}
	if got := JitterRFC3550(d); !near(got, j, 1e-15) {
		t.Errorf("RFC 3550 = %g, want %g", got, j)
	}
	// Constant delay: no jitter either way.
	if JitterRFC3550([]float64{5, 5, 5}) != 0 || JitterMeanAbsDelta([]float64{5, 5, 5}) != 0 || JitterMeanAbsDelta([]float64{1}) != 0 {
		t.Error("constant or short input should give 0")
	}
	// A long alternating sequence converges to the |Δ| for both.
	var alt []float64
	for i := 0; i < 1000; i++ {
		alt = append(alt, float64(i%2))
	}
	if !near(JitterRFC3550(alt), 1, 1e-9) || JitterMeanAbsDelta(alt) != 1 {
		t.Errorf("alternating: %g %g", JitterRFC3550(alt), JitterMeanAbsDelta(alt))
	}
}

func TestUDPDelaysArrivalOrder(t *testing.T) {
	start := time.Unix(1000, 0)
	s := start.UnixNano()
	f := &Flow{Proto: "udp", UDP: &UDPFlow{Packets: []UDPPacket{
		{Seq: 1, SentNs: s + 1e9, RecvNs: s + 1e9 + 5e6},      // owd 5 ms, arrives 1.005
		{Seq: 0, SentNs: s + 0.5e9, RecvNs: s + 0.5e9 + 20e6}, // owd 20 ms, arrives 0.52
		{Seq: 2, SentNs: s + 3e9, RecvNs: s + 3e9 + 7e6, OWDUs: 7000},
	}}}
	got := UDPDelaysMs(f, s, Window{0, 10})
	want := []float64{20, 5, 7}
	for i := range want {
		if !near(got[i], want[i], 1e-9) {
			t.Fatalf("delays %v, want %v", got, want)
		}
	}
	if got := UDPDelaysMs(f, s, Window{0.9, 10}); len(got) != 2 {
		t.Fatalf("window: %v", got)
	}
}
