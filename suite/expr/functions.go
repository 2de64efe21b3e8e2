package expr

import (
	"math"
	"strconv"

	"github.com/emuctl/emuctl/analysis"
)

// Function is a pure function usable in expressions. Rates are Mbit/s,
// times ms, probabilities fractions, as everywhere in expressions.
type Function struct {
	MinArgs, MaxArgs int
	Doc              string
	F                func(a []float64) float64
}

// opt returns a[i] or def when the argument was left out.
func opt(a []float64, i int, def float64) float64 {
	if i < len(a) {
		return a[i]
	}
	return def
}

func tackParams(a []float64, from int) analysis.TACKParams {
	return analysis.TACKParams{Beta: opt(a, from, 4), L: opt(a, from+1, 2), MSSBytes: opt(a, from+2, 1500)}
}

var Functions = map[string]Function{
	"abs":  {1, 1, "absolute value", func(a []float64) float64 { return math.Abs(a[0]) }},
	"if":   {3, 3, "if(condition, a, b): a when the condition holds, else b (only that one is evaluated)", nil},
	"sqrt": {1, 1, "square root", func(a []float64) float64 { return math.Sqrt(a[0]) }},
	"min": {1, 64, "smallest argument", func(a []float64) float64 {
		m := a[0]
		for _, v := range a[1:] {
			m = math.Min(m, v)
		}
		return m
	}},
	"max": {1, 64, "largest argument", func(a []float64) float64 {
		m := a[0]
		for _, v := range a[1:] {
			m = math.Max(m, v)
		}
		return m
	}},
	"round": {1, 2, "round(x[, decimals])", func(a []float64) float64 {
		p := math.Pow(10, opt(a, 1, 0))
		return math.Round(a[0]*p) / p
	}},
	"sig": {2, 2, "sig(x, n): x rounded to n significant digits (compares equal to the decimal literal)", func(a []float64) float64 {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(a[0], 'g', int(a[1]), 64), 64)
		return v
	}},
	"cap": {1, 1, "cap(rate): best TCP goodput through a link of that rate, rate × 1448/1514 (timestamps on), Mbit/s", func(a []float64) float64 {
		return a[0] * 1448 / 1514
	}},
	"cap_udp": {2, 2, "cap_udp(rate, payload): best UDP goodput, rate × p/(p+42), Mbit/s", func(a []float64) float64 {
		return a[0] * a[1] / (a[1] + 42)
	}},
	"mathis": {2, 3, "mathis(rtt_ms, p[, mss]): 1.22·MSS/(RTT·√p), Mbit/s (MSS 1448)", func(a []float64) float64 {
		return 1.22 * opt(a, 2, 1448) * 8 / (a[0] / 1000 * math.Sqrt(a[1])) / 1e6
	}},
	"binom_sigma": {2, 2, "binom_sigma(p, n): standard deviation of a measured loss rate, √(p(1−p)/n)", func(a []float64) float64 {
		if a[1] <= 0 {
			return math.NaN()
		}
		return math.Sqrt(a[0] * (1 - a[0]) / a[1])
	}},
	"qdelay": {2, 2, "qdelay(packets, rate): time to drain a queue of full frames, ms", func(a []float64) float64 {
		return a[0] * 1514 * 8 / (a[1] * 1e6) * 1000
	}},
	"bdp_pkts": {2, 2, "bdp_pkts(rate, rtt_ms): bandwidth-delay product in 1514-byte frames", func(a []float64) float64 {
		return a[0] * 1e6 * a[1] / 1000 / 8 / 1514
	}},
	"f_tack": {2, 5, "f_tack(bw, rtt_min_ms[, beta, L, mss]): TACK frequency min(bw/(L·MSS), β/RTT_min), Hz", func(a []float64) float64 {
		return analysis.FTack(a[0]*1e6, a[1]/1000, tackParams(a, 2))
	}},
	"f_tcp": {2, 3, "f_tcp(bw, L[, mss]): byte-counting ACK frequency bw/(L·MSS), Hz (MSS 1500)", func(a []float64) float64 {
		return analysis.FByteCounting(a[0]*1e6, a[1], opt(a, 2, 1500))
	}},
	"pivot": {1, 4, "pivot(rtt_min_ms[, beta, L, mss]): bandwidth where TACK turns periodic, Mbit/s", func(a []float64) float64 {
		return analysis.PivotBps(a[0]/1000, tackParams(a, 1)) / 1e6
	}},
}
