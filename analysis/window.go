package analysis

import "math"

// DefaultWarmupS is the start-up period (slow start) a steady-state window
// leaves out, in seconds.
const DefaultWarmupS = 2.0

// Window is the time interval [FromS, ToS], seconds since Result.Start.
type Window struct {
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
}

// Len is the window length in seconds (0 when empty).
func (w Window) Len() float64 { return math.Max(0, w.ToS-w.FromS) }

// Empty reports whether the window has no length.
func (w Window) Empty() bool { return w.ToS <= w.FromS }

// Intersect is the overlap of two windows (possibly empty).
func (w Window) Intersect(o Window) Window {
	return Window{math.Max(w.FromS, o.FromS), math.Min(w.ToS, o.ToS)}
}

// Span is the flow's active period: StartS to EndS, or to the last sample
// when EndS is not set.
func (f *Flow) Span() Window {
	end := f.EndS
	if n := len(f.Samples); n > 0 && end <= f.StartS {
		end = f.Samples[n-1].TS
	}
	return Window{f.StartS, end}
}

// WholeRun is the flow's whole active period.
func WholeRun(f *Flow) Window { return f.Span() }

// SteadyState is the flow's active period without its first warmupS
// seconds.
func SteadyState(f *Flow, warmupS float64) Window {
	s := f.Span()
	return Window{s.FromS + warmupS, s.ToS}
}

// CommonSteadyState is the window in which every flow is active and past
// its warm-up: from the latest start + warmupS to the earliest end. It is
// the window Jain's index and aggregates compare flows over; it is empty
// when the flows do not overlap long enough.
func CommonSteadyState(flows []Flow, warmupS float64) Window {
	if len(flows) == 0 {
		return Window{}
	}
	w := Window{math.Inf(-1), math.Inf(1)}
	for i := range flows {
		w = w.Intersect(SteadyState(&flows[i], warmupS))
	}
	return w
}

// sampleStart is the start of sample i's interval.
func (f *Flow) sampleStart(i int) float64 {
	if i == 0 {
		return f.StartS
	}
	return f.Samples[i-1].TS
}

// overlapFraction is the fraction of sample i's interval inside w.
func (f *Flow) overlapFraction(i int, w Window) float64 {
	a, b := f.sampleStart(i), f.Samples[i].TS
	if b <= a {
		return 0
	}
	ov := math.Min(b, w.ToS) - math.Max(a, w.FromS)
	if ov <= 0 {
		return 0
	}
	return ov / (b - a)
}

// samplesIn returns the samples whose interval end lies in w (for gauges
// such as cwnd and srtt, which describe the instant they were read).
func (f *Flow) samplesIn(w Window) []Sample {
	var out []Sample
	for _, s := range f.Samples {
		if s.TS >= w.FromS && s.TS <= w.ToS {
			out = append(out, s)
		}
	}
	return out
}
