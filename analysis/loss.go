package analysis

// UDPLoss is the fraction of datagrams sent that never arrived:
// (sent − (received − duplicates)) / sent. It is 0 when nothing was sent.
// This is packet loss; it is never computed for TCP.
func UDPLoss(u *UDPFlow) float64 {
	if u == nil || u.Sent <= 0 {
		return 0
	}
	lost := u.Sent - (u.Received - u.Duplicates)
	if lost < 0 {
		lost = 0
	}
	return float64(lost) / float64(u.Sent)
}

// RetransRatio is the flow's TCP retransmission ratio over w: segments
// retransmitted / segments sent (tcpi_total_retrans and tcpi_segs_out
// deltas between the last sample at or before w's start and the last
// sample inside w). A retransmission is not a loss: spurious
// retransmissions count, and a lost retransmission counts twice. The
// second result is false when the samples lack the counters.
func RetransRatio(f *Flow, w Window) (float64, bool) {
	var first, last *TCPInfo
	for i := range f.Samples {
		s := &f.Samples[i]
		if s.TCP == nil || s.TCP.SegsOut == 0 {
			continue
		}
		if s.TS <= w.FromS {
			first = s.TCP
		}
		if s.TS <= w.ToS {
			last = s.TCP
		}
	}
	if last == nil {
		return 0, false
	}
	var retr, segs float64
	if first == nil {
		retr, segs = float64(last.Retrans), float64(last.SegsOut)
	} else {
		retr, segs = float64(last.Retrans)-float64(first.Retrans), float64(last.SegsOut)-float64(first.SegsOut)
	}
	if segs <= 0 {
		return 0, false
	}
	return retr / segs, true
}

// RetransRatioCounters is TcpRetransSegs / TcpOutSegs from a node's nstat
// deltas (all sockets of the node's namespace). False when either counter
// is missing or TcpOutSegs is 0.
func RetransRatioCounters(c map[string]int64) (float64, bool) {
	r, ok1 := c["TcpRetransSegs"]
	o, ok2 := c["TcpOutSegs"]
	if !ok1 || !ok2 || o <= 0 {
		return 0, false
	}
	return float64(r) / float64(o), true
}

// QueueDropRatio is the link's qdisc drop ratio: dropped / (sent +
// dropped) packets — the queue-overflow "link drops", kept apart from
// random emulated loss (RandomDropRatio) and from TCP retransmissions.
func QueueDropRatio(l *Link) float64 {
	tot := l.SentPackets + l.DroppedPackets
	if tot <= 0 {
		return 0
	}
	return float64(l.DroppedPackets) / float64(tot)
}

// RandomDropRatio is the link's emulated random-loss ratio: random drops /
// (sent + dropped + random drops) packets offered.
func RandomDropRatio(l *Link) float64 {
	tot := l.SentPackets + l.DroppedPackets + l.RandomDrops
	if tot <= 0 {
		return 0
	}
	return float64(l.RandomDrops) / float64(tot)
}
