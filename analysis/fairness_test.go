package analysis

import (
	"math"
	"math/rand"
	"testing"
)

func TestJainIndex(t *testing.T) {
	for _, c := range []struct {
		x    []float64
		want float64
	}{
		{[]float64{5, 5, 5, 5}, 1},
		{[]float64{1, 0, 0, 0}, 0.25},
		{[]float64{22.82, 24.54}, 0.998}, // pilot §9.3: CUBIC + CUBIC → 0.999
		{[]float64{4.87, 41.74}, 0.615},  // pilot §9.3: CUBIC + BBR → 0.615
		{[]float64{45.30, 2.33}, 0.551},  // pilot §9.7: deep buffer → 0.551
		{nil, 0},
		{[]float64{0, 0}, 0},
	} {
		got := JainIndex(c.x)
		if math.Abs(got-c.want) > 0.0015 {
			t.Errorf("JainIndex(%v) = %.4f, want %.3f", c.x, got, c.want)
		}
	}
}

// TestJainBounds is the property 1/n ≤ J ≤ 1 for non-negative, not all
// zero allocations.
func TestJainBounds(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 50000; i++ {
		n := 1 + rng.Intn(20)
		x := make([]float64, n)
		nz := false
		for j := range x {
			switch rng.Intn(4) {
			case 0:
				x[j] = 0
			case 1:
				x[j] = rng.Float64() * 1e-9
			default:
				x[j] = rng.ExpFloat64() * math.Pow(10, float64(rng.Intn(12)))
			}
			nz = nz || x[j] > 0
		}
		if !nz {
			continue
		}
		j := JainIndex(x)
		if j < 1/float64(n)-1e-12 || j > 1+1e-12 {
			t.Fatalf("JainIndex(%v) = %g outside [1/%d, 1]", x, j, n)
		}
	}
}
