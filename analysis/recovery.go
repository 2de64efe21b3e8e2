package analysis

import "sort"

// Episode is one loss-recovery episode: from entering Recovery (3) or
// Loss (4) until the first state outside them (normally Open or Disorder).
type Episode struct {
	// StartS and EndS are seconds since Result.Start.
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// RTO is true when the episode reached the Loss state (an RTO or a
	// lost retransmission), false for fast recovery only.
	RTO bool `json:"rto"`
}

// DurationMs is the episode length in milliseconds.
func (e Episode) DurationMs() float64 { return (e.EndS - e.StartS) * 1000 }

func inRecovery(s uint8) bool { return s == CARecovery || s == CALoss }

// episodes scans (time, state) pairs in time order. An episode still open
// at the end is returned separately (it has no end).
func episodes(ts []float64, st []uint8) (done []Episode, open int) {
	var cur *Episode
	for i := range ts {
		switch {
		case inRecovery(st[i]) && cur == nil:
			cur = &Episode{StartS: ts[i], RTO: st[i] == CALoss}
		case inRecovery(st[i]):
			cur.RTO = cur.RTO || st[i] == CALoss
		case cur != nil:
			cur.EndS = ts[i]
			done = append(done, *cur)
			cur = nil
		}
	}
	if cur != nil {
		open = 1
	}
	return done, open
}

// EpisodesFromSamples finds recovery episodes in the flow's sampled
// ca_state. Sampling quantises both edges to the sampling interval: an
// episode shorter than one interval may be missed, and durations are
// multiples of the interval. The second result counts an episode still
// running at the last sample (not included).
func EpisodesFromSamples(f *Flow) ([]Episode, int) {
	var ts []float64
	var st []uint8
	for _, s := range f.Samples {
		if s.TCP != nil {
			ts = append(ts, s.TS)
			st = append(st, s.TCP.CAState)
		}
	}
	return episodes(ts, st)
}

// EpisodesFromEvents finds recovery episodes of one flow in
// tcp:tcp_cong_state_set trace events, which give exact edges.
func EpisodesFromEvents(events []CongStateEvent, flowID string) ([]Episode, int) {
	var ev []CongStateEvent
	for _, e := range events {
		if e.Flow == flowID {
			ev = append(ev, e)
		}
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].TS < ev[j].TS })
	ts := make([]float64, len(ev))
	st := make([]uint8, len(ev))
	for i, e := range ev {
		ts[i], st[i] = e.TS, e.State
	}
	return episodes(ts, st)
}

// RecoveryStats summarises recovery episodes.
type RecoveryStats struct {
	// Source is "trace" (tcp_cong_state_set) or "samples" (ca_state).
	Source string `json:"source"`
	// Count is the number of completed episodes; RTOs how many of them
	// reached the Loss state; Unfinished those still open at the end.
	Count      int `json:"count"`
	RTOs       int `json:"rtos"`
	Unfinished int `json:"unfinished"`
	// Durations in milliseconds.
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P95Ms  float64 `json:"p95_ms"`
	// TotalMs is the summed time spent in recovery.
	TotalMs float64 `json:"total_ms"`
}

// Recovery summarises a flow's loss-recovery episodes, from the trace
// events in r when any belong to the flow, else from its samples.
func Recovery(r *Result, f *Flow) RecoveryStats {
	src := "samples"
	eps, open := EpisodesFromSamples(f)
	for _, e := range r.CongStateEvents {
		if e.Flow == f.ID {
			src = "trace"
			eps, open = EpisodesFromEvents(r.CongStateEvents, f.ID)
			break
		}
	}
	return RecoveryOf(src, eps, open)
}

// RecoveryOf summarises the given episodes.
func RecoveryOf(source string, eps []Episode, unfinished int) RecoveryStats {
	st := RecoveryStats{Source: source, Count: len(eps), Unfinished: unfinished}
	d := make([]float64, len(eps))
	for i, e := range eps {
		d[i] = e.DurationMs()
		st.TotalMs += d[i]
		if e.RTO {
			st.RTOs++
		}
	}
	s := Summarise(d)
	st.MeanMs, st.P50Ms, st.P95Ms = s.Mean, s.Median, s.P95
	return st
}
