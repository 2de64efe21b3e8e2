package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/units"
)

// mmRef is an independent model of mahimahi's mm-link, written from the
// semantics (design reference A1), not from the engine's code: it steps
// through delivery opportunities in time order like LinkQueue::rationalize
// — before each arrival every opportunity at a millisecond ≤ the arrival's
// is burnt: 1504 bytes taken from the packet in transit and then from the
// head of the queue, a packet leaving at the opportunity that takes its
// last byte — and only then enqueues the arrival, the limits counting the
// packets waiting (not the one in transit).
type mmRef struct {
	trace     []uint32
	loop      bool
	pktLimit  int
	byteLimit int
	dropHead  bool

	next     int   // index of the next opportunity
	base     int64 // ms added to trace[next]
	finished bool

	queue    []refPkt
	transit  *refPkt
	left     int
	departed map[int]int64 // packet id → departure ms; -1 = dropped
}

type refPkt struct {
	id   int
	size int
}

func (m *mmRef) nextTime() int64 {
	if m.finished {
		return math.MaxInt64
	}
	return m.base + int64(m.trace[m.next])
}

func (m *mmRef) rationalize(now int64) {
	for m.nextTime() <= now && (now < math.MaxInt64/4 || m.left > 0 || len(m.queue) > 0) {
		this := m.nextTime()
		m.next++
		if m.next == len(m.trace) {
			m.next = 0
			if m.loop {
				m.base += int64(m.trace[len(m.trace)-1])
			} else {
				m.finished = true
			}
		}
		budget := 1504
		for budget > 0 {
			if m.left == 0 {
				if len(m.queue) == 0 {
					break
				}
				p := m.queue[0]
				m.queue = m.queue[1:]
				m.transit, m.left = &p, p.size
			}
			n := min(budget, m.left)
			m.left -= n
			budget -= n
			if m.left == 0 {
				m.departed[m.transit.id] = this
			}
		}
	}
}

func (m *mmRef) fits(size int) bool {
	bytes := 0
	for _, p := range m.queue {
		bytes += p.size
	}
	return (m.pktLimit == 0 || len(m.queue)+1 <= m.pktLimit) && (m.byteLimit == 0 || bytes+size <= m.byteLimit)
}

func (m *mmRef) arrive(nowMs int64, p refPkt) {
	m.rationalize(nowMs)
	if m.dropHead {
		for !m.fits(p.size) && len(m.queue) > 0 {
			m.departed[m.queue[0].id] = -1
			m.queue = m.queue[1:]
		}
	}
	if !m.fits(p.size) {
		m.departed[p.id] = -1
		return
	}
	m.queue = append(m.queue, p)
}

// genTrace makes a trace of about ms milliseconds with bursts (several
// opportunities in one millisecond), gaps and outages.
func genTrace(rng *rand.Rand, ms int, startAtZero bool) []uint32 {
	var out []uint32
	t := uint32(0)
	if !startAtZero {
		t = uint32(1 + rng.IntN(20))
	}
	for int(t) < ms {
		switch r := rng.IntN(1000); {
		case r < 3: // outage
			t += uint32(100 + rng.IntN(900))
		case r < 100: // burst
			for i := rng.IntN(12) + 2; i > 0; i-- {
				out = append(out, t)
			}
			t += uint32(1 + rng.IntN(3))
		default: // about one opportunity a millisecond: 12 Mbit/s
			out = append(out, t)
			t += uint32(rng.IntN(3))
		}
	}
	out = append(out, uint32(ms))
	return out
}

type traceCase struct {
	name    string
	queue   string // infinite, droptail, drophead
	pkts    int
	bytes   int
	loop    bool
	offset  time.Duration
	pps     float64 // mean arrivals per second
	traceMs int
	zero    bool
}

