package traffic

import (
	"maps"
	"slices"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/wifi"
)

// The lab's Wi-Fi medium over a run: its counters read before and after,
// the deltas recorded per radio.

// mediumSnapshot reads a lab's medium counters (nil: no medium).
func mediumSnapshot(st *emu.State) *wifi.MediumStats {
	if st.Medium == nil {
		return nil
	}
	ms, err := emu.LabMediumStats(st.Lab)
	if err != nil {
		return nil
	}
	return ms
}

// wifiResult is the medium's part of a result: after − before per radio.
func wifiResult(st *emu.State, before, after *wifi.MediumStats) *analysis.WiFiMedium {
	if before == nil || after == nil {
		return nil
	}
	span := after.Uptime - before.Uptime
	out := &analysis.WiFiMedium{Backend: st.Medium.Backend, DurationS: span.Seconds(), LateMeanUs: after.LateMeanUs, LateMaxUs: after.LateMaxUs}
	if n := after.LateEvents - before.LateEvents; after.LateEvents > before.LateEvents {
		// over the run itself, not since the medium started
		out.LateMeanUs = (after.LateSumUs - before.LateSumUs) / float64(n)
	}
	for node, a := range after.Radios {
		b := before.Radios[node]
		r := analysis.WiFiRadio{Node: node, Frames: a.Frames - b.Frames, Attempts: a.Attempts - b.Attempts, Retries: a.Retries - b.Retries,
			Collisions: a.Collisions - b.Collisions, Errors: a.Errors - b.Errors, Failed: a.Failed - b.Failed,
			Dropped: a.Dropped - b.Dropped, Delivered: a.Delivered - b.Delivered, AirtimeS: (a.Airtime - b.Airtime).Seconds(),
			Rate: a.LastDataRate}
		if r.Rate == "" {
			r.Rate = a.LastRate
		}
		if span > 0 {
			r.AirtimeShare = float64(a.Airtime-b.Airtime) / float64(span)
		}
		if n := r.Errors + r.Delivered; n > 0 {
			r.PER = float64(r.Errors) / float64(n)
		}
		for _, f := range slices.Sorted(maps.Keys(after.PerLink[node])) {
			la, lb := after.PerLink[node][f], before.PerLink[node][f]
			l := analysis.WiFiLink{FreqMHz: f, Frames: la.Frames - lb.Frames, Delivered: la.Delivered - lb.Delivered}
			if span > 0 {
				l.AirtimeShare = float64(la.Airtime-lb.Airtime) / float64(span)
			}
			r.Links = append(r.Links, l)
		}
		out.Radios = append(out.Radios, r)
	}
	slices.SortFunc(out.Radios, func(x, y analysis.WiFiRadio) int {
		switch {
		case x.Node < y.Node:
			return -1
		case x.Node > y.Node:
			return 1
		}
		return 0
	})
	return out
}

// handovers are the medium's handovers that began during the run (after
// before was read), timed from t0.
func handovers(before, after *wifi.MediumStats, t0 time.Time) []analysis.WiFiHandover {
	if before == nil || after == nil {
		return nil
	}
	var out []analysis.WiFiHandover
	for _, h := range after.Handovers {
		if slices.ContainsFunc(before.Handovers, func(b wifi.Handover) bool { return b.Station == h.Station && b.At == h.At }) {
			continue
		}
		out = append(out, analysis.WiFiHandover{TS: h.Time.Sub(t0).Seconds(), Station: h.Station, From: h.From, To: h.To,
			FromSNRdB: h.FromSNRdB, ToSNRdB: h.ToSNRdB, OffAirMs: float64(h.OffAir) / 1e6, Done: h.Done, Held: h.Held, Dropped: h.Dropped})
	}
	return out
}
