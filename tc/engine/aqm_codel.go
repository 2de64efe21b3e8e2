package engine

import (
	"math"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/units"
)

// CoDel (RFC 8289) as Linux implements it (include/net/codel_impl.h),
// shared by the codel discipline and each flow of fq_codel. Decisions
// are taken at dequeue on the sojourn time of the head packet: once it
// has stayed above target for a whole interval, CoDel enters the dropping
// state and drops (or, with ECN, marks) the head packet, then the next
// one interval/√count later, until the sojourn falls below target. As in
// the kernel, no packet is dropped while the queue behind the head holds
// at most one full frame, and a re-entry soon after leaving resumes near
// the previous drop rate. The control law uses an exact 1/√count where
// the kernel iterates Newton's method (the same to a few parts in 1e4
// after a couple of drops).

type codelParams struct {
	target, interval int64 // ns
	mtu              int64 // bytes of a full frame: "backlog <= mtu" never drops
	ecn              bool
}

type codelVars struct {
	count, lastcount uint32
	dropping         bool
	firstAboveTime   int64 // 0: below target (or not measured)
	dropNext         int64
	ldelay           int64 // sojourn of the last packet looked at
}

func (v *codelVars) controlLaw(t int64, prm *codelParams) int64 {
	return t + int64(float64(prm.interval)/math.Sqrt(float64(max(v.count, 1))))
}

// shouldDrop is codel_should_drop: p may be nil (queue empty); backlog is
// what is left behind p.
func (v *codelVars) shouldDrop(p *packet, now int64, prm *codelParams, backlog int64) bool {
	if p == nil {
		v.firstAboveTime = 0
		return false
	}
	v.ldelay = now - p.arr
	if v.ldelay < prm.target || backlog <= prm.mtu {
		v.firstAboveTime = 0
		return false
	}
	if v.firstAboveTime == 0 {
		v.firstAboveTime = now + prm.interval
		return false
	}
	return now > v.firstAboveTime
}

// codelSource is the queue CoDel takes its head packets from.
type codelSource interface {
	pop() *packet
	backlog() int64 // bytes left, as the kernel counts it for the "≤ mtu" rule
}

// dequeue is codel_dequeue.
func (v *codelVars) dequeue(s *aqmStage, src codelSource, now int64, prm *codelParams) *packet {
	p := src.pop()
	if p == nil {
		v.dropping = false
		return nil
	}
	drop := v.shouldDrop(p, now, prm, src.backlog())
	switch {
	case v.dropping:
		if !drop {
			v.dropping = false // sojourn below target: leave dropping state
			break
		}
		for v.dropping && now >= v.dropNext {
			v.count++
			if prm.ecn && s.mark(p) {
				v.dropNext = v.controlLaw(v.dropNext, prm)
				return p
			}
			s.drop(p, dropEarly)
			p = src.pop()
			if !v.shouldDrop(p, now, prm, src.backlog()) {
				v.dropping = false
			} else {
				v.dropNext = v.controlLaw(v.dropNext, prm)
			}
		}
	case drop:
		if !(prm.ecn && s.mark(p)) {
			s.drop(p, dropEarly)
			p = src.pop()
			v.shouldDrop(p, now, prm, src.backlog())
		}
		v.dropping = true
		// If the queue went above target soon after it last went below,
		// the drop rate that controlled it then is a good start now.
		if delta := v.count - v.lastcount; delta > 1 && now-v.dropNext < 16*prm.interval {
			v.count = delta
		} else {
			v.count = 1
		}
		v.lastcount = v.count
		v.dropNext = v.controlLaw(now, prm)
	}
	return p
}

func codelParamsOf(a tc.AQM, mtu int) codelParams {
	return codelParams{target: int64(a.Target), interval: int64(a.Interval), mtu: int64(mtu + ethHdrLen), ecn: a.ECN}
}

// codelQueue is the codel discipline: one FIFO, a packet limit checked at
// enqueue (sch_codel).
type codelQueue struct {
	q     pktRing
	limit int
	prm   codelParams
	v     codelVars
}

func (c *codelQueue) configure(a tc.AQM, pkts int, _ int64, mtu int, _ units.BitRate) {
	c.limit, c.prm = pkts, codelParamsOf(a, mtu)
}

func (c *codelQueue) len() int { return c.q.len() }

func (c *codelQueue) enqueue(s *aqmStage, p *packet, _ int64) {
	if c.limit > 0 && c.q.len() >= c.limit {
		s.drop(p, dropAtLimit)
		return
	}
	c.q.push(p)
}

func (c *codelQueue) dequeue(s *aqmStage, now int64) *packet {
	return c.v.dequeue(s, (*ringSource)(&c.q), now, &c.prm)
}

func (c *codelQueue) flush(fn func(*packet)) { c.q.flush(fn) }

// ringSource is a pktRing as CoDel's source: the backlog is its own.
type ringSource pktRing

func (r *ringSource) pop() *packet   { return (*pktRing)(r).pop() }
func (r *ringSource) backlog() int64 { return r.bytes }

