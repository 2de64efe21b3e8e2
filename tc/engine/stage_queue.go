package engine

import (
	"math"
	"math/bits"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/units"
)

// queueStage is the link's serialiser and its bounded drop-tail queue. The
// queue holds every packet not yet fully transmitted (the one being
// serialised included), like netem's tfifo with a rate: a frame of w bytes
// leaves at max(arrival, previous departure) + 8w/Rate, and an arrival that
// finds maxPkts packets (or would exceed maxBytes) is dropped. Departure
// times are kept exactly: whole nanoseconds plus a remainder in units of
// 1/Rate ns, so long runs do not drift.
type queueStage struct {
	rate     units.BitRate // 0 = no rate, no queue
	maxPkts  int
	maxBytes int64

	ring  []qent // packets in the queue, by departure
	head  int
	n     int
	bytes int64
	last  int64  // departure of the newest packet (ns)
	frac  uint64 // ... plus frac/rate ns
	drops uint64
	peak  int // most packets ever held at once
	hist  *sojournHist
}

type qent struct {
	start int64 // when its transmission starts
	dep   int64
	wire  int
	p     *packet // for retime; nil once the direction let it go
}

func (q *queueStage) reconfigure(d tc.Dir, mtu int) {
	if d.Rate != q.rate {
		q.frac = 0
	}
	q.rate = d.Rate
	pk, by := d.QueueLimits(mtu)
	q.maxPkts, q.maxBytes = pk, by
}

// expire forgets packets that have left by time t.
func (q *queueStage) expire(t int64) {
	for q.n > 0 && q.ring[q.head].dep <= t {
		q.bytes -= int64(q.ring[q.head].wire)
		q.head = (q.head + 1) % len(q.ring)
		q.n--
	}
}

func (q *queueStage) admit(p *packet, t int64) (int64, verdict) {
	if q.rate == 0 {
		return t, pass
	}
	q.expire(t)
	if (q.maxPkts > 0 && q.n >= q.maxPkts) || (q.maxBytes > 0 && q.bytes+int64(p.wire) > q.maxBytes) {
		q.drops++
		return 0, dropQueue
	}
	start, frac := q.last, q.frac
	if t >= start {
		start, frac = t, 0
	}
	if q.hist != nil {
		q.hist.add(start - t)
	}
	num := uint64(p.wire)*8_000_000_000 + frac
	dep := start + int64(num/uint64(q.rate))
	q.last, q.frac = dep, num%uint64(q.rate)
	q.push(qent{start: start, dep: dep, wire: p.wire, p: p})
	q.bytes += int64(p.wire)
	q.peak = max(q.peak, q.n)
	if q.frac > 0 {
		dep++ // never send before the last bit is out
	}
	return dep, pass
}

// carry continues after a discipline's queue drained: the link is busy
// until last (+ frac/rate ns).
func (q *queueStage) carry(last int64, frac uint64) {
	if last > q.last || (last == q.last && frac > q.frac) {
		q.last, q.frac = last, frac
	}
}

func (q *queueStage) push(e qent) {
	if q.n == len(q.ring) {
		grown := make([]qent, max(64, 2*len(q.ring)))
		for i := 0; i < q.n; i++ {
			grown[i] = q.ring[(q.head+i)%len(q.ring)]
		}
		q.ring, q.head = grown, 0
	}
	q.ring[(q.head+q.n)%len(q.ring)] = e
	q.n++
}

// length is the number of packets queued or in transmission at time t.
func (q *queueStage) length(t int64) int {
	q.expire(t)
	return q.n
}

// forget drops the link to p, the newest packet, which the direction did
// not keep (its transmission stays booked).
func (q *queueStage) forget(p *packet) {
	if q.n > 0 {
		if e := &q.ring[(q.head+q.n-1)%len(q.ring)]; e.p == p {
			e.p = nil
		}
	}
}

// retime moves the link to rate at now: the frame being serialised
// sends its remaining bits at the new rate, the frames waiting behind it
// follow back to back at the new rate (0: at once), and each packet's
// due time moves with its departure. It reports whether any packet
// moved; the caller restores the line's order.
func (q *queueStage) retime(now int64, rate units.BitRate) bool {
	q.expire(now)
	old := q.rate
	q.rate = rate
	if q.n == 0 || old == 0 {
		q.frac = 0
		return false
	}
	t, frac := now, uint64(0)
	for i := 0; i < q.n; i++ {
		e := &q.ring[(q.head+i)%len(q.ring)]
		var dep int64
		switch {
		case rate == 0:
			dep = now
		case e.start <= now: // in service: its remaining bits at the new rate
			hi, lo := bits.Mul64(uint64(e.dep-now), uint64(old))
			quo, rem := bits.Div64(hi, lo, uint64(rate))
			dep, t = now+int64(quo), now+int64(quo)
			if rem > 0 {
				dep++
				t++
			}
		default:
			e.start = t
			num := uint64(e.wire)*8_000_000_000 + frac
			t += int64(num / uint64(rate))
			frac = num % uint64(rate)
			dep = t
			if frac > 0 {
				dep++
			}
		}
		if e.p != nil {
			e.p.due += dep - e.dep
		}
		e.dep = dep
	}
	q.last, q.frac = t, frac
	if rate == 0 {
		q.last, q.frac = math.MinInt64/2, 0
	}
	return true
}
