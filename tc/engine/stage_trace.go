package engine

import (
	"math"
	"slices"
	"sort"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/tc/mmtrace"
)

// traceStage is a link driven by a mahimahi trace (tc.Trace) with
// mahimahi's queue, in place of the rate + queue stage. mm-link delivers
// TraceBytes bytes at each opportunity from the head of its queue; this
// stage decides the same departures on arrival, from a cursor at the
// queue's tail (the next byte free: opportunity k, used bytes of it):
//
//   - a packet arriving at trace time τ can use only opportunities whose
//     millisecond is > ⌊τ⌋ (mm-link burns every opportunity ≤ now before
//     it enqueues): a cursor in the past jumps to the first such one, its
//     bytes unused — what mm-link wastes on an empty queue;
//   - it costs TraceCost(wire) bytes, taken from the cursor on across as
//     many opportunities as needed; it leaves at the opportunity holding
//     its last byte, and the next packet may use the rest of it;
//   - opportunity k of a looping trace is at cycle·period + Ms[k mod n].
//
// The queue limits count the packets waiting at τ (their first byte not
// yet sent) and their bytes, not the one in transit, as mahimahi's
// DroppingPacketQueue does. Drop-tail decides everything on arrival, so a
// packet goes on at once with its departure time. Drop-head changes the
// fate of packets already queued, so with it the stage holds its packets
// (verdict queued) and releases each at its departure (run); a drop at
// the head re-books the packets behind it from where the dropped one would
// have started.
type traceStage struct {
	on     bool
	ms     []uint32
	n      int64 // opportunities per period
	period int64 // ms
	loop   bool
	base   int64 // engine time of trace time offset
	offset int64 // ns into the trace at base

	maxPkts  int
	maxBytes int64
	hold     bool // drop-head: packets are held until they leave

	// stranded packets arrived after a trace without loop ended: they
	// wait for ever in mm-link, so they count against the limits.
	stranded      int
	strandedBytes int64

	k    int64 // cursor: absolute opportunity index (cycle·n + i)
	used int   // bytes of opportunity k already given

	q     []tent // packets not yet gone, oldest first
	qhead int
	bytes int64 // their costs

	headDrops uint64 // queued packets dropped at the head (drop-head); the
	// caller counts the arrivals refused (verdict dropQueue)
	peak    int
	hist    *sojournHist
	ready   []*packet // held packets released by run, for the caller
	dropped []*packet // held packets dropped at the head, for the caller
}

// tent is one packet in the traced queue.
type tent struct {
	arr        int64 // trace time of arrival (ns)
	startK     int64 // cursor before its first byte
	startUsed  int
	endK       int64 // opportunity of its last byte (its departure)
	cost       int
	p          *packet // drop-head only
	departT    int64   // engine time of departure
	firstStart int64   // engine time its first byte goes
}

// never is an opportunity index that does not exist (a trace without
// loop has ended).
const never = math.MaxInt64

func (s *traceStage) reconfigure(d tc.Dir, _ int) { s.configure(d, 0) }

// configure applies d; now is the engine time at which a new trace
// starts (the same trace, re-applied, keeps its clock and cursor).
func (s *traceStage) configure(d tc.Dir, now int64) {
	tr := d.Trace
	if tr == nil {
		s.on = false
		return
	}
	// the same trace (as a link set or a schedule step sends it again,
	// decoded afresh from the lab's state) keeps its clock and cursor
	same := s.on && s.offset == int64(tr.Offset) && s.loop == tr.Loop && slices.Equal(s.ms, tr.Ms)
	s.on = true
	s.maxPkts, s.maxBytes = d.QueuePackets, int64(d.QueueBytes)
	s.hold = d.AQM.Name() == tc.DropHead
	if same {
		return
	}
	s.ms = tr.Ms
	s.n = int64(len(tr.Ms))
	s.period = int64(tr.Period())
	s.loop = tr.Loop
	s.offset = int64(tr.Offset)
	s.base = now
	s.k, s.used = 0, 0
	s.stranded, s.strandedBytes = 0, 0
}

// at is the trace time (ns) of opportunity k.
func (s *traceStage) at(k int64) int64 {
	if k == never {
		return math.MaxInt64
	}
	c, i := k/s.n, k%s.n
	return (c*s.period + int64(s.ms[i])) * 1e6
}

