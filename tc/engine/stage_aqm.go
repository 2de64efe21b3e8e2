package engine

import (
	"math"
	"math/rand/v2"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/units"
)

// aqmStage is a bottleneck whose queue has a discipline other than
// drop-tail (drop-head, CoDel, FQ-CoDel, PIE, RED): the link's serialiser
// fed by a discipline that decides at enqueue AND at dequeue which
// packets go, which are dropped and which are marked. Unlike the other
// stages its departures cannot all be decided on arrival (CoDel drops at
// the head, FQ-CoDel serves flows in turn), so it runs as a discrete-event
// queue in virtual time: a packet is enqueued at its arrival time, and
// the direction calls run(now), which performs every dequeue whose time
// has come — the instants the serialiser becomes free, free = previous
// dequeue + its transmission time — in order, before it enqueues
// anything that arrived later (schedule calls run(t) before enqueueing
// arrivals stamped t). Each decision therefore sees exactly the queue it
// would see in a real router at that instant, whatever the engine's own
// scheduling latency; only the transmission itself can be late.
//
// Times are the engine clock (ns). A packet's sojourn is its dequeue
// time minus its arrival; it then leaves the serialiser wire·8/Rate
// later, on to the delay line.
type aqmStage struct {
	rate units.BitRate
	mtu  int
	disc string
	q    discipline

	free int64  // when the serialiser finishes the frame in service
	frac uint64 // ... plus frac/rate ns

	rng        *rand.Rand
	hist       *sojournHist
	limitDrops uint64 // at the hard limit (and FQ-CoDel's fat-flow drops)
	aqmDrops   uint64 // the discipline's own (early or head) drops
	marks      uint64 // CE marks instead of drops
	peak       int
	dropped    []*packet // released by the direction after the step
}

// discipline is one queueing algorithm behind the serialiser.
type discipline interface {
	// enqueue takes p, which arrived at now (p.arr); it may drop p or
	// others through s.drop, or mark p through s.mark.
	enqueue(s *aqmStage, p *packet, now int64)
	// dequeue returns the packet whose transmission starts at now, or
	// nil when the queue is (or, after drops, became) empty.
	dequeue(s *aqmStage, now int64) *packet
	len() int
	// flush hands every queued packet to fn, in the order the discipline
	// holds them, and empties it (no decision, no counting).
	flush(fn func(*packet))
	// configure applies resolved parameters, keeping queued packets and
	// the algorithm's state where the discipline stays the same.
	configure(a tc.AQM, pkts int, bytes int64, mtu int, rate units.BitRate)
}

type dropKind uint8

const (
	dropAtLimit dropKind = iota
	dropEarly
)

func (s *aqmStage) drop(p *packet, k dropKind) {
	if k == dropAtLimit {
		s.limitDrops += uint64(p.segs)
	} else {
		s.aqmDrops += uint64(p.segs)
	}
	s.dropped = append(s.dropped, p)
}

// mark sets CE on an ECN-capable p and counts it; false for others.
func (s *aqmStage) mark(p *packet) bool {
	if !markCE(p.frame()) {
		return false
	}
	s.marks += uint64(p.segs)
	return true
}

// active reports whether d needs this stage.
func aqmActive(d tc.Dir) bool { return d.Rate > 0 && !d.AQM.IsDropTail() }

func (s *aqmStage) reconfigure(d tc.Dir, mtu int) {
	if d.Rate != s.rate {
		s.frac = 0
	}
	s.rate, s.mtu = d.Rate, mtu
	if !aqmActive(d) {
		return
	}
	pk, by := d.QueueLimits(mtu)
	a := d.Discipline(mtu)
	if a.Discipline != s.disc || s.q == nil {
		s.q = newDiscipline(a.Discipline, s.rng)
		s.disc = a.Discipline
	}
	s.q.configure(a, pk, by, mtu, d.Rate)
}

