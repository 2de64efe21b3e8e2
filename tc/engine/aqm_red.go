package engine

import (
	"math"
	"math/rand/v2"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/units"
)

// redQueue is RED (Floyd & Jacobson 1993) as Linux's sch_red runs it
// (include/net/red.h), decided at enqueue: the average queue (bytes) is
// an EWMA of the backlog an arrival finds, weight W = 2^-Wlog, decayed
// through the kernel's own table after idle time; below Min nothing
// happens, between Min and Max an arrival is marked with probability
// p_b = MaxP·(avg−Min)/(Max−Min) spread uniformly (count since the last
// mark × p_b against a uniform draw), above Max every arrival is marked
// (or, with Gentle, p_b ramps from MaxP to 1 up to 2·Max). "Marked" means
// CE for an ECN-capable packet when ECN is on, a drop otherwise. Then the
// packet joins a byte-limited FIFO (drops there count at the limit).
// Weight 1 with Min = Max is DCTCP's step marking on the instantaneous
// queue.
type redQueue struct {
	rng   *rand.Rand
	q     pktRing
	limit int64 // bytes

	minTh, maxTh float64 // bytes
	wlog         int
	maxP         float64
	ecn, gentle  bool
	stab         [256]byte
	cellLog      int

	qavg      float64 // bytes
	qcount    int     // arrivals since the last mark, -1 outside [min, max)
	qR        float64 // the uniform draw the count is held against
	idleStart int64   // -1: not idle
}

func (r *redQueue) configure(a tc.AQM, pkts int, bytes int64, mtu int, rate units.BitRate) {
	r.limit = bytes
	if r.limit == 0 {
		r.limit = int64(pkts) * int64(mtu+ethHdrLen)
	}
	k := a.RED(rate.Bytes())
	r.minTh, r.maxTh = float64(k.MinTh), float64(k.MaxTh)
	r.wlog, r.maxP = int(k.Wlog), float64(k.MaxP)/(1<<32)
	r.ecn, r.gentle = a.ECN, a.Gentle
	r.stab, r.cellLog = k.Stab, int(k.ScellLog)
	r.qcount, r.idleStart = -1, -1
}

func (r *redQueue) len() int { return r.q.len() }

// avgAfterIdle is red_calc_qavg_from_idle_time.
func (r *redQueue) avgAfterIdle(now int64) float64 {
	usIdle := min((now-r.idleStart)/1000, int64(255)<<r.cellLog)
	if shift := r.stab[(usIdle>>r.cellLog)&255]; shift > 0 {
		return r.qavg / math.Exp2(float64(shift))
	}
	dec := r.qavg * float64(usIdle) / math.Exp2(float64(r.cellLog))
	if dec < r.qavg/2 {
		return r.qavg - dec
	}
	return r.qavg / 2
}

type redVerdict uint8

const (
	redPass redVerdict = iota
	redProb
	redHard
)

// action is red_action, with gentle RED's ramp above Max.
func (r *redQueue) action() redVerdict {
	var pb float64
	switch {
	case r.qavg < r.minTh:
		r.qcount = -1
		return redPass
	case r.qavg < r.maxTh:
		delta := max(r.maxTh-r.minTh, 1)
		pb = r.maxP * (r.qavg - r.minTh) / delta
	case r.gentle && r.qavg < 2*r.maxTh:
		pb = r.maxP + (1-r.maxP)*(r.qavg-r.maxTh)/r.maxTh
	default:
		r.qcount = -1
		return redHard
	}
	r.qcount++
	if r.qcount == 0 {
		r.qR = r.rng.Float64()
		return redPass
	}
	if float64(r.qcount)*pb >= r.qR {
		r.qcount = 0
		r.qR = r.rng.Float64()
		return redProb
	}
	return redPass
}

func (r *redQueue) enqueue(s *aqmStage, p *packet, now int64) {
	if r.idleStart >= 0 {
		r.qavg = r.avgAfterIdle(now)
		r.idleStart = -1
	} else {
		r.qavg += (float64(r.q.bytes) - r.qavg) / math.Exp2(float64(r.wlog))
	}
	if v := r.action(); v != redPass && !(r.ecn && s.mark(p)) {
		s.drop(p, dropEarly)
		return
	}
	if r.q.bytes+int64(p.wire) > r.limit {
		s.drop(p, dropAtLimit)
		return
	}
	r.q.push(p)
}

func (r *redQueue) dequeue(_ *aqmStage, now int64) *packet {
	p := r.q.pop()
	if r.q.len() == 0 && r.idleStart < 0 {
		// the kernel starts the idle period when the next dequeue finds
		// nothing, right after this one
		r.idleStart = now
	}
	return p
}

func (r *redQueue) flush(fn func(*packet)) { r.q.flush(fn) }
