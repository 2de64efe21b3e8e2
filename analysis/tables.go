package analysis

// Display units used by the standard tables.
const (
	mbit = 1e6
	kB   = 1e3
)

func orNil(p *float64, scale float64) any {
	if p == nil {
		return nil
	}
	return *p * scale
}

// FlowTable is one row per flow of each result: goodput (whole run and
// steady state), utilisation, srtt, cwnd, retransmissions, recovery, and
// what limited the sender.
// label names each result's rows (e.g. its file name or scenario).
func FlowTable(title string, labels []string, sums []RunSummary) *Table {
	t := &Table{Title: title, Columns: []Column{
		{Key: "run", Header: "run"},
		{Key: "flow", Header: "flow"},
		{Key: "proto", Header: "proto"},
		{Key: "cc", Header: "cc"},
		{Key: "goodput_mbps", Header: "goodput whole run", Unit: "Mbit/s"},
		{Key: "steady_goodput_mbps", Header: "goodput steady", Unit: "Mbit/s"},
		{Key: "utilisation", Header: "utilisation", Digits: 3},
		{Key: "srtt_mean_ms", Header: "srtt mean", Unit: "ms"},
		{Key: "srtt_p95_ms", Header: "srtt p95", Unit: "ms"},
		{Key: "cwnd_mean_segs", Header: "cwnd mean", Unit: "seg"},
		{Key: "cwnd_max_segs", Header: "cwnd max", Unit: "seg"},
		{Key: "cwnd_mean_kb", Header: "cwnd mean", Unit: "kB"},
		{Key: "cwnd_max_kb", Header: "cwnd max", Unit: "kB"},
		{Key: "retrans_ratio", Header: "retrans ratio", Digits: 3},
		{Key: "recovery_episodes", Header: "recovery episodes"},
		{Key: "recovery_mean_ms", Header: "recovery mean", Unit: "ms"},
		{Key: "udp_loss", Header: "UDP loss", Digits: 3},
		{Key: "jitter_rfc3550_ms", Header: "jitter RFC 3550", Unit: "ms"},
		{Key: "jitter_mean_abs_delta_ms", Header: "jitter mean |Δd|", Unit: "ms"},
		{Key: "busy", Header: "busy", Digits: 3},
		{Key: "limited_net", Header: "limited: network", Digits: 3},
		{Key: "limited_rwnd", Header: "limited: receive window", Digits: 3},
		{Key: "limited_sndbuf", Header: "limited: send buffer", Digits: 3},
		{Key: "limited_app", Header: "limited: application", Digits: 3},
		{Key: "limited_by", Header: "limited by"},
	}}
	for i, rs := range sums {
		for _, f := range rs.Flows {
			var util, srttM, srttP, cms, cxs, cmb, cxb, recN, recM any
			var busy, lNet, lRwnd, lSnd, lApp, lBy any
			if l := f.Limited; l != nil {
				busy, lNet, lRwnd, lSnd, lApp, lBy = l.Busy, l.Network, l.Rwnd, l.Sndbuf, l.App, l.Dominant()
			}
			if f.CapacityBps > 0 {
				util = f.Utilisation
			}
			if f.SRTTMs != nil {
				srttM, srttP = f.SRTTMs.Mean, f.SRTTMs.P95
			}
			if c := f.Cwnd; c != nil {
				cms, cxs, cmb, cxb = c.MeanSegs, c.MaxSegs, c.MeanBytes/kB, c.MaxBytes/kB
			}
			if r := f.Recovery; r != nil {
				recN = r.Count
				if r.Count > 0 {
					recM = r.MeanMs
				}
			}
			t.AddRow(labels[i], f.Flow, f.Proto, f.CC, f.GoodputBps/mbit, f.SteadyGoodputBps/mbit, util,
				srttM, srttP, cms, cxs, cmb, cxb, orNil(f.RetransRatio, 1), recN, recM,
				orNil(f.UDPLoss, 1), orNil(f.JitterRFC3550Ms, 1), orNil(f.JitterMeanAbsDeltaMs, 1),
				busy, lNet, lRwnd, lSnd, lApp, lBy)
		}
	}
	return t.dropEmptyColumns()
}

// RunTable is one row per result: aggregate goodput and Jain's index
// (over the flows of one class: FairnessClass) over the common
// steady-state window.
func RunTable(title string, labels []string, sums []RunSummary) *Table {
	t := &Table{Title: title, Columns: []Column{
		{Key: "run", Header: "run"},
		{Key: "flows", Header: "flows"},
		{Key: "window_from_s", Header: "window from", Unit: "s"},
		{Key: "window_to_s", Header: "window to", Unit: "s"},
		{Key: "aggregate_mbps", Header: "aggregate goodput", Unit: "Mbit/s"},
		{Key: "jain", Header: "Jain index", Digits: 3},
	}}
	for i, rs := range sums {
		t.AddRow(labels[i], len(rs.Flows), rs.Common.FromS, rs.Common.ToS, rs.AggregateBps/mbit, orNil(rs.Jain, 1))
	}
	return t.dropEmptyColumns()
}

// ProbeTable is one row per probe of each result.
func ProbeTable(title string, labels []string, sums []RunSummary) *Table {
	t := &Table{Title: title, Columns: []Column{
		{Key: "run", Header: "run"},
		{Key: "probe", Header: "probe"},
		{Key: "path", Header: "path"},
		{Key: "rtt_mean_ms", Header: "RTT mean", Unit: "ms"},
		{Key: "rtt_median_ms", Header: "RTT median", Unit: "ms"},
		{Key: "rtt_p95_ms", Header: "RTT p95", Unit: "ms"},
		{Key: "rtt_p99_ms", Header: "RTT p99", Unit: "ms"},
		{Key: "rtt_stddev_ms", Header: "RTT stddev", Unit: "ms"},
		{Key: "loss", Header: "probe loss", Digits: 3},
		{Key: "jitter_rfc3550_ms", Header: "jitter RFC 3550", Unit: "ms"},
		{Key: "jitter_mean_abs_delta_ms", Header: "jitter mean |Δd|", Unit: "ms"},
	}}
	for i, rs := range sums {
		for _, p := range rs.Probes {
			t.AddRow(labels[i], p.Probe, p.From+"→"+p.To, p.RTTMs.Mean, p.RTTMs.Median, p.RTTMs.P95, p.RTTMs.P99,
				p.RTTMs.Stddev, p.Loss, p.JitterRFC3550Ms, p.JitterMeanAbsDeltaMs)
		}
	}
	return t
}

// dropEmptyColumns removes columns with no value in any row (e.g. UDP
// columns in a TCP-only table).
func (t *Table) dropEmptyColumns() *Table {
	if len(t.Rows) == 0 {
		return t
	}
	keep := make([]bool, len(t.Columns))
	for _, r := range t.Rows {
		for i, v := range r {
			if v != nil && v != "" {
				keep[i] = true
			}
		}
	}
	out := &Table{Title: t.Title}
	for i, c := range t.Columns {
		if keep[i] {
			out.Columns = append(out.Columns, c)
		}
	}
	for _, r := range t.Rows {
		var nr []any
		for i, v := range r {
			if keep[i] {
				nr = append(nr, v)
			}
		}
		out.Rows = append(out.Rows, nr)
	}
	return out
}
