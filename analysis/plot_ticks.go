package analysis

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// roundTicks marks an axis at round values: multiples of 1, 2 or 5 × 10^k,
// 4 to 8 of them over the axis (0, 5, 10, 15 s, never 2, 8, 14 s), each
// labelled with as many decimals as the step has; a minor tick halfway.
type roundTicks struct{}

// roundStep is the round step that puts at most 8 intervals on span.
func roundStep(span float64) float64 {
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(span/8)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(m*mag) <= 8 {
			return m * mag
		}
	}
	return 10 * mag
}

func (roundTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	step := roundStep(hi - lo)
	dec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var out []plot.Tick
	first := math.Ceil(lo/step-1e-9) * step
	for k := 0; ; k++ {
		v := first + float64(k)*step
		if v > hi+step*1e-9 {
			break
		}
		v = math.Round(v*math.Pow(10, float64(dec))) / math.Pow(10, float64(dec))
		if v == 0 {
			v = 0 // no "-0"
		}
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', dec, 64)})
		if h := v + step/2; h < hi {
			out = append(out, plot.Tick{Value: h})
		}
	}
	if v := first - step/2; v > lo {
		out = append(out, plot.Tick{Value: v})
	}
	return out
}