// TestTraceMatchesMahimahi drives the engine's traceStage and the
// independent model with the same arrivals and requires the same
// departure millisecond and the same drops for every packet.
func TestTraceMatchesMahimahi(t *testing.T) {
	var cases []traceCase
	for _, q := range []struct {
		queue       string
		pkts, bytes int
	}{{"infinite", 0, 0}, {"droptail", 20, 0}, {"droptail", 0, 15000}, {"drophead", 20, 0}, {"drophead", 0, 15000}, {"droptail", 1, 0}} {
		for _, pps := range []float64{300, 2000, 9000} {
			cases = append(cases, traceCase{name: fmt.Sprintf("%s-p%d-b%d-%gpps", q.queue, q.pkts, q.bytes, pps),
				queue: q.queue, pkts: q.pkts, bytes: q.bytes, loop: true, pps: pps, traceMs: 1500, zero: pps == 2000})
		}
	}
	cases = append(cases,
		traceCase{name: "once", queue: "droptail", pkts: 50, loop: false, pps: 2000, traceMs: 1500},
		traceCase{name: "offset", queue: "droptail", pkts: 30, loop: true, offset: 700*time.Millisecond + 300*time.Microsecond, pps: 2000, traceMs: 1000, zero: true},
		traceCase{name: "offset-drophead", queue: "drophead", pkts: 10, loop: true, offset: 2500 * time.Millisecond, pps: 3000, traceMs: 900})
	totalPkts, totalDrops := 0, 0
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci)+1, 7))
			trace := genTrace(rng, c.traceMs, c.zero)
			d := tc.Dir{Trace: &tc.Trace{File: "gen", Loop: c.loop, Offset: c.offset, Ms: trace},
				QueuePackets: c.pkts, QueueBytes: units.Bytes(c.bytes)}
			if c.queue == "drophead" {
				d.AQM = &tc.AQM{Discipline: tc.DropHead}
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			const base = int64(5 * time.Second) // engine time at which the trace starts
			s := &traceStage{}
			s.configure(d, base)
			ref := &mmRef{trace: trace, loop: c.loop, pktLimit: c.pkts, byteLimit: c.bytes, dropHead: c.queue == "drophead", departed: map[int]int64{}}
			// the reference starts its trace at its time 0 = our trace time 0
			got := map[int]int64{}
			ids := map[*packet]int{}
			collect := func() {
				for _, p := range s.ready {
					got[ids[p]] = p.due
				}
				s.ready = s.ready[:0]
				for _, p := range s.dropped {
					got[ids[p]] = -1
				}
				s.dropped = s.dropped[:0]
			}
			now := base
			n := int(c.pps * 4) // four seconds of arrivals: several loops
			for id := 0; id < n; id++ {
				now += int64(rng.ExpFloat64() / c.pps * 1e9)
				if rng.IntN(10) == 0 {
					now += int64(rng.IntN(3)) * 1e6 // some on whole milliseconds
					now -= now % 1e6
				}
				wire := 60 + rng.IntN(1455)
				if rng.IntN(3) == 0 {
					wire = 1514
				}
				p := wirePacket(wire)
				ids[p] = id
				tau := now - base + int64(c.offset)
				ref.arrive(tau/1e6, refPkt{id: id, size: wire - 10})
				dep, v := s.admit(p, now)
				collect()
				switch v {
				case pass:
					got[id] = dep
				case dropQueue:
					got[id] = -1
				}
			}
			ref.rationalize(math.MaxInt64 / 2) // until empty
			s.run(math.MaxInt64)
			collect()
			drops, mismatches := 0, 0
			for id := 0; id < n; id++ {
				want, ok := ref.departed[id]
				if !ok {
					want = -2 // never left (a trace without loop ended)
				}
				g, gok := got[id]
				if !gok {
					g = -2
				}
				if g >= 0 {
					// engine time → the reference's trace ms
					g = g - base + int64(c.offset)
					if g%1e6 != 0 {
						t.Fatalf("packet %d leaves at %d ns of trace time: not on a millisecond", id, g)
					}
					g /= 1e6
				}
				if want == -2 && g == -1 {
					g = -2 // the engine drops what mm-link would hold forever
				}
				if g != want {
					if mismatches < 5 {
						t.Errorf("packet %d: departure %d ms, mahimahi %d ms (-1 dropped)", id, g, want)
					}
					mismatches++
				}
				if want == -1 {
					drops++
				}
			}
			if mismatches > 0 {
				t.Fatalf("%d of %d packets differ", mismatches, n)
			}
			totalPkts += n
			totalDrops += drops
			t.Logf("%d packets, %d opportunities, %d dropped: identical", n, len(trace), drops)
		})
	}
	t.Logf("%d cases, %d packets, %d drops: departures and drops identical to the mahimahi model", len(cases), totalPkts, totalDrops)
}

