package engine

import (
	"math"
	"testing"
	"time"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/units"
)

func wirePacket(n int) *packet { return &packet{buf: make([]byte, vnetHdrLen+n), wire: n, segs: 1} }

// TestQueueSerialises checks departure times and drop-tail on a virtual
// clock: 1514-byte frames at 7 Mbit/s take 1.730285714... ms each.
func TestQueueSerialises(t *testing.T) {
	q := &queueStage{}
	q.reconfigure(tc.Dir{Rate: 7_000_000, QueuePackets: 5}, 1500)
	var deps []int64
	for i := 0; i < 7; i++ { // a burst at t=0: five fit (one in service + four waiting)
		dep, v := q.admit(wirePacket(1514), 0)
		if i < 5 && v != pass || i >= 5 && v != dropQueue {
			t.Fatalf("frame %d: verdict %v", i, v)
		}
		if v == pass {
			deps = append(deps, dep)
		}
	}
	for i, d := range deps {
		exact := float64(i+1) * 1514 * 8 / 7e6 * 1e9
		if math.Abs(float64(d)-exact) > 1 {
			t.Errorf("departure %d at %d ns, want %.1f", i, d, exact)
		}
	}
	// after the first leaves, one more fits and goes after the fifth
	dep, v := q.admit(wirePacket(1514), deps[0])
	if v != pass || math.Abs(float64(dep)-6*1514*8/7e6*1e9) > 1 {
		t.Errorf("refill: %v at %d", v, dep)
	}
	if n := q.length(deps[0]); n != 5 {
		t.Errorf("queue length %d, want 5", n)
	}
	// an idle link starts serialising at the arrival time
	dep, _ = q.admit(wirePacket(100), time.Second.Nanoseconds())
	if want := int64(time.Second) + int64(math.Ceil(100*8/7e6*1e9)); dep != want {
		t.Errorf("after idle: departure %d, want %d", dep, want)
	}
	// no drift: 1e6 back-to-back 1000-byte frames at 3 Mbit/s end at exactly 8000/3 s
	q = &queueStage{}
	q.reconfigure(tc.Dir{Rate: 3_000_000, QueueBytes: 1 << 40}, 1500)
	for i := 0; i < 1_000_000; i++ {
		dep, _ = q.admit(wirePacket(1000), 0)
	}
	if want := int64(math.Ceil(8000.0 / 3 * 1e9)); dep != want {
		t.Errorf("1e6 frames end at %d ns, want %d", dep, want)
	}
}

func TestQueueBytes(t *testing.T) {
	q := &queueStage{}
	q.reconfigure(tc.Dir{Rate: 1e6, QueueBytes: 3000}, 1500)
	for i, want := range []verdict{pass, pass, dropQueue, pass} { // 1500 + 1000 fit, +1000 does not, +500 does
		size := []int{1500, 1000, 1000, 500}[i]
		if _, v := q.admit(wirePacket(size), 0); v != want {
			t.Errorf("frame %d (%d B): %v, want %v", i, size, v, want)
		}
	}
}

func TestDelayOrder(t *testing.T) {
	for _, reorder := range []bool{false, true} {
		s := &delayStage{rng: newRand(1, 1)}
		s.reconfigure(tc.Dir{Delay: 10 * time.Millisecond, Jitter: 5 * time.Millisecond, JitterDist: tc.DistNormal, Reorder: reorder}, 1500)
		var last int64
		inversions := 0
		for i := 0; i < 10000; i++ {
			t0 := int64(i) * int64(100*time.Microsecond)
			due, _ := s.admit(nil, t0)
			if due < t0 {
				t.Fatalf("due %d before arrival %d", due, t0)
			}
			if due < last {
				inversions++
			}
			last = max(last, due)
		}
		if !reorder && inversions > 0 || reorder && inversions < 1000 {
			t.Errorf("reorder=%v: %d inversions", reorder, inversions)
		}
	}
}