// firstAfter is the first opportunity whose millisecond is > ⌊τ⌋ ms.
func (s *traceStage) firstAfter(tau int64) int64 {
	msNow := tau / 1e6
	c := msNow / s.period
	if !s.loop && c > 0 {
		return never
	}
	rel := uint32(msNow - c*s.period)
	i := int64(sort.Search(len(s.ms), func(j int) bool { return s.ms[j] > rel }))
	if i == s.n {
		if !s.loop {
			return never
		}
		c, i = c+1, 0
	}
	return c*s.n + i
}

// engineTime converts a trace time to the engine clock.
func (s *traceStage) engineTime(tau int64) int64 {
	if tau == math.MaxInt64 {
		return tau
	}
	return tau - s.offset + s.base
}

// traceTime converts an engine time to the trace's.
func (s *traceStage) traceTime(t int64) int64 { return max(0, t-s.base+s.offset) }

// book takes cost bytes from cursor (k, used) for a packet arriving at
// trace time tau; it returns the cursor before its first byte and the
// opportunity of its last, and leaves the cursor after it.
func (s *traceStage) book(tau int64, cost int) (startK int64, startUsed int, endK int64) {
	if s.used >= mmtrace.Bytes && s.k != never {
		s.k, s.used = s.k+1, 0
	}
	if s.k != never && s.at(s.k) <= tau {
		s.k, s.used = s.firstAfter(tau), 0
	}
	if s.k != never && !s.loop && s.k >= s.n {
		s.k = never
	}
	startK, startUsed = s.k, s.used
	for s.k != never {
		take := min(cost, mmtrace.Bytes-s.used)
		s.used += take
		cost -= take
		if cost == 0 {
			break
		}
		s.k, s.used = s.k+1, 0
		if !s.loop && s.k >= s.n {
			s.k = never
		}
	}
	return startK, startUsed, s.k
}

// expire forgets the packets gone by trace time tau (drop-tail: they
// were handed on at admission).
func (s *traceStage) expire(tau int64) {
	for s.qhead < len(s.q) && s.at(s.q[s.qhead].endK) <= tau && s.q[s.qhead].p == nil {
		s.bytes -= int64(s.q[s.qhead].cost)
		s.q[s.qhead] = tent{}
		s.qhead++
	}
	if s.qhead > 64 && s.qhead*2 > len(s.q) {
		s.q = append(s.q[:0], s.q[s.qhead:]...)
		s.qhead = 0
	}
}

// inTransit reports whether the oldest packet has begun by tau.
func (s *traceStage) inTransit(tau int64) bool {
	if s.qhead == len(s.q) {
		return false
	}
	e := s.q[s.qhead]
	return e.startK != never && s.at(s.startOf(e)) <= tau
}

// startOf is the opportunity of e's first byte.
func (s *traceStage) startOf(e tent) int64 {
	if e.startUsed >= mmtrace.Bytes {
		return e.startK + 1
	}
	return e.startK
}

func (s *traceStage) waiting(tau int64) (pkts int, bytes int64) {
	pkts, bytes = len(s.q)-s.qhead, s.bytes
	if s.inTransit(tau) {
		pkts--
		bytes -= int64(s.q[s.qhead].cost)
	}
	return pkts + s.stranded, bytes + s.strandedBytes
}

func (s *traceStage) full(pkts int, bytes int64, cost int) bool {
	return (s.maxPkts > 0 && pkts+1 > s.maxPkts) || (s.maxBytes > 0 && bytes+int64(cost) > s.maxBytes)
}

