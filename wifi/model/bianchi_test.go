package model

import (
	"math"
	"testing"
	"time"
)

// bianchiScenario is Bianchi's setting at 802.11a 54 Mbit/s: DIFS 34 µs,
// CW 15–1023, 1538-byte MPDUs carrying 1472-byte UDP payloads, basic
// access, unlimited retries.
func bianchiScenario(n int) Scenario {
	s := docScenario("udp", 0, true)
	s.Stations = n
	s.MAC.RetryLimit = 0
	s.MAC.Bianchi = true
	s.Duration = 20 * time.Second
	s.Seed = uint64(n)
	return s
}

// TestBianchiSolution: our solution of Bianchi's fixed point against the
// design reference's values for n = 1 … 20 (research/wifi-medium.md §5).
func TestBianchiSolution(t *testing.T) {
	want := map[int][2]float64{1: {29.6, 0}, 2: {30.6, .105}, 3: {30.2, .178}, 5: {29.2, .272}, 10: {27.4, .384}, 20: {25.5, .481}}
	for n, w := range want {
		b, err := SolveBianchi(bianchiScenario(n))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(b.GoodputMbps-w[0]) > 0.06 || math.Abs(b.P-w[1]) > 0.0015 {
			t.Errorf("n=%d: S %.2f Mbit/s p %.3f, want %.1f, %.3f", n, b.GoodputMbps, b.P, w[0], w[1])
		}
	}
}

// TestSimulateVsBianchi: the discrete-event DCF, run with Bianchi's
// assumptions, within ±3 % of his throughput and ±0.02 of his collision
// probability for n = 1, 2, 3, 5, 10, 20 saturated stations (issue #14,
// validation 1).
func TestSimulateVsBianchi(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 10, 20} {
		s := bianchiScenario(n)
		b, _ := SolveBianchi(s)
		r, err := Simulate(s)
		if err != nil {
			t.Fatal(err)
		}
		ratio := r.GoodputMbps / b.GoodputMbps
		t.Logf("n=%2d  sim %.2f Mbit/s p %.3f   Bianchi %.2f Mbit/s p %.3f   ratio %.3f", n, r.GoodputMbps, r.CollisionP, b.GoodputMbps, b.P, ratio)
		if math.Abs(ratio-1) > 0.03 {
			t.Errorf("n=%d: throughput ratio %.3f outside ±3 %%", n, ratio)
		}
		if math.Abs(r.CollisionP-b.P) > 0.02 {
			t.Errorf("n=%d: collision p %.3f vs Bianchi %.3f (±0.02)", n, r.CollisionP, b.P)
		}
	}
}

// TestSimulateFairness: saturated stations share the channel evenly, and
// their sum stays below one station's throughput for n ≥ 3.
func TestSimulateFairness(t *testing.T) {
	s := bianchiScenario(5)
	s.MAC.Bianchi = false
	s.MAC.RetryLimit = 7
	r, err := Simulate(s)
	if err != nil {
		t.Fatal(err)
	}
	var sum, sq float64
	for _, nd := range r.Nodes[:5] {
		sum += nd.GoodputMbps
		sq += nd.GoodputMbps * nd.GoodputMbps
	}
	if jain := sum * sum / (5 * sq); jain < 0.98 {
		t.Errorf("Jain's index %.3f < 0.98", jain)
	}
	one, _ := Simulate(bianchiScenario(1))
	if sum >= one.GoodputMbps {
		t.Errorf("5 stations together %.2f ≥ one station %.2f", sum, one.GoodputMbps)
	}
}
