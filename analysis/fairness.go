package analysis

// JainIndex is Jain's fairness index J = (Σx)² / (n·Σx²) of non-negative
// allocations x (e.g. per-flow goodputs). J lies in [1/n, 1]: 1 when all
// are equal, 1/n when one flow takes everything. It is 0 (undefined) for an
// empty input or when every x is 0.
func JainIndex(x []float64) float64 {
	var s, ss float64
	for _, v := range x {
		s += v
		ss += v * v
	}
	if len(x) == 0 || ss == 0 {
		return 0
	}
	return s * s / (float64(len(x)) * ss)
}

// JainFlows is Jain's index of the flows' goodputs over w (normally
// CommonSteadyState), with the goodputs it used, in bits/s.
func JainFlows(flows []Flow, w Window) (float64, []float64) {
	x := make([]float64, len(flows))
	for i := range flows {
		if !w.Empty() {
			x[i] = flows[i].BytesIn(w) * 8 / w.Len()
		}
	}
	return JainIndex(x), x
}
