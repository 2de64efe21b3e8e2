package analysis

// SRTTsMs are the flow's smoothed-RTT samples (tcpi_rtt) read inside w, in
// milliseconds. Samples without TCP_INFO or with srtt 0 are skipped. For an
// MPTCP flow without MPTCP-level TCP_INFO use SubflowSRTTsMs.
func SRTTsMs(f *Flow, w Window) []float64 {
	var out []float64
	for _, s := range f.samplesIn(w) {
		if s.TCP != nil && s.TCP.SrttUs > 0 {
			out = append(out, float64(s.TCP.SrttUs)/1000)
		}
	}
	return out
}

// SubflowSRTTsMs are the smoothed RTTs of each MPTCP subflow inside w, in
// milliseconds, keyed by subflow ID.
func SubflowSRTTsMs(f *Flow, w Window) map[string][]float64 {
	out := map[string][]float64{}
	for _, s := range f.samplesIn(w) {
		for _, sf := range s.Subflows {
			if sf.TCP.SrttUs > 0 {
				out[sf.ID] = append(out[sf.ID], float64(sf.TCP.SrttUs)/1000)
			}
		}
	}
	return out
}

// RTTFromSRTT summarises the sender's smoothed RTT over w, in ms. This is
// the kernel's EWMA (gain 1/8) of ACK-based RTT samples: it lags and
// smooths queueing spikes that probes see.
func RTTFromSRTT(f *Flow, w Window) Summary { return Summarise(SRTTsMs(f, w)) }

// MinRTTMs is the smallest tcpi_min_rtt the flow reported, in ms (0 if
// none).
func MinRTTMs(f *Flow) float64 {
	var m uint32
	for _, s := range f.Samples {
		if s.TCP != nil && s.TCP.MinRttUs > 0 && (m == 0 || s.TCP.MinRttUs < m) {
			m = s.TCP.MinRttUs
		}
	}
	return float64(m) / 1000
}

// ProbeRTTsMs are the RTTs of the probes sent inside w that were answered,
// in ms, in send order.
func ProbeRTTsMs(p *Probe, w Window) []float64 {
	var out []float64
	for _, s := range p.Samples {
		if !s.Lost && s.TS >= w.FromS && s.TS <= w.ToS {
			out = append(out, s.RTTUs/1000)
		}
	}
	return out
}

// RTTFromProbes summarises probe RTTs sent inside w, in ms. Probes share
// the path with the flows, so they include the queueing delay the flows
// build.
func RTTFromProbes(p *Probe, w Window) Summary { return Summarise(ProbeRTTsMs(p, w)) }

// ProbeLoss is the fraction of probes sent inside w that got no reply.
func ProbeLoss(p *Probe, w Window) float64 {
	var sent, lost int
	for _, s := range p.Samples {
		if s.TS >= w.FromS && s.TS <= w.ToS {
			sent++
			if s.Lost {
				lost++
			}
		}
	}
	if sent == 0 {
		return 0
	}
	return float64(lost) / float64(sent)
}

// ProbeSpan is the window from the first to the last probe sent.
func ProbeSpan(p *Probe) Window {
	if len(p.Samples) == 0 {
		return Window{}
	}
	return Window{p.Samples[0].TS, p.Samples[len(p.Samples)-1].TS}
}
