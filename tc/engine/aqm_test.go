package engine

import (
	"container/heap"
	"math"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/inet"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/units"
)

// ipFrame builds an Ethernet + IPv4 + TCP frame of size bytes from port
// sport with the given ECN field, checksum valid, inside a packet.
func ipFrame(size int, sport uint16, ecn uint8) *packet {
	p := getPacket(vnetHdrLen + size)
	clear(p.buf)
	f := p.frame()
	be.PutUint16(f[12:], etherTypeIP4)
	ip := f[ethHdrLen:]
	ip[0], ip[1] = 0x45, ecn
	be.PutUint16(ip[2:], uint16(size-ethHdrLen))
	ip[8], ip[9] = 64, protoTCP
	copy(ip[12:], []byte{10, 0, 0, 1, 10, 0, 0, 2})
	be.PutUint16(ip[10:], inet.Checksum(ip[:20]))
	be.PutUint16(ip[20:], sport)
	be.PutUint16(ip[22:], 5001)
	p.wire = size
	return p
}

func TestMarkCE(t *testing.T) {
	for _, c := range []struct {
		ecn    uint8
		marked bool
	}{{0, false}, {1, true}, {2, true}, {3, true}} {
		p := ipFrame(100, 1, c.ecn)
		f := p.frame()
		if got := markCE(f); got != c.marked {
			t.Errorf("ECN %d: marked %v", c.ecn, got)
		}
		want := c.ecn
		if c.marked {
			want = 3
		}
		if ecnBits(f) != want {
			t.Errorf("ECN %d: field %d after marking, want %d", c.ecn, ecnBits(f), want)
		}
		if inet.Checksum(f[ethHdrLen:ethHdrLen+20]) != 0 {
			t.Errorf("ECN %d: IPv4 header checksum broken by the mark", c.ecn)
		}
	}
	// IPv6: traffic class ECT(0) → CE, nothing else touched
	f := make([]byte, ethHdrLen+40)
	be.PutUint16(f[12:], etherTypeIP6)
	f[ethHdrLen], f[ethHdrLen+1] = 0x6b, 0xa5 // TC 0xba: DSCP 46, ECN 2
	if !markCE(f) || f[ethHdrLen] != 0x6b || f[ethHdrLen+1] != 0xb5 {
		t.Errorf("IPv6 mark: % x", f[ethHdrLen:ethHdrLen+2])
	}
	if markCE([]byte{0, 1, 2}) || markCE(make([]byte, 60)) {
		t.Error("non-IP frame marked")
	}
}

func TestSojournHist(t *testing.T) {
	var h sojournHist
	for i := 1; i <= 1000; i++ {
		h.add(int64(i) * int64(time.Millisecond))
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Millisecond}, {0.95, 950 * time.Millisecond}, {0.99, 990 * time.Millisecond}} {
		if got := h.quantile(c.q); math.Abs(float64(got-c.want)) > 0.025*float64(c.want) {
			t.Errorf("p%g = %v, want %v ± 2.5 %%", c.q*100, got, c.want)
		}
	}
	if s := h.summary(); s.Max != time.Second || s.Packets != 1000 {
		t.Errorf("summary %+v", s)
	}
}

// TestCoDelControlLaw checks the RFC 8289 schedule on an unresponsive
// overload: the first drop once the sojourn has stayed above target for
// an interval, then drops interval/√count apart.
func TestCoDelControlLaw(t *testing.T) {
	s := &aqmStage{rng: newRand(1, 1), hist: &sojournHist{}}
	s.reconfigure(tc.Dir{Rate: 10 * units.Mbit, AQM: &tc.AQM{Discipline: tc.CoDel}}, 1500)
	ser := int64(1514 * 8 * 100) // ns at 10 Mbit/s
	var dropTimes []int64
	seen := 0
	for now := int64(0); now < int64(2*time.Second); now += ser * 10 / 12 { // 1.2 × the link rate
		s.run(now, func(*packet, int64) {})
		if n := int(s.aqmDrops); n > seen {
			for ; seen < n; seen++ {
				dropTimes = append(dropTimes, now)
			}
		}
		s.enqueue(ipFrame(1514, 1, 0), now)
	}
	if len(dropTimes) < 10 {
		t.Fatalf("only %d drops", len(dropTimes))
	}
	// the sojourn reaches 5 ms after ~30 ms of 20 % overload; the first
	// drop comes one interval (100 ms) later
	if first := time.Duration(dropTimes[0]); first < 120*time.Millisecond || first > 140*time.Millisecond {
		t.Errorf("first drop at %v, want ≈ 130 ms", first)
	}
	// drop k+1 comes interval/√k after drop k (count is k in between)
	for k := 1; k < 8; k++ {
		gap := time.Duration(dropTimes[k] - dropTimes[k-1])
		want := time.Duration(float64(100*time.Millisecond) / math.Sqrt(float64(k)))
		if math.Abs(float64(gap-want)) > float64(2*time.Duration(ser)) {
			t.Errorf("drop %d: %v after the previous, want interval/√%d = %v", k+1, gap, k, want)
		}
	}
}