// TestTraceStageOrder: mahimahi's shells nest, so "mm-delay 30 mm-link"
// runs link then delay on the uplink and delay then link on the
// downlink; with opportunities at 10, 50 and 100 ms a packet sent at 5 ms
// leaves the uplink at 10 + 30 ms and the downlink at 50 ms.
func TestTraceStageOrder(t *testing.T) {
	tr := &tc.Trace{File: "t", Loop: true, Ms: []uint32{10, 50, 100}}
	ms := int64(time.Millisecond)
	for _, c := range []struct {
		order []string
		want  int64
	}{
		{[]string{tc.StageLink, tc.StageLoss, tc.StageDelay}, 40 * ms},
		{[]string{tc.StageDelay, tc.StageLoss, tc.StageLink}, 50 * ms},
		{nil, 40 * ms}, // emuctl's: loss, link, delay
	} {
		for _, head := range []bool{false, true} {
			d := tc.Dir{Trace: tr, Delay: 30 * time.Millisecond, Order: c.order, QueuePackets: 10}
			if head {
				d.AQM = &tc.AQM{Discipline: tc.DropHead}
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			pl := newPipeline(d, 1500, newRand(1, 1))
			due, v := pl.run(wirePacket(1514), 5*ms)
			if v == queued {
				var got []int64
				pl.advance(1e12, func(_ *packet, due int64) { got = append(got, due) }, func(*packet, verdict) {})
				if len(got) != 1 {
					t.Fatalf("order %v drop-head: %d packets out", c.order, len(got))
				}
				due, v = got[0], pass
			}
			if v != pass || due != c.want {
				t.Errorf("order %v (drop-head %v): leaves at %v (%v), want %v", c.order, head, time.Duration(due), v, time.Duration(c.want))
			}
		}
	}
}

// TestTraceKeepsClock: a direction reconfigured with the same trace (a
// copy, as link set and schedule steps send it) keeps the trace's clock
// and the queue's bookings; a different trace starts afresh.
func TestTraceKeepsClock(t *testing.T) {
	ms := []uint32{10, 20, 30, 40}
	s := &traceStage{}
	s.configure(tc.Dir{Trace: &tc.Trace{File: "a", Loop: true, Ms: ms}, QueuePackets: 10}, 0)
	for i := 0; i < 3; i++ {
		s.admit(wirePacket(1514), 0) // opportunities 10, 20, 30 ms
	}
	cp := append([]uint32(nil), ms...)
	s.configure(tc.Dir{Trace: &tc.Trace{File: "a", Loop: true, Ms: cp}, QueuePackets: 10, Loss: 50}, int64(5*time.Millisecond))
	if dep, _ := s.admit(wirePacket(1514), int64(time.Millisecond)); dep != int64(40*time.Millisecond) {
		t.Errorf("after re-applying the same trace the next frame leaves at %v, want 40ms", time.Duration(dep))
	}
	s.configure(tc.Dir{Trace: &tc.Trace{File: "b", Loop: true, Ms: []uint32{5, 10}}, QueuePackets: 10}, int64(100*time.Millisecond))
	if dep, _ := s.admit(wirePacket(1514), int64(100*time.Millisecond)); dep != int64(105*time.Millisecond) {
		t.Errorf("a new trace starts when applied: the first frame leaves at %v, want 105ms", time.Duration(dep))
	}
}