// TestJitterDistributions checks the sampled jitter's moments.
func TestJitterDistributions(t *testing.T) {
	const j = float64(time.Millisecond)
	for _, c := range []struct {
		dist     string
		std, tol float64 // in units of Jitter
		min, max float64
	}{
		{tc.DistUniform, 1 / math.Sqrt(3), 0.01, -1, 1},
		{tc.DistNormal, 1, 0.02, -4, 4},
		{tc.DistPareto, 0.82, 0.03, -1, 4}, // iproute2 table: mean -0.03 after the cap at +4
	} {
		s := &delayStage{rng: newRand(3, 1)}
		s.reconfigure(tc.Dir{Delay: time.Second, Jitter: time.Millisecond, JitterDist: c.dist, Reorder: true}, 1500)
		var sum, sq float64
		lo, hi := math.Inf(1), math.Inf(-1)
		const n = 200000
		for i := 0; i < n; i++ {
			due, _ := s.admit(nil, 0)
			x := (float64(due) - float64(time.Second)) / j
			sum += x
			sq += x * x
			lo, hi = min(lo, x), max(hi, x)
		}
		mean := sum / n
		std := math.Sqrt(sq/n - mean*mean)
		if math.Abs(mean) > 0.04 || math.Abs(std-c.std) > c.tol || lo < c.min-0.01 || hi > c.max+0.01 {
			t.Errorf("%s: mean %.3f std %.3f range [%.2f, %.2f]; want mean 0, std %.3f, range [%g, %g]",
				c.dist, mean, std, lo, hi, c.std, c.min, c.max)
		}
	}
}

func TestBernoulliLoss(t *testing.T) {
	s := &lossStage{rng: newRand(5, 1)}
	s.reconfigure(tc.Dir{Loss: 3}, 1500)
	const n = 1_000_000
	lost := 0
	for i := 0; i < n; i++ {
		if _, v := s.admit(nil, 0); v == dropLoss {
			lost++
		}
	}
	sigma := math.Sqrt(n * 0.03 * 0.97)
	if math.Abs(float64(lost)-0.03*n) > 4*sigma {
		t.Errorf("lost %d of %d, want %.0f ± %.0f", lost, n, 0.03*n, sigma)
	}
}

// TestGilbertElliott checks the stationary loss rate and the mean length
// of bad periods (1/r) of the two-state model.
func TestGilbertElliott(t *testing.T) {
	ge := &units.GilbertElliott{P: 2, R: 20, BadLoss: 60, GoodLoss: 0.5}
	s := &lossStage{rng: newRand(9, 1)}
	s.reconfigure(tc.Dir{GE: ge}, 1500)
	const n = 2_000_000
	lost, badRuns, badLen := 0, 0, 0
	wasBad := false
	for i := 0; i < n; i++ {
		if _, v := s.admit(nil, 0); v == dropLoss {
			lost++
		}
		if s.bad {
			badLen++
			if !wasBad {
				badRuns++
			}
		}
		wasBad = s.bad
	}
	pBad := 0.02 / (0.02 + 0.20)
	want := pBad*0.60 + (1-pBad)*0.005
	if got := float64(lost) / n; math.Abs(got-want) > 0.03*want {
		t.Errorf("GE loss rate %.4f, want %.4f", got, want)
	}
	if got := float64(badLen) / float64(badRuns); math.Abs(got-1/0.20) > 0.2 {
		t.Errorf("mean bad period %.2f frames, want %.2f", got, 1/0.20)
	}
}

func TestPipelineDeterministic(t *testing.T) {
	run := func(seed uint64) []int64 {
		pl := newPipeline(tc.Dir{Loss: 10, Delay: time.Millisecond, Jitter: time.Millisecond, Rate: 1e7, Corrupt: 5}, 1500, newRand(seed, 1))
		var out []int64
		for i := 0; i < 1000; i++ {
			due, v := pl.run(wirePacket(1000), int64(i)*1000)
			if v != pass {
				due = -int64(v)
			}
			out = append(out, due)
		}
		return out
	}
	a, b, c := run(1), run(1), run(2)
	same := func(x, y []int64) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) || same(a, c) {
		t.Error("same seed must give the same decisions, another seed others")
	}
}

func TestLines(t *testing.T) {
	dues := []int64{5, 1, 4, 1, 3, 9, 2}
	h := newLine(true, nil)
	for i, d := range dues {
		h.push(&packet{due: d, wire: i})
	}
	var got []int64
	var order []int
	for h.len() > 0 {
		p := h.pop()
		got = append(got, p.due)
		order = append(order, p.wire)
	}
	if want := []int64{1, 1, 2, 3, 4, 5, 9}; !equalI64(got, want) || order[0] != 1 || order[1] != 3 {
		t.Errorf("heap order %v (arrivals %v)", got, order)
	}
	f := newLine(false, nil)
	for i := 0; i < 1000; i++ {
		f.push(&packet{due: int64(i)})
		if i%3 == 0 {
			f.pop()
		}
	}
	m := newLine(true, f) // migrate keeps everything, in order
	prev := int64(-1)
	n := 0
	for m.len() > 0 {
		p := m.pop()
		if p.due < prev {
			t.Fatal("migration broke the order")
		}
		prev = p.due
		n++
	}
	if n != 666 {
		t.Errorf("migrated %d packets, want 666", n)
	}
}

func equalI64(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
