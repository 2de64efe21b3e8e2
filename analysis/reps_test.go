package analysis

import (
	"math"
	"math/rand"
	"testing"
)

func TestTQuantile(t *testing.T) {
	// Standard t-table values.
	for df, want := range map[float64]float64{1: 12.706, 2: 4.303, 4: 2.776, 9: 2.262, 29: 2.045, 1e6: 1.960} {
		if got := TQuantile(0.975, df); math.Abs(got-want) > 0.0005 {
			t.Errorf("t(0.975, %g) = %.4f, want %.3f", df, got, want)
		}
	}
}

func TestRepetitions(t *testing.T) {
	// Goodputs of the S1 pilot, SACK on at 1 % loss (§9.2).
	x := []float64{42.02, 50.73, 50.68}
	r := Repetitions(x, 0.95)
	// mean 47.81, s = 5.01435 (Python statistics.stdev), t(0.975,2) = 4.3027 → h = 12.456.
	if r.N != 3 || !near(r.Mean, 47.81, 1e-9) || !near(r.Stddev, 5.014349, 1e-5) || !near(r.HalfWidth, 12.4563, 1e-3) ||
		!near(r.CILow, r.Mean-r.HalfWidth, 1e-12) || r.Median != 50.68 {
		t.Fatalf("%+v", r)
	}
	if r := Repetitions([]float64{5}, 0.95); r.HalfWidth != 0 || r.Mean != 5 {
		t.Fatalf("n = 1: %+v", r)
	}
}

// TestCICoverage checks by simulation that the 95 % interval covers the
// true mean about 95 % of the time.
func TestCICoverage(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	hit := 0
	const trials = 4000
	for i := 0; i < trials; i++ {
		x := make([]float64, 5)
		for j := range x {
			x[j] = 10 + 2*rng.NormFloat64()
		}
		r := Repetitions(x, 0.95)
		if r.CILow <= 10 && 10 <= r.CIHigh {
			hit++
		}
	}
	if cov := float64(hit) / trials; cov < 0.935 || cov > 0.965 {
		t.Fatalf("coverage %.3f", cov)
	}
}

func TestRatio(t *testing.T) {
	a := []float64{25.73, 25.69} // §9.6 SACK on, 1 % loss
	b := []float64{22.70, 24.09} // SACK off
	r := Ratio(a, b, 0.95)
	if !near(r.Ratio, 25.71/23.395, 1e-12) || r.CILow >= r.Ratio || r.CIHigh <= r.Ratio || r.DF <= 0 {
		t.Fatalf("%+v", r)
	}
	// Log-scale interval: symmetric in log.
	if !near(math.Log(r.Ratio)-math.Log(r.CILow), math.Log(r.CIHigh)-math.Log(r.Ratio), 1e-12) {
		t.Fatalf("not symmetric on the log scale: %+v", r)
	}
	if r := Ratio([]float64{1}, b, 0.95); r.CIHigh != 0 {
		t.Fatalf("n = 1 must not give an interval: %+v", r)
	}
	if r := Ratio([]float64{2, 2}, []float64{1, 1}, 0.95); r.Ratio != 2 || r.CILow != 2 || r.CIHigh != 2 {
		t.Fatalf("no spread: %+v", r)
	}
	// Coverage of the ratio interval by simulation.
	rng := rand.New(rand.NewSource(5))
	hit := 0
	const trials = 3000
	for i := 0; i < trials; i++ {
		x, y := make([]float64, 6), make([]float64, 6)
		for j := range x {
			x[j] = 20 + rng.NormFloat64()
			y[j] = 10 + 0.5*rng.NormFloat64()
		}
		if r := Ratio(x, y, 0.95); r.CILow <= 2 && 2 <= r.CIHigh {
			hit++
		}
	}
	if cov := float64(hit) / trials; cov < 0.93 || cov > 0.97 {
		t.Fatalf("ratio coverage %.3f", cov)
	}
}
