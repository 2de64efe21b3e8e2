package analysis

// Host stalls: spans during which the host stopped scheduling the emulator
// (measured by the suite runner's 2 ms timer). A delay sample whose flight
// overlaps one measured the host, not the emulated path, so the physics
// bounds on delay percentiles are judged without those samples; the
// stall itself is judged by its own fidelity check.

// overlapsAny reports whether [from, to] (seconds since Result.Start)
// overlaps one of the spans.
func overlapsAny(from, to float64, spans []Window) bool {
	for _, s := range spans {
		if from <= s.ToS && to >= s.FromS {
			return true
		}
	}
	return false
}

// ProbeRTTsMsUnstalled is ProbeRTTsMs without the probes whose flight
// (send to reply) overlapped a host stall; dropped counts those left out.
func ProbeRTTsMsUnstalled(p *Probe, w Window, stalls []Window) (out []float64, dropped int) {
	for _, s := range p.Samples {
		if s.Lost || s.TS < w.FromS || s.TS > w.ToS {
			continue
		}
		if overlapsAny(s.TS, s.TS+s.RTTUs/1e6, stalls) {
			dropped++
			continue
		}
		out = append(out, s.RTTUs/1000)
	}
	return out, dropped
}

// UDPDelaysMsUnstalled is UDPDelaysMs without the datagrams whose flight
// (send to receive) overlapped a host stall; dropped counts those left out.
func UDPDelaysMsUnstalled(f *Flow, startUnixNs int64, w Window, stalls []Window) (out []float64, dropped int) {
	if f.UDP == nil {
		return nil, 0
	}
	for _, p := range f.UDP.Packets {
		t := float64(p.RecvNs-startUnixNs) / 1e9
		if t < w.FromS || t > w.ToS {
			continue
		}
		owd := p.OWDUs
		if owd == 0 && p.RecvNs != 0 && p.SentNs != 0 {
			owd = float64(p.RecvNs-p.SentNs) / 1e3
		}
		if overlapsAny(t-owd/1e6, t, stalls) {
			dropped++
			continue
		}
		out = append(out, owd/1000)
	}
	return out, dropped
}
