package analysis

import (
	"math"
	"sort"
)

// Summary describes a sample of values. Percentiles interpolate linearly
// between order statistics (Hyndman–Fan type 7, numpy's default); Stddev is
// the sample standard deviation (n − 1 denominator, 0 for n < 2).
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	Stddev float64 `json:"stddev"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Summarise computes a Summary; the input is not modified. NaNs are
// ignored. An empty input gives the zero Summary.
func Summarise(x []float64) Summary {
	v := sortedFinite(x)
	if len(v) == 0 {
		return Summary{}
	}
	return Summary{
		N:      len(v),
		Mean:   Mean(v),
		Median: percentileSorted(v, 50),
		P95:    percentileSorted(v, 95),
		P99:    percentileSorted(v, 99),
		Stddev: Stddev(v),
		Min:    v[0],
		Max:    v[len(v)-1],
	}
}

// Mean is the arithmetic mean (0 for an empty input).
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// Stddev is the sample standard deviation with the n − 1 denominator (0
// when n < 2), computed in two passes for accuracy.
func Stddev(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	m := Mean(x)
	var ss float64
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return math.Sqrt(ss / float64(len(x)-1))
}

// Percentile is the p-th percentile (0 ≤ p ≤ 100) by linear interpolation
// between order statistics (type 7). NaNs are ignored; empty input gives 0.
func Percentile(x []float64, p float64) float64 {
	return percentileSorted(sortedFinite(x), p)
}

// Median is the 50th percentile.
func Median(x []float64) float64 { return Percentile(x, 50) }

func percentileSorted(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	h := (float64(len(v)) - 1) * p / 100
	lo := math.Floor(h)
	i := int(lo)
	if i >= len(v)-1 {
		return v[len(v)-1]
	}
	if i < 0 {
		return v[0]
	}
	return v[i] + (h-lo)*(v[i+1]-v[i])
}

func sortedFinite(x []float64) []float64 {
	v := make([]float64, 0, len(x))
	for _, f := range x {
		if !math.IsNaN(f) {
			v = append(v, f)
		}
	}
	sort.Float64s(v)
	return v
}

// CDFPoint is one step of an empirical CDF: the fraction P of values ≤ X.
type CDFPoint struct {
	X float64 `json:"x"`
	P float64 `json:"p"`
}

// CDF is the empirical cumulative distribution of x: one point per distinct
// value, P = (number of values ≤ X)/n. NaNs are ignored.
func CDF(x []float64) []CDFPoint {
	v := sortedFinite(x)
	var out []CDFPoint
	for i := 0; i < len(v); i++ {
		if i+1 < len(v) && v[i+1] == v[i] {
			continue
		}
		out = append(out, CDFPoint{v[i], float64(i+1) / float64(len(v))})
	}
	return out
}