func newDiscipline(name string, rng *rand.Rand) discipline {
	switch name {
	case tc.DropHead:
		return &dropHead{}
	case tc.CoDel:
		return &codelQueue{}
	case tc.FQCoDel:
		return &fqCodel{seed: rng.Uint32()}
	case tc.PIE:
		return &pieQueue{rng: rng}
	case tc.RED:
		return &redQueue{rng: rng}
	}
	panic("engine: no discipline " + name) // Validate and EngineSupports refuse the rest
}

// enqueue admits p at t. An idle serialiser starts at t.
func (s *aqmStage) enqueue(p *packet, t int64) {
	if s.q.len() == 0 && s.free < t {
		s.free, s.frac = t, 0
	}
	p.arr = t
	s.q.enqueue(s, p, t)
	s.peak = max(s.peak, s.q.len())
}

// next is when the stage has to act again (MaxInt64: nothing queued).
func (s *aqmStage) next() int64 {
	if s.q == nil || s.q.len() == 0 {
		return math.MaxInt64
	}
	return s.free
}

// run performs every dequeue due by now, in order, handing each packet
// and the end of its transmission to emit.
func (s *aqmStage) run(now int64, emit func(p *packet, end int64)) {
	for s.q != nil && s.q.len() > 0 && s.free <= now {
		t := s.free
		p := s.q.dequeue(s, t)
		if p == nil {
			break
		}
		s.hist.add(t - p.arr)
		emit(p, s.serialise(p, t))
	}
}

// serialise books p's transmission from t and returns when its last bit
// is out (rounded up to whole ns; the remainder carries on exactly).
func (s *aqmStage) serialise(p *packet, t int64) int64 {
	num := uint64(p.wire)*8_000_000_000 + s.frac
	end := t + int64(num/uint64(s.rate))
	s.frac = num % uint64(s.rate)
	s.free = end
	if s.frac > 0 {
		end++
	}
	return end
}

// drain empties the queue in the discipline's order without further
// drops (the direction is leaving this discipline), transmitting back to
// back from the serialiser's free time.
func (s *aqmStage) drain(emit func(p *packet, end int64)) {
	if s.q != nil {
		s.q.flush(func(p *packet) { emit(p, s.serialise(p, s.free)) })
	}
	s.q, s.disc = nil, ""
}

// length is what waits plus the frame in service at now.
func (s *aqmStage) length(now int64) int {
	n := 0
	if s.q != nil {
		n = s.q.len()
	}
	if s.free > now {
		n++
	}
	return n
}

// pktRing is a FIFO of packets with their byte count.
type pktRing struct {
	fifoLine
	bytes int64
}

func (r *pktRing) push(p *packet) {
	r.fifoLine.push(p)
	r.bytes += int64(p.wire)
}

func (r *pktRing) pop() *packet {
	p := r.fifoLine.pop()
	if p != nil {
		r.bytes -= int64(p.wire)
	}
	return p
}

// dropHead is a FIFO that, when full, drops its oldest packet to make
// room (the kernel's pfifo_head_drop): the newest data goes through.
type dropHead struct {
	q        pktRing
	maxPkts  int
	maxBytes int64
}

func (d *dropHead) configure(_ tc.AQM, pkts int, bytes int64, _ int, _ units.BitRate) {
	d.maxPkts, d.maxBytes = pkts, bytes
}

func (d *dropHead) len() int { return d.q.len() }

func (d *dropHead) enqueue(s *aqmStage, p *packet, _ int64) {
	for d.q.len() > 0 && ((d.maxPkts > 0 && d.q.len() >= d.maxPkts) || (d.maxBytes > 0 && d.q.bytes+int64(p.wire) > d.maxBytes)) {
		s.drop(d.q.pop(), dropAtLimit)
	}
	d.q.push(p)
}

func (d *dropHead) dequeue(_ *aqmStage, _ int64) *packet { return d.q.pop() }

func (d *dropHead) flush(fn func(*packet)) { d.q.flush(fn) }

func (r *pktRing) flush(fn func(*packet)) {
	for p := r.pop(); p != nil; p = r.pop() {
		fn(p)
	}
}
