package engine

import (
	"math/rand/v2"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/units"
)

// pieQueue is PIE (RFC 8033) as Linux's sch_pie runs it by default (no
// departure-rate estimator: the queueing delay is the sojourn time of the
// last dequeued packet). Every TUpdate the drop probability moves by
// alpha·(delay − target) + beta·(delay − previous delay), with the RFC's
// auto-tuning of alpha and beta at low probabilities, its 2 % step cap,
// the +2 % kick above 250 ms and the decay when the queue stays empty;
// arrivals are dropped (or, with ECN and a probability up to 10 %,
// marked) at random with that probability, de-randomised as the RFC
// describes (accumulated probability: never below 0.85, always at 8.5),
// except during the 150 ms burst allowance, when the delay is below half
// the target and the probability below 20 %, or with fewer than two full
// frames queued. The periodic update runs lazily: before each event the
// updates due since the last one are applied; nothing changes the state
// between events, so this is the timer's result exactly.
type pieQueue struct {
	rng   *rand.Rand
	q     pktRing
	limit int

	target, tupdate int64 // ns
	alpha, beta     float64
	ecn             bool
	mtu             int64

	prob, accuProb    float64
	qdelay, qdelayOld int64
	burstTime         int64
	dqTstamp          int64 // -1: none
	nextTick          int64 // 0: not started
}

const (
	pieMaxBurst  = 150_000_000 // ns
	pieHighDelay = 250_000_000
)

func (q *pieQueue) configure(a tc.AQM, pkts int, _ int64, mtu int, _ units.BitRate) {
	q.limit = pkts
	q.target, q.tupdate = int64(a.Target), int64(a.TUpdate)
	q.alpha, q.beta, q.ecn = a.Alpha, a.Beta, a.ECN
	q.mtu = int64(mtu + ethHdrLen)
	if q.nextTick == 0 {
		q.resetVars()
	}
}

// resetVars is pie_vars_init.
func (q *pieQueue) resetVars() {
	q.burstTime = pieMaxBurst
	q.dqTstamp = -1
	q.accuProb = 0
}

func (q *pieQueue) len() int { return q.q.len() }

// tick applies the probability updates due by now. The first comes one
// period after the first packet (the kernel's timer runs from the qdisc's
// creation, at an arbitrary phase).
func (q *pieQueue) tick(now int64) {
	if q.nextTick == 0 {
		q.nextTick = now + q.tupdate
		return
	}
	for q.nextTick <= now {
		q.calculateProbability()
		q.nextTick += q.tupdate
	}
}

// calculateProbability is pie_calculate_probability without the
// departure-rate estimator.
func (q *pieQueue) calculateProbability() {
	qdelay, qdelayOld := q.qdelay, q.qdelayOld
	update := !(qdelay == 0 && q.q.bytes != 0)
	alpha, beta := q.alpha, q.beta
	if q.prob < 0.1 {
		// scale the gains down with the probability (RFC 8033 §5.2)
		alpha, beta = alpha/2, beta/2
		for power := 100.0; q.prob < 1/power && power <= 1e6; power *= 10 {
			alpha, beta = alpha/4, beta/4
		}
	}
	delta := alpha*float64(qdelay-q.target)/1e9 + beta*float64(qdelay-qdelayOld)/1e9
	if delta > 0.02 && q.prob >= 0.1 {
		delta = 0.02 // steps of at most 2 %
	}
	if qdelay > pieHighDelay {
		delta += 0.02
	}
	q.prob += delta
	switch {
	case delta > 0 && q.prob > 1:
		q.prob = 1
		update = false
	case delta <= 0 && q.prob < 0:
		q.prob = 0
	}
	if qdelay == 0 && qdelayOld == 0 && update {
		q.prob -= q.prob / 64 // an empty queue twice in a row: decay
	}
	if qdelay < q.target/2 && qdelayOld < q.target/2 && q.prob == 0 {
		q.resetVars()
	}
	q.qdelayOld = qdelay
}

// dropEarly is pie_drop_early (no byte mode).
func (q *pieQueue) dropEarly() bool {
	if q.burstTime > 0 {
		return false
	}
	if q.qdelay < q.target/2 && q.prob < 0.2 {
		return false
	}
	if q.q.bytes < 2*q.mtu {
		return false
	}
	if q.prob == 0 {
		q.accuProb = 0
	} else {
		q.accuProb += q.prob
	}
	if q.accuProb < 0.85 {
		return false
	}
	if q.accuProb >= 8.5 {
		return true
	}
	if q.rng.Float64() < q.prob {
		q.accuProb = 0
		return true
	}
	return false
}

func (q *pieQueue) enqueue(s *aqmStage, p *packet, now int64) {
	q.tick(now)
	if q.q.len() >= q.limit {
		q.accuProb = 0
		s.drop(p, dropAtLimit)
		return
	}
	if q.dropEarly() && !(q.ecn && q.prob <= 0.1 && s.mark(p)) {
		q.accuProb = 0
		s.drop(p, dropEarly)
		return
	}
	q.q.push(p)
}

func (q *pieQueue) dequeue(_ *aqmStage, now int64) *packet {
	q.tick(now)
	p := q.q.pop()
	if p == nil {
		return nil
	}
	// pie_process_dequeue: the delay is this packet's sojourn
	q.qdelay = now - p.arr
	var dtime int64
	if q.dqTstamp >= 0 {
		dtime = now - q.dqTstamp
	}
	q.dqTstamp = now
	if q.q.bytes == 0 {
		q.qdelay = 0
	}
	if dtime > 0 && q.burstTime > 0 {
		q.burstTime = max(0, q.burstTime-dtime)
	}
	return p
}

func (q *pieQueue) flush(fn func(*packet)) { q.q.flush(fn) }