func (s *traceStage) admit(p *packet, t int64) (int64, verdict) {
	tau := s.traceTime(t)
	cost := mmtrace.Cost(p.wire)
	if s.hold {
		s.run(t)
	} else {
		s.expire(tau)
	}
	pkts, bytes := s.waiting(tau)
	if s.full(pkts, bytes, cost) {
		if !s.hold {
			return 0, dropQueue
		}
		s.dropHead(tau, cost)
		pkts, bytes = s.waiting(tau)
		if s.full(pkts, bytes, cost) { // a packet bigger than the byte limit alone
			return 0, dropQueue
		}
	}
	sk, su, ek := s.book(tau, cost)
	if ek == never {
		// The trace has ended (no loop): mm-link holds the packet for
		// ever, in transit if it got bytes, else waiting. It still
		// counts against the limits; the engine lets it go.
		if sk == never {
			s.stranded++
			s.strandedBytes += int64(cost)
			return 0, dropQueue
		}
		s.q = append(s.q, tent{arr: tau, startK: sk, startUsed: su, endK: never, cost: cost, departT: math.MaxInt64})
		s.bytes += int64(cost)
		return 0, dropQueue
	}
	e := tent{arr: tau, startK: sk, startUsed: su, endK: ek, cost: cost}
	e.departT = s.engineTime(s.at(ek))
	e.firstStart = s.engineTime(s.at(s.startOf(e)))
	s.bytes += int64(cost)
	s.peak = max(s.peak, len(s.q)-s.qhead+1)
	if s.hist != nil {
		s.hist.add(max(0, e.firstStart-t))
	}
	if s.hold {
		p.arr = t
		e.p = p
		s.q = append(s.q, e)
		return 0, queued
	}
	s.q = append(s.q, e)
	return e.departT, pass
}

// dropHead drops the oldest waiting packets until one of cost fits, and
// books the rest again from where the first dropped one started.
func (s *traceStage) dropHead(tau int64, cost int) {
	first := s.qhead
	if s.inTransit(tau) {
		first++
	}
	i := first
	pkts, bytes := s.waiting(tau)
	for i < len(s.q) && s.full(pkts, bytes, cost) {
		e := s.q[i]
		pkts--
		bytes -= int64(e.cost)
		s.bytes -= int64(e.cost)
		s.headDrops++
		s.dropped = append(s.dropped, e.p)
		i++
	}
	for s.stranded > 0 && s.full(pkts, bytes, cost) {
		s.stranded--
		s.strandedBytes -= int64(cost)
		s.headDrops++
		pkts--
	}
	if i == first {
		return
	}
	s.k, s.used = s.q[first].startK, s.q[first].startUsed
	rest := append([]tent(nil), s.q[i:]...)
	s.q = s.q[:first]
	for _, e := range rest {
		sk, su, ek := s.book(e.arr, e.cost)
		e.startK, e.startUsed, e.endK = sk, su, ek
		e.departT = s.engineTime(s.at(ek))
		e.firstStart = s.engineTime(s.at(s.startOf(e)))
		s.q = append(s.q, e)
	}
}

// run releases the held packets gone by engine time now, oldest first,
// to s.ready (drop-head only).
func (s *traceStage) run(now int64) {
	for s.qhead < len(s.q) && s.q[s.qhead].departT <= now {
		e := s.q[s.qhead]
		s.bytes -= int64(e.cost)
		if e.p != nil {
			e.p.due = e.departT
			s.ready = append(s.ready, e.p)
		}
		s.q[s.qhead] = tent{}
		s.qhead++
	}
	if s.qhead > 64 && s.qhead*2 > len(s.q) {
		s.q = append(s.q[:0], s.q[s.qhead:]...)
		s.qhead = 0
	}
}

// next is when a held packet leaves (MaxInt64: none held).
func (s *traceStage) next() int64 {
	if !s.hold || s.qhead == len(s.q) {
		return math.MaxInt64
	}
	return s.q[s.qhead].departT
}

// held is the number of packets the stage holds.
func (s *traceStage) held() int {
	if !s.hold {
		return 0
	}
	return len(s.q) - s.qhead
}

// length is the packets waiting or in transit at engine time now.
func (s *traceStage) length(now int64) int {
	if !s.hold {
		s.expire(s.traceTime(now))
	}
	n := 0
	for i := s.qhead; i < len(s.q); i++ {
		if s.q[i].departT > now {
			n++
		}
	}
	return n
}

// offered counts the opportunities the trace has offered from its start
// to engine time now (used or not).
func (s *traceStage) offered(now int64) uint64 {
	if !s.on {
		return 0
	}
	idx := func(tau int64) int64 {
		k := s.firstAfter(tau)
		if k == never {
			return s.n
		}
		return k
	}
	return uint64(max(0, idx(s.traceTime(now))-idx(s.offset)))
}
