package analysis

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Reference values from numpy (percentile method "linear") and
// statistics.stdev.
func TestSummarise(t *testing.T) {
	x := []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5, math.NaN()}
	s := Summarise(x)
	want := Summary{N: 10, Mean: 5.5, Median: 5.5, P95: 9.55, P99: 9.91, Stddev: 3.0276503540974917, Min: 1, Max: 10}
	if s.N != want.N || !near(s.Mean, want.Mean, 1e-12) || !near(s.Median, want.Median, 1e-12) || !near(s.P95, want.P95, 1e-12) ||
		!near(s.P99, want.P99, 1e-12) || !near(s.Stddev, want.Stddev, 1e-12) || s.Min != 1 || s.Max != 10 {
		t.Fatalf("got %+v\nwant %+v", s, want)
	}
	if x[0] != 10 {
		t.Fatal("input was modified")
	}
	if (Summarise(nil) != Summary{}) {
		t.Fatal("empty input")
	}
	if s := Summarise([]float64{3}); s.Median != 3 || s.P99 != 3 || s.Stddev != 0 {
		t.Fatalf("single value: %+v", s)
	}
}

func TestCDF(t *testing.T) {
	got := CDF([]float64{3, 1, 2, 2})
	want := []CDFPoint{{1, 0.25}, {2, 0.75}, {3, 1}}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
}
