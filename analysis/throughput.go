package analysis

// Framing is the per-packet overhead model of a shaped link: how many
// payload bytes ride in how many bytes the shaper counts. HTB and TBF count
// skb->len, i.e. the Ethernet frame without preamble, FCS or gaps.
type Framing struct {
	// PayloadBytes is the application payload per packet.
	PayloadBytes int `json:"payload_bytes"`
	// FrameBytes is what the shaper charges per packet.
	FrameBytes int `json:"frame_bytes"`
}

// Common framings on a 1500-byte MTU Ethernet link.
var (
	// TCPTimestamps: 1448 payload bytes per 1514-byte frame (TCP
	// timestamps on, Linux's default).
	TCPTimestamps = Framing{1448, 1514}
	// TCPNoTimestamps: 1460 payload bytes per 1514-byte frame.
	TCPNoTimestamps = Framing{1460, 1514}
)

// FramingUDP is the framing of UDP datagrams with the given payload over
// IPv4 and Ethernet (42 bytes of headers).
func FramingUDP(payload int) Framing { return Framing{payload, payload + 42} }

// FramingTCP is the framing of full-sized TCP segments carrying mss payload
// bytes over IPv4 and Ethernet: 54 bytes of headers plus 12 bytes of
// timestamp option, unless mss is 1460 (a 1500-byte MTU without
// timestamps). mss ≤ 0 means the Linux default (TCPTimestamps).
func FramingTCP(mss int) Framing {
	switch {
	case mss <= 0:
		return TCPTimestamps
	case mss == 1460:
		return TCPNoTimestamps
	}
	return Framing{mss, mss + 66}
}

// Capacity is the highest goodput a link of rateBps (bits/s, as the shaper
// counts them) can carry with the given framing:
// rate × payload/frame, e.g. R × 1448/1514 for TCP with timestamps.
func Capacity(rateBps float64, fr Framing) float64 {
	if fr.FrameBytes <= 0 {
		return 0
	}
	return rateBps * float64(fr.PayloadBytes) / float64(fr.FrameBytes)
}

// Utilisation is goodput as a fraction of capacity (0 when capacity is 0).
func Utilisation(goodputBps, capacityBps float64) float64 {
	if capacityBps <= 0 {
		return 0
	}
	return goodputBps / capacityBps
}

// BytesIn is the application payload the flow delivered within w, in
// bytes. A sample whose interval straddles an edge of w contributes in
// proportion to its overlap. Samples carry per-interval Bytes; when none
// does (a producer that only filled TCP_INFO), deltas of bytes_acked are
// used instead. With no samples at all, BytesReceived counts when w
// covers the whole flow.
func (f *Flow) BytesIn(w Window) float64 {
	if len(f.Samples) == 0 {
		if span := f.Span(); w.FromS <= span.FromS && w.ToS >= span.ToS {
			return float64(f.BytesReceived)
		}
		return 0
	}
	useAcked := true
	for _, s := range f.Samples {
		if s.Bytes != 0 || s.TCP == nil {
			useAcked = false
			break
		}
	}
	var sum float64
	var prevAcked uint64
	for i, s := range f.Samples {
		b := float64(s.Bytes)
		if useAcked {
			b = float64(s.TCP.BytesAcked - prevAcked)
			prevAcked = s.TCP.BytesAcked
		}
		sum += b * f.overlapFraction(i, w)
	}
	return sum
}

// Goodput is the flow's goodput over the part of w in which it was active,
// in bits/s: delivered application bytes × 8 / length. It is 0 when that
// part is empty.
func Goodput(f *Flow, w Window) float64 {
	act := w.Intersect(f.Span())
	if act.Empty() {
		return 0
	}
	return f.BytesIn(act) * 8 / act.Len()
}

// AggregateGoodput is the summed goodput of flows over w in bits/s: all
// bytes delivered within w × 8 / length of w (flows inactive for part of w
// count as delivering nothing then).
func AggregateGoodput(flows []Flow, w Window) float64 {
	if w.Empty() {
		return 0
	}
	var sum float64
	for i := range flows {
		sum += flows[i].BytesIn(w)
	}
	return sum * 8 / w.Len()
}

// MSS is the most common sender MSS in the flow's samples (0 if unknown).
func (f *Flow) MSS() int {
	count := map[uint32]int{}
	best, bestN := uint32(0), 0
	for _, s := range f.Samples {
		if s.TCP == nil || s.TCP.MSS == 0 {
			continue
		}
		count[s.TCP.MSS]++
		if n := count[s.TCP.MSS]; n > bestN || (n == bestN && s.TCP.MSS < best) {
			best, bestN = s.TCP.MSS, n
		}
	}
	return int(best)
}

// FlowCapacity is the goodput capacity of the flow's bottleneck in bits/s
// (0 when the bottleneck rate is unknown), using its MSS for TCP and its
// datagram size for UDP.
func FlowCapacity(f *Flow) float64 {
	if f.BottleneckBps <= 0 {
		return 0
	}
	if f.Proto == "udp" {
		if f.UDP != nil && f.UDP.PayloadBytes > 0 {
			return Capacity(f.BottleneckBps, FramingUDP(f.UDP.PayloadBytes))
		}
		return 0
	}
	return Capacity(f.BottleneckBps, FramingTCP(f.MSS()))
}