// fqCodel is FQ-CoDel (RFC 8290, sch_fq_codel.c): packets are hashed by
// flow into Flows queues, each with its own CoDel state; a deficit round
// robin with a quantum of bytes serves new flows (those that were empty)
// before old ones, so a sparse flow's packets hardly wait; when the
// packet limit is reached the flow with the largest backlog loses up to
// half of it from its head (at most 64 packets at a time).
type fqCodel struct {
	seed     uint32
	flows    []fqFlow
	newFlows intRing
	oldFlows intRing
	n        int   // packets queued
	bytes    int64 // bytes queued
	limit    int
	quantum  int
	prm      codelParams
}

type fqFlow struct {
	q       pktRing
	deficit int
	list    uint8 // 0: in no list, 1: new, 2: old
	v       codelVars
}

const (
	fqNone uint8 = iota
	fqNew
	fqOld
	fqDropBatch = 64 // fq_codel's drop_batch_size
)

func (f *fqCodel) configure(a tc.AQM, pkts int, _ int64, mtu int, _ units.BitRate) {
	f.limit, f.quantum, f.prm = pkts, a.Quantum, codelParamsOf(a, mtu)
	if len(f.flows) != a.Flows {
		// the kernel refuses to change the number of flows; a new array
		// starts empty (queued packets are re-bucketed)
		old := f.flows
		f.flows = make([]fqFlow, a.Flows)
		f.newFlows, f.oldFlows, f.n, f.bytes = intRing{}, intRing{}, 0, 0
		for i := range old {
			old[i].q.flush(func(p *packet) { f.add(p) })
		}
	}
}

func (f *fqCodel) len() int { return f.n }

// fqSource is one flow as CoDel's source: what it pops leaves the flow
// and the whole queue; the backlog CoDel checks is the whole queue's, as
// in the kernel.
type fqSource struct {
	f    *fqCodel
	flow *fqFlow
}

func (s fqSource) pop() *packet {
	p := s.flow.q.pop()
	if p != nil {
		s.f.n--
		s.f.bytes -= int64(p.wire)
	}
	return p
}

func (s fqSource) backlog() int64 { return s.f.bytes }

func (f *fqCodel) add(p *packet) int {
	idx := int(uint64(flowHash(p.frame(), f.seed)) * uint64(len(f.flows)) >> 32)
	fl := &f.flows[idx]
	fl.q.push(p)
	f.n++
	f.bytes += int64(p.wire)
	if fl.list == fqNone {
		fl.list = fqNew
		fl.deficit = f.quantum
		f.newFlows.push(idx)
	}
	return idx
}

func (f *fqCodel) enqueue(s *aqmStage, p *packet, _ int64) {
	f.add(p)
	if f.limit <= 0 || f.n <= f.limit {
		return
	}
	// fq_codel_drop: half of the fattest flow's backlog, from its head
	fat, most := 0, int64(-1)
	for i := range f.flows {
		if b := f.flows[i].q.bytes; b > most {
			fat, most = i, b
		}
	}
	src := fqSource{f, &f.flows[fat]}
	threshold := most / 2
	var dropped int64
	for i := 0; i == 0 || i < fqDropBatch && dropped < threshold; i++ {
		q := src.pop()
		if q == nil {
			break
		}
		dropped += int64(q.wire)
		s.drop(q, dropAtLimit)
	}
}

func (f *fqCodel) dequeue(s *aqmStage, now int64) *packet {
	for {
		head := &f.newFlows
		if head.len() == 0 {
			head = &f.oldFlows
			if head.len() == 0 {
				return nil
			}
		}
		idx := head.peek()
		fl := &f.flows[idx]
		if fl.deficit <= 0 {
			fl.deficit += f.quantum
			head.pop()
			fl.list = fqOld
			f.oldFlows.push(idx)
			continue
		}
		p := fl.v.dequeue(s, fqSource{f, fl}, now, &f.prm)
		if p == nil {
			// an emptied new flow goes through old_flows once more so it
			// cannot starve them by coming back as new
			head.pop()
			if head == &f.newFlows && f.oldFlows.len() > 0 {
				fl.list = fqOld
				f.oldFlows.push(idx)
			} else {
				fl.list = fqNone
			}
			continue
		}
		fl.deficit -= p.wire
		return p
	}
}

func (f *fqCodel) flush(fn func(*packet)) {
	for i := range f.flows {
		f.flows[i].q.flush(fn)
		f.flows[i].list = fqNone
	}
	f.newFlows, f.oldFlows, f.n, f.bytes = intRing{}, intRing{}, 0, 0
}

// intRing is a FIFO of flow indexes.
type intRing struct {
	buf  []int
	head int
	n    int
}

func (r *intRing) len() int { return r.n }

func (r *intRing) push(v int) {
	if r.n == len(r.buf) {
		grown := make([]int, max(16, 2*len(r.buf)))
		for i := 0; i < r.n; i++ {
			grown[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = v
	r.n++
}

func (r *intRing) peek() int { return r.buf[r.head] }

func (r *intRing) pop() int {
	v := r.buf[r.head]
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return v
}
