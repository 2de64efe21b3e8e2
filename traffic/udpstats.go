package traffic

import (
	"encoding/binary"
	"math"

	"github.com/emuctl/emuctl/analysis"
)

// A UDP datagram of a flow starts with this header; the rest is padding.
//
//	0  magic "emuT"
//	4  flow token (random per stream, so stray datagrams are ignored)
//	8  sequence number, from 0
//	16 send time, Unix nanoseconds (CLOCK_REALTIME)
const (
	udpHeaderLen = 24
	udpMagic     = 0x656d7554 // "emuT"
)

func putUDPHeader(b []byte, token uint32, seq uint64, sentNs int64) {
	binary.BigEndian.PutUint32(b[0:], udpMagic)
	binary.BigEndian.PutUint32(b[4:], token)
	binary.BigEndian.PutUint64(b[8:], seq)
	binary.BigEndian.PutUint64(b[16:], uint64(sentNs))
}

func parseUDPHeader(b []byte, token uint32) (seq uint64, sentNs int64, ok bool) {
	if len(b) < udpHeaderLen || binary.BigEndian.Uint32(b[0:]) != udpMagic || binary.BigEndian.Uint32(b[4:]) != token {
		return 0, 0, false
	}
	return binary.BigEndian.Uint64(b[8:]), int64(binary.BigEndian.Uint64(b[16:])), true
}

// udpStats is a UDP receiver's accounting: duplicates, reordering, the
// RFC 3550 jitter estimator as iperf computes it (J += (|D| − J)/16 over
// consecutive arrivals, D the change in transit time), the mean absolute
// delay difference, and one-way delays (exact: sender and receiver share
// one clock).
type udpStats struct {
	seen       []uint64 // bitset of sequence numbers received
	received   int64
	duplicates int64
	outOfOrder int64
	bytes      int64
	maxSeq     int64 // -1 before the first datagram

	havePrev     bool
	prevTransit  int64
	jitterNs     float64
	sumAbsDelta  float64
	nDelta       int64
	owdMin       int64
	owdMax       int64
	owdSum       float64
	keep         bool
	packets      []analysis.UDPPacket
	maxSeqAccept uint64
}

func newUDPStats(keep bool, maxSeq uint64) *udpStats {
	return &udpStats{maxSeq: -1, keep: keep, owdMin: math.MaxInt64, maxSeqAccept: maxSeq}
}

// add records one datagram; it returns false for a sequence number far
// beyond anything the sender could have sent (a corrupt datagram).
func (u *udpStats) add(seq uint64, sentNs, recvNs int64, size int) bool {
	if seq > u.maxSeqAccept {
		return false
	}
	u.received++
	u.bytes += int64(size)
	w, bit := seq/64, uint64(1)<<(seq%64)
	for uint64(len(u.seen)) <= w {
		u.seen = append(u.seen, 0)
	}
	if u.seen[w]&bit != 0 {
		u.duplicates++
	} else {
		u.seen[w] |= bit
		if int64(seq) < u.maxSeq {
			u.outOfOrder++
		}
	}
	if int64(seq) > u.maxSeq {
		u.maxSeq = int64(seq)
	}
	transit := recvNs - sentNs
	if u.havePrev {
		d := math.Abs(float64(transit - u.prevTransit))
		u.jitterNs += (d - u.jitterNs) / 16
		u.sumAbsDelta += d
		u.nDelta++
	}
	u.havePrev, u.prevTransit = true, transit
	u.owdMin = min(u.owdMin, transit)
	u.owdMax = max(u.owdMax, transit)
	u.owdSum += float64(transit)
	if u.keep {
		u.packets = append(u.packets, analysis.UDPPacket{Seq: seq, SentNs: sentNs, RecvNs: recvNs, OWDUs: float64(transit) / 1e3})
	}
	return true
}

// unique is the number of distinct datagrams received.
func (u *udpStats) unique() int64 { return u.received - u.duplicates }

// meanAbsDeltaNs is Σ|d_i − d_{i−1}| / (N − 1).
func (u *udpStats) meanAbsDeltaNs() float64 {
	if u.nDelta == 0 {
		return 0
	}
	return u.sumAbsDelta / float64(u.nDelta)
}

func (u *udpStats) owdMeanNs() float64 {
	if u.received == 0 {
		return 0
	}
	return u.owdSum / float64(u.received)
}

func (u *udpStats) owdMinUs() float64 {
	if u.received == 0 {
		return 0
	}
	return float64(u.owdMin) / 1e3
}
