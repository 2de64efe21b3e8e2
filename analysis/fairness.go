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

// FairnessClass is the flows Jain's index of a run compares: its TCP and
// MPTCP flows when it has any (the bulk transfers that share the path;
// a paced UDP probe or a constant-rate UDP flow beside them is not
// competing for the same share), else its UDP flows. Mixing the classes
// would judge a 30 kbit/s probe unfair to a 12 Mbit/s transfer.
func FairnessClass(flows []Flow) []Flow {
	var tcp, udp []Flow
	for _, f := range flows {
		if f.Proto == "udp" {
			udp = append(udp, f)
		} else {
			tcp = append(tcp, f)
		}
	}
	if len(tcp) > 0 {
		return tcp
	}
	return udp
}
