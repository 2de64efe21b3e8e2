package analysis

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// RepStats describes one metric across repetitions of a scenario, with a
// two-sided Student-t confidence interval for the mean:
// mean ± t_{(1+c)/2, n−1} · s/√n.
type RepStats struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	Stddev float64 `json:"stddev"`
	// Level is the confidence level (e.g. 0.95); CILow/CIHigh the
	// interval; HalfWidth = (CIHigh − CILow)/2. With n < 2 the interval is
	// undefined and all three are 0.
	Level     float64 `json:"level"`
	CILow     float64 `json:"ci_low"`
	CIHigh    float64 `json:"ci_high"`
	HalfWidth float64 `json:"half_width"`
}

// TQuantile is the p-quantile of Student's t distribution with df degrees
// of freedom (e.g. TQuantile(0.975, 4) = 2.776).
func TQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// Repetitions summarises one metric over n runs with a confidence interval
// at level (0.95 for 95 %).
func Repetitions(x []float64, level float64) RepStats {
	s := Summarise(x)
	rs := RepStats{N: s.N, Mean: s.Mean, Median: s.Median, Stddev: s.Stddev, Level: level}
	if s.N < 2 {
		return rs
	}
	h := TQuantile((1+level)/2, float64(s.N-1)) * s.Stddev / math.Sqrt(float64(s.N))
	rs.CILow, rs.CIHigh, rs.HalfWidth = s.Mean-h, s.Mean+h, h
	return rs
}

// RatioStats is the ratio of two scenarios' means with a confidence
// interval.
type RatioStats struct {
	// Ratio is mean(a)/mean(b).
	Ratio float64 `json:"ratio"`
	Level float64 `json:"level"`
	// CILow and CIHigh bound the ratio; DF is the Welch–Satterthwaite
	// degrees of freedom used (0 when both samples have no spread, and the
	// interval collapses to the ratio). All 0 when undefined (n < 2 in
	// either scenario, or a mean ≤ 0).
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	DF     float64 `json:"df"`
}

// Ratio compares scenario a with scenario b (independent runs) by the ratio
// of their means. The interval is built on the log scale with the delta
// method — se(ln r)² = s_a²/(n_a·ā²) + s_b²/(n_b·b̄²) — and Welch's degrees
// of freedom, then exponentiated, so it is asymmetric around the ratio and
// never includes negative values. It assumes positive metrics (goodput,
// RTT, durations).
func Ratio(a, b []float64, level float64) RatioStats {
	sa, sb := Summarise(a), Summarise(b)
	rs := RatioStats{Level: level}
	if sb.Mean != 0 {
		rs.Ratio = sa.Mean / sb.Mean
	}
	if sa.N < 2 || sb.N < 2 || sa.Mean <= 0 || sb.Mean <= 0 {
		return rs
	}
	va := sa.Stddev * sa.Stddev / (float64(sa.N) * sa.Mean * sa.Mean)
	vb := sb.Stddev * sb.Stddev / (float64(sb.N) * sb.Mean * sb.Mean)
	se := math.Sqrt(va + vb)
	if se == 0 {
		rs.CILow, rs.CIHigh = rs.Ratio, rs.Ratio
		return rs
	}
	rs.DF = (va + vb) * (va + vb) / (va*va/float64(sa.N-1) + vb*vb/float64(sb.N-1))
	t := TQuantile((1+level)/2, rs.DF)
	rs.CILow = rs.Ratio * math.Exp(-t*se)
	rs.CIHigh = rs.Ratio * math.Exp(t*se)
	return rs
}