// TestREDStepMarking: weight 1, min = max = K: DCTCP's instantaneous step.
func TestREDStepMarking(t *testing.T) {
	s := &aqmStage{rng: newRand(1, 1), hist: &sojournHist{}}
	k := units.Bytes(20 * 1514)
	s.reconfigure(tc.Dir{Rate: 10 * units.Mbit, QueuePackets: 1000,
		AQM: &tc.AQM{Discipline: tc.RED, ECN: true, Min: k, Max: k, Probability: 100, Weight: 1}}, 1500)
	for i := 0; i < 40; i++ { // a burst at t=0: arrival i finds i queued; ≥ K marks
		p := ipFrame(1514, 1, 2)
		s.enqueue(p, 0)
		if got, want := ecnBits(p.frame()) == 3, i >= 20; got != want {
			t.Errorf("arrival %d (%d queued before): marked %v, want %v", i, i, got, want)
		}
	}
	if s.marks != 20 || s.aqmDrops != 0 || s.limitDrops != 0 {
		t.Errorf("marks %d drops %d/%d", s.marks, s.aqmDrops, s.limitDrops)
	}
	// not ECN-capable: dropped instead
	s.enqueue(ipFrame(1514, 1, 0), 0)
	if s.aqmDrops != 1 {
		t.Errorf("a Not-ECT arrival above K was not dropped")
	}
}

// TestPIEUpdate checks one probability update against RFC 8033 §5.2 by
// hand: at prob 0 the gains are scaled by 1/2 and five times by 1/4.
func TestPIEUpdate(t *testing.T) {
	q := &pieQueue{rng: newRand(1, 1)}
	d := tc.Dir{Rate: 10 * units.Mbit, AQM: &tc.AQM{Discipline: tc.PIE}}
	q.configure(d.Discipline(1500), 1000, 0, 1500, d.Rate)
	q.qdelay, q.qdelayOld = int64(40*time.Millisecond), int64(30*time.Millisecond)
	q.calculateProbability()
	scale := 0.5 / 1024
	want := 0.125*scale*0.025 + 1.25*scale*0.010
	if math.Abs(q.prob-want) > 1e-12 {
		t.Errorf("prob %g, want %g", q.prob, want)
	}
	// at 20 % the gains are whole and a step is capped at 2 %
	q.prob, q.qdelay, q.qdelayOld = 0.2, int64(100*time.Millisecond), 0
	q.calculateProbability()
	if math.Abs(q.prob-0.22) > 1e-12 {
		t.Errorf("prob %g after a capped step, want 0.22", q.prob)
	}
	// above 250 ms: +2 % more
	q.prob, q.qdelay, q.qdelayOld = 0.5, int64(300*time.Millisecond), int64(300*time.Millisecond)
	q.calculateProbability()
	if math.Abs(q.prob-(0.5+0.02+0.02)) > 1e-12 {
		t.Errorf("prob %g above 250 ms, want 0.54", q.prob)
	}
}

// ---- a closed-loop model: AIMD senders through a discipline ----

// tailDrop is a drop-tail FIFO as a discipline, for the model.
type tailDrop struct {
	q     pktRing
	limit int
}

func (d *tailDrop) configure(tc.AQM, int, int64, int, units.BitRate) {}
func (d *tailDrop) len() int                                         { return d.q.len() }
func (d *tailDrop) dequeue(*aqmStage, int64) *packet                 { return d.q.pop() }
func (d *tailDrop) flush(fn func(*packet))                           { d.q.flush(fn) }
func (d *tailDrop) enqueue(s *aqmStage, p *packet, _ int64) {
	if d.q.len() >= d.limit {
		s.drop(p, dropAtLimit)
		return
	}
	d.q.push(p)
}

