package analysis

// Host stalls: spans during which the host stopped scheduling the emulator
// (measured by the suite runner's 2 ms timer). A packet in flight during a
// stall is delayed by it — the host's doing, not the emulated path's — so
// the physics bounds on delay percentiles are judged on each sample's
// delay less the stall time inside its flight; the stall itself is judged
// by its own fidelity check.

// stallWithin is how much of [from, to] (seconds) the spans cover.
func stallWithin(from, to float64, spans []Window) float64 {
	var s float64
	for _, w := range spans {
		lo, hi := max(from, w.FromS), min(to, w.ToS)
		if hi > lo {
			s += hi - lo
		}
	}
	return s
}

// ProbeRTTsMsUnstalled is ProbeRTTsMs with each probe's RTT less the host
// stall time inside its flight (send to reply); touched counts the probes
// a stall overlapped.
func ProbeRTTsMsUnstalled(p *Probe, w Window, stalls []Window) (out []float64, touched int) {
	for _, s := range p.Samples {
		if s.Lost || s.TS < w.FromS || s.TS > w.ToS {
			continue
		}
		rtt := s.RTTUs / 1e6
		st := stallWithin(s.TS, s.TS+rtt, stalls)
		if st > 0 {
			touched++
		}
		out = append(out, (rtt-st)*1000)
	}
	return out, touched
}

// UDPDelaysMsUnstalled is UDPDelaysMs with each datagram's one-way delay
// less the host stall time inside its flight; touched counts the
// datagrams a stall overlapped.
func UDPDelaysMsUnstalled(f *Flow, startUnixNs int64, w Window, stalls []Window) (out []float64, touched int) {
	if f.UDP == nil {
		return nil, 0
	}
	for _, p := range f.UDP.Packets {
		t := float64(p.RecvNs-startUnixNs) / 1e9
		if t < w.FromS || t > w.ToS {
			continue
		}
		owd := p.owdUs()
		st := stallWithin(t-owd/1e6, t, stalls)
		if st > 0 {
			touched++
		}
		out = append(out, owd/1000-st*1000)
	}
	return out, touched
}
