package analysis

import (
	"math"
	"sort"
)

// JitterRFC3550 is the RFC 3550 §6.4.1 interarrival jitter of a sequence
// of one-way delays given in arrival order: with D_i = d_i − d_{i−1}
// (equal to (R_i − R_{i−1}) − (S_i − S_{i−1})), J ← J + (|D_i| − J)/16,
// starting from J = 0, and the final J is returned. This is the estimator
// iperf2/iperf3 report for UDP. The result has the unit of the input; it
// is 0 for fewer than two delays.
//
// Because of the 1/16 gain it weights recent packets and, for short
// sequences, underestimates the steady value (it starts at 0).
func JitterRFC3550(delays []float64) float64 {
	var j float64
	for i := 1; i < len(delays); i++ {
		d := math.Abs(delays[i] - delays[i-1])
		j += (d - j) / 16
	}
	return j
}

// JitterMeanAbsDelta is the mean absolute difference of consecutive
// delays, Σ|d_i − d_{i−1}| / (N − 1): the "TIPHON-style" jitter used by
// QoS papers that cite ETSI TIPHON (e.g. the MPTCP/OVS study). Same unit
// as the input; 0 for fewer than two delays. It is not comparable
// one-to-one with JitterRFC3550.
func JitterMeanAbsDelta(delays []float64) float64 {
	if len(delays) < 2 {
		return 0
	}
	var s float64
	for i := 1; i < len(delays); i++ {
		s += math.Abs(delays[i] - delays[i-1])
	}
	return s / float64(len(delays)-1)
}

// UDPDelaysMs are the one-way delays of a UDP flow's datagrams received
// inside w, in milliseconds, in arrival order. start is Result.Start in
// Unix nanoseconds (to place receive times in the window).
func UDPDelaysMs(f *Flow, startUnixNs int64, w Window) []float64 {
	if f.UDP == nil {
		return nil
	}
	pk := f.UDP.Packets
	if !sort.SliceIsSorted(pk, func(i, j int) bool { return pk[i].RecvNs < pk[j].RecvNs }) {
		pk = append([]UDPPacket(nil), pk...)
		sort.SliceStable(pk, func(i, j int) bool { return pk[i].RecvNs < pk[j].RecvNs })
	}
	out := make([]float64, 0, len(pk))
	for _, p := range pk {
		t := float64(p.RecvNs-startUnixNs) / 1e9
		if t < w.FromS || t > w.ToS {
			continue
		}
		out = append(out, p.owdUs()/1000)
	}
	return out
}

// owdUs is the datagram's one-way delay in µs (from the timestamps when
// OWDUs was not filled in).
func (p UDPPacket) owdUs() float64 {
	if p.OWDUs == 0 && p.RecvNs != 0 && p.SentNs != 0 {
		return float64(p.RecvNs-p.SentNs) / 1e3
	}
	return p.OWDUs
}