// simFlow is a window-based sender: slow start, then +1 packet per
// window; on a loss or a CE mark it multiplies its window by 0.7 (CUBIC's
// β), at most once per round trip. Packets arrive at the queue when sent,
// ACKs come back a base RTT after the packet left the link.
type simFlow struct {
	cwnd, ssthresh float64
	inflight       int
	lastCut        int64
	ecn            bool
	sparse         time.Duration // >0: one small packet per period instead
	port           uint16
	sent, acked    int
}

type simEvent struct {
	t    int64
	flow int
	kind uint8 // 0 ack, 1 loss signal, 2 sparse send
	ce   bool
}

type simHeap []simEvent

func (h simHeap) Len() int           { return len(h) }
func (h simHeap) Less(i, j int) bool { return h[i].t < h[j].t }
func (h simHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *simHeap) Push(x any)        { *h = append(*h, x.(simEvent)) }
func (h *simHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

type simResult struct {
	util     float64 // delivered / capacity over the measured span
	perFlow  map[int]*sojournHist
	marks    uint64
	aqmDrops uint64
	limit    uint64
}

// simulate runs flows through a bottleneck of rate with dir's queue for
// dur, measuring after warm.
func simulate(t *testing.T, dir tc.Dir, flows []*simFlow, rtt, warm, dur time.Duration) simResult {
	t.Helper()
	s := &aqmStage{rng: newRand(7, 1), hist: &sojournHist{}}
	s.reconfigure(dir, 1500)
	if dir.AQM.IsDropTail() { // the engine's drop-tail is queueStage; here a FIFO of the same limit
		pk, _ := dir.QueueLimits(1500)
		s.q = &tailDrop{limit: pk}
	}
	owner := map[*packet]int{}
	var h simHeap
	res := simResult{perFlow: map[int]*sojournHist{}}
	var delivered int64
	const size = 1514
	send := func(i int, now int64) {
		f := flows[i]
		n := size
		if f.sparse > 0 {
			n = 100
		}
		ecn := uint8(0)
		if f.ecn {
			ecn = 2
		}
		p := ipFrame(n, f.port, ecn)
		owner[p] = i
		f.inflight++
		f.sent++
		s.enqueue(p, now)
	}
	fill := func(i int, now int64) {
		f := flows[i]
		for f.sparse == 0 && float64(f.inflight) < f.cwnd {
			send(i, now)
		}
	}
	react := func(f *simFlow, now int64) {
		if now-f.lastCut < int64(rtt) {
			return
		}
		f.lastCut = now
		f.ssthresh = max(2, f.cwnd*0.7)
		f.cwnd = f.ssthresh
	}
	handleDrops := func(now int64) {
		for _, p := range s.dropped {
			i := owner[p]
			delete(owner, p)
			heap.Push(&h, simEvent{t: now + int64(rtt), flow: i, kind: 1})
			p.release()
		}
		s.dropped = s.dropped[:0]
	}
	for i, f := range flows {
		f.port = uint16(1000 + i)
		f.cwnd, f.ssthresh = 10, math.Inf(1)
		if f.sparse > 0 {
			heap.Push(&h, simEvent{t: int64(f.sparse), flow: i, kind: 2})
		} else {
			fill(i, 0)
		}
	}
	handleDrops(0)
	end := int64(dur)
	for {
		next := s.next()
		if len(h) > 0 && h[0].t < next {
			next = h[0].t
		}
		if next > end {
			break
		}
		if s.next() == next {
			s.run(next, func(p *packet, done int64) {
				i := owner[p]
				delete(owner, p)
				if next >= int64(warm) {
					delivered += int64(p.wire)
					hs := res.perFlow[i]
					if hs == nil {
						hs = &sojournHist{}
						res.perFlow[i] = hs
					}
					hs.add(next - p.arr)
				}
				heap.Push(&h, simEvent{t: done + int64(rtt), flow: i, kind: 0, ce: ecnBits(p.frame()) == 3})
				p.release()
			})
			handleDrops(next)
			continue
		}
		e := heap.Pop(&h).(simEvent)
		f := flows[e.flow]
		switch e.kind {
		case 2:
			send(e.flow, e.t)
			heap.Push(&h, simEvent{t: e.t + int64(f.sparse), flow: e.flow, kind: 2})
		case 1:
			f.inflight--
			react(f, e.t)
		case 0:
			f.inflight--
			f.acked++
			switch {
			case e.ce:
				react(f, e.t)
			case f.cwnd < f.ssthresh:
				f.cwnd++
			default:
				f.cwnd += 1 / f.cwnd
			}
		}
		fill(e.flow, e.t)
		handleDrops(e.t)
	}
	span := (dur - warm).Seconds()
	res.util = float64(delivered) * 8 / span / float64(dir.Rate)
	res.marks, res.aqmDrops, res.limit = s.marks, s.aqmDrops, s.limitDrops
	return res
}

// TestDisciplinesClosedLoop runs AIMD flows through each discipline at
// 10 Mbit/s with a 20 ms base RTT and a 1000-packet limit (virtual time):
// drop-tail fills its buffer (seconds of delay), the AQMs hold their
// targets at full utilisation, FQ-CoDel serves a sparse flow at once,
// RED with ECN marks instead of dropping.
func TestDisciplinesClosedLoop(t *testing.T) {
	rate := 10 * units.Mbit
	ser := time.Duration(1514 * 8 * 1e9 / float64(rate))
	rtt, warm, dur := 20*time.Millisecond, 10*time.Second, 60*time.Second
	bulk := func(ecn bool) *simFlow { return &simFlow{ecn: ecn} }
	for _, c := range []struct {
		name       string
		aqm        *tc.AQM
		flows      []*simFlow
		p50lo      time.Duration
		p50hi      time.Duration
		utilMin    float64
		wantMarks  bool
		noAQMDrops bool
	}{
		{"droptail", nil, []*simFlow{bulk(false)}, 500 * time.Millisecond, 1300 * time.Millisecond, 0.99, false, true},
		{"codel", &tc.AQM{Discipline: tc.CoDel}, []*simFlow{bulk(false)}, 0, 15 * time.Millisecond, 0.95, false, false},
		{"codel ecn", &tc.AQM{Discipline: tc.CoDel, ECN: true}, []*simFlow{bulk(true)}, 0, 15 * time.Millisecond, 0.95, true, true},
		{"pie", &tc.AQM{Discipline: tc.PIE}, []*simFlow{bulk(false)}, 5 * time.Millisecond, 30 * time.Millisecond, 0.95, false, false},
		{"fq_codel", &tc.AQM{Discipline: tc.FQCoDel, ECN: true}, []*simFlow{bulk(false), bulk(false), {sparse: 100 * time.Millisecond}}, 0, 15 * time.Millisecond, 0.95, false, false},
		{"red ecn", &tc.AQM{Discipline: tc.RED, ECN: true}, []*simFlow{bulk(true)}, 0, 400 * time.Millisecond, 0.95, true, true},
		{"drophead", &tc.AQM{Discipline: tc.DropHead}, []*simFlow{bulk(false)}, 500 * time.Millisecond, 1300 * time.Millisecond, 0.99, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := tc.Dir{Rate: rate, QueuePackets: 1000, AQM: c.aqm}
			r := simulate(t, dir, c.flows, rtt, warm, dur)
			bulkHist := &sojournHist{}
			for i, f := range c.flows {
				if f.sparse == 0 && r.perFlow[i] != nil {
					for b, n := range r.perFlow[i].bucket {
						bulkHist.bucket[b] += n
					}
					bulkHist.n += r.perFlow[i].n
					bulkHist.max = max(bulkHist.max, r.perFlow[i].max)
				}
			}
			sj := bulkHist.summary()
			t.Logf("%s: utilisation %.3f, bulk sojourn p50 %v p95 %v p99 %v; marks %d, aqm drops %d, limit drops %d",
				c.name, r.util, sj.P50, sj.P95, sj.P99, r.marks, r.aqmDrops, r.limit)
			if sj.P50 < c.p50lo || sj.P50 > c.p50hi {
				t.Errorf("bulk sojourn p50 %v outside [%v, %v]", sj.P50, c.p50lo, c.p50hi)
			}
			if r.util < c.utilMin || r.util > 1.001 {
				t.Errorf("utilisation %.3f outside [%.2f, 1]", r.util, c.utilMin)
			}
			if c.wantMarks && r.marks == 0 {
				t.Error("no CE marks")
			}
			if c.noAQMDrops && r.aqmDrops != 0 {
				t.Errorf("%d AQM drops, want none", r.aqmDrops)
			}
			for i, f := range c.flows {
				if f.sparse > 0 {
					s := r.perFlow[i].summary()
					t.Logf("sparse flow: %d packets, sojourn p50 %v p99 %v max %v", s.Packets, s.P50, s.P99, s.Max)
					if s.P99 > ser+time.Microsecond {
						t.Errorf("sparse flow waited %v at p99, want ≤ one frame time %v", s.P99, ser)
					}
				}
			}
		})
	}
}
