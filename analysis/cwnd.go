package analysis

// CwndStats describes a congestion window over a window of samples. The
// mean is over samples (equally spaced in time, so it is a time average).
// ns-3 traces cwnd in bytes and some papers quote bits: use the Bytes and
// Bits fields for those comparisons, never Segs.
type CwndStats struct {
	N         int     `json:"n"`
	MeanSegs  float64 `json:"mean_segs"`
	MaxSegs   float64 `json:"max_segs"`
	MeanBytes float64 `json:"mean_bytes"`
	MaxBytes  float64 `json:"max_bytes"`
	MeanBits  float64 `json:"mean_bits"`
	MaxBits   float64 `json:"max_bits"`
}

// Cwnd summarises the flow's congestion window from samples read inside w.
// Bytes use cwnd_bytes when present, else cwnd_segs × mss.
func Cwnd(f *Flow, w Window) CwndStats {
	var infos []TCPInfo
	for _, s := range f.samplesIn(w) {
		if s.TCP != nil {
			infos = append(infos, *s.TCP)
		}
	}
	return cwndOf(infos)
}

// SubflowCwnd summarises each MPTCP subflow's cwnd inside w, keyed by
// subflow ID.
func SubflowCwnd(f *Flow, w Window) map[string]CwndStats {
	by := map[string][]TCPInfo{}
	for _, s := range f.samplesIn(w) {
		for _, sf := range s.Subflows {
			by[sf.ID] = append(by[sf.ID], sf.TCP)
		}
	}
	out := map[string]CwndStats{}
	for id, infos := range by {
		out[id] = cwndOf(infos)
	}
	return out
}

func cwndOf(infos []TCPInfo) CwndStats {
	var st CwndStats
	var sumS, sumB float64
	for _, t := range infos {
		b := float64(t.CwndBytes)
		if b == 0 {
			b = float64(t.CwndSegs) * float64(t.MSS)
		}
		s := float64(t.CwndSegs)
		sumS += s
		sumB += b
		if s > st.MaxSegs {
			st.MaxSegs = s
		}
		if b > st.MaxBytes {
			st.MaxBytes = b
		}
		st.N++
	}
	if st.N > 0 {
		st.MeanSegs = sumS / float64(st.N)
		st.MeanBytes = sumB / float64(st.N)
	}
	st.MeanBits, st.MaxBits = st.MeanBytes*8, st.MaxBytes*8
	return st
}
