package traffic

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/emuctl/emuctl/analysis"
)

// WriteSummary prints a short human summary of a result: one line per
// stream (and per group of parallel streams), UDP receiver figures, probes.
func WriteSummary(w io.Writer, r *analysis.Result) {
	fmt.Fprintf(w, "lab %s, engine %s, %.1f s\n", r.Lab, r.Engine, r.DurationS)
	sums := r.Summary
	if len(sums) != len(r.Flows) {
		sums = r.Summarise(analysis.Options{}).Flows
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "flow\tpath\tproto\tcc\tgoodput\tsteady\tretrans\tsrtt mean/p95\tcwnd mean\t")
	groups := map[string]float64{}
	var order []string
	for i, f := range r.Flows {
		s := sums[i]
		retr, srtt, cwnd := "-", "-", "-"
		if s.RetransRatio != nil {
			retr = fmt.Sprintf("%.2f%%", *s.RetransRatio*100)
		}
		if s.SRTTMs != nil {
			srtt = fmt.Sprintf("%.2f/%.2f ms", s.SRTTMs.Mean, s.SRTTMs.P95)
		}
		if s.Cwnd != nil {
			cwnd = fmt.Sprintf("%.0f seg (%s)", s.Cwnd.MeanSegs, bytesString(s.Cwnd.MeanBytes))
		}
		proto := f.Proto
		if f.MPTCPFallback {
			proto += " (FELL BACK TO TCP)"
		}
		cc := f.CC
		if cc == "" {
			cc = "-"
		}
		fmt.Fprintf(tw, "%s\t%s->%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", f.ID, f.From, f.To, proto, cc,
			rateString(s.GoodputBps), rateString(s.SteadyGoodputBps), retr, srtt, cwnd)
		if f.Group != "" {
			if _, ok := groups[f.Group]; !ok {
				order = append(order, f.Group)
			}
			groups[f.Group] += s.GoodputBps
		}
	}
	for _, g := range order {
		fmt.Fprintf(tw, "%s (sum)\t\t\t\t%s\t\t\t\t\t\n", g, rateString(groups[g]))
	}
	tw.Flush()
	writeLimited(w, r.Flows, sums)
	for _, f := range r.Flows {
		if u := f.UDP; u != nil {
			fmt.Fprintf(w, "%s udp: sent %d, received %d, lost %d (%.3f%%), duplicates %d, out of order %d",
				f.ID, u.Sent, u.Received, u.Sent-(u.Received-u.Duplicates), 100*analysis.UDPLoss(u), u.Duplicates, u.OutOfOrder)
			if u.JitterRFC3550Us > 0 || u.OWDMeanUs > 0 {
				fmt.Fprintf(w, ", jitter %s (RFC 3550)", usString(u.JitterRFC3550Us))
			}
			if u.OWDMeanUs > 0 {
				fmt.Fprintf(w, ", %s (mean |Δdelay|), one-way delay min/mean/max %s/%s/%s", usString(u.JitterMeanAbsDeltaUs),
					usString(u.OWDMinUs), usString(u.OWDMeanUs), usString(u.OWDMaxUs))
			}
			fmt.Fprintln(w)
		}
	}
	for i := range r.Probes {
		p := &r.Probes[i]
		var rtts []float64
		lost := 0
		for _, s := range p.Samples {
			if s.Lost {
				lost++
			} else {
				rtts = append(rtts, s.RTTUs/1e3)
			}
		}
		st := analysis.Summarise(rtts)
		fmt.Fprintf(w, "probe %s (%s, %s->%s, with %s): %d sent, %d lost, RTT min/mean/p95/max %.3f/%.3f/%.3f/%.3f ms\n",
			p.ID, p.Kind, p.From, p.To, p.Flow, len(p.Samples), lost, st.Min, st.Mean, st.P95, st.Max)
	}
	for _, st := range r.Steps {
		res := ""
		if st.Error != "" {
			res = " FAILED: " + st.Error
		}
		fmt.Fprintf(w, "step at %.3f s (%.1f ms late), schedule %s: %s%s\n", st.AtS, st.LateS*1000, st.Schedule, st.What, res)
	}
	for _, l := range r.Links {
		if l.QueueSamples == 0 && (l.Discipline == "" || l.Discipline == "droptail") {
			continue
		}
		fmt.Fprintf(w, "queue %s (%s, %s): drops %d, aqm drops %d, CE marks %d", l.Name, l.Backend, orDash(l.Discipline), l.DroppedPackets, l.AQMDrops, l.Marks)
		if l.SojournFrom != "" {
			fmt.Fprintf(w, ", sojourn p50/p95/p99 %.2f/%.2f/%.2f ms (%s)", l.SojournP50Ms, l.SojournP95Ms, l.SojournP99Ms, l.SojournFrom)
		}
		if l.QueueSamples > 0 {
			fmt.Fprintf(w, ", occupancy p50/p95 %.0f/%.0f pkts (%d samples)", l.QueueP50Pkts, l.QueueP95Pkts, l.QueueSamples)
		}
		fmt.Fprintln(w)
	}
	if m := r.WiFi; m != nil {
		fmt.Fprintf(w, "wifi medium (%s backend, %.1f s, late mean %s):", m.Backend, m.DurationS, usString(m.LateMeanUs))
		for _, x := range m.Radios {
			if x.Frames == 0 && x.AirtimeS == 0 {
				continue
			}
			fmt.Fprintf(w, " %s airtime %.1f %%, %d frames, retries %.1f %%, collisions %d, PER %.3f, lost %d, queue drops %d, rate %s;",
				x.Node, 100*x.AirtimeShare, x.Frames, 100*float64(x.Retries)/float64(max(1, x.Frames)), x.Collisions, x.PER, x.Failed, x.Dropped, x.Rate)
		}
		fmt.Fprintln(w)
		printTrack(w, m.Track)
		for _, h := range m.Handovers {
			fmt.Fprintf(w, "wifi handover %s at %.2f s: %s → %s (SNR %.1f → %.1f dB), off the air %.1f ms, %d frames held, %d dropped\n",
				h.Station, h.TS, h.From, h.To, h.FromSNRdB, h.ToSNRdB, h.OffAirMs, h.Held, h.Dropped)
		}
	}
}

// printTrack says where each moving node went during the run: first and
// last place, with its SNR at its AP and its rate there.
func printTrack(w io.Writer, tr []analysis.WiFiPlace) {
	firsts := map[string]analysis.WiFiPlace{}
	lasts := map[string]analysis.WiFiPlace{}
	var order []string
	n := map[string]int{}
	for _, p := range tr {
		if _, ok := firsts[p.Node]; !ok {
			firsts[p.Node] = p
			order = append(order, p.Node)
		}
		lasts[p.Node] = p
		n[p.Node]++
	}
	for _, node := range order {
		a, b := firsts[node], lasts[node]
		fmt.Fprintf(w, "wifi track %s (%d places): %.1f s at %.1f,%.1f,%.1f m (SNR %.1f dB, %s) → %.1f s at %.1f,%.1f,%.1f m (SNR %.1f dB, %s)\n", node, n[node],
			a.TS, a.Pos[0], a.Pos[1], a.Pos[2], a.SNRdB, orDash(a.Rate), b.TS, b.Pos[0], b.Pos[1], b.Pos[2], b.SNRdB, orDash(b.Rate))
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func rateString(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.3f Gbit/s", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.2f Mbit/s", bps/1e6)
	case bps >= 1e3:
		return fmt.Sprintf("%.1f kbit/s", bps/1e3)
	}
	return fmt.Sprintf("%.0f bit/s", bps)
}

func bytesString(b float64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.0f KiB", b/(1<<10))
	}
	return strings.TrimSpace(fmt.Sprintf("%.0f B", b))
}

// usString renders microseconds as ms, or as µs below 1 ms.
func usString(us float64) string {
	if us >= 1000 {
		return fmt.Sprintf("%.3f ms", us/1e3)
	}
	return fmt.Sprintf("%.1f µs", us)
}

// writeLimited prints what limited each TCP/MPTCP sender over its steady
// window, and each MPTCP subflow:
//
//	f1 limited by: send buffer 41 %, network 55 %, application 4 % (busy 96 % of 13.0 s)
func writeLimited(w io.Writer, flows []analysis.Flow, sums []analysis.FlowSummary) {
	for i, f := range flows {
		l := sums[i].Limited
		if l == nil {
			continue
		}
		fmt.Fprintf(w, "%s limited by: %s (busy %.0f %% of %.1f s)\n", f.ID, l.Limits, 100*l.Busy, l.SpanS)
		for _, sf := range l.Subflows {
			path := sf.ID
			if sf.Src != "" {
				path = sf.Src + "->" + sf.Dst
			}
			if sf.Idle {
				fmt.Fprintf(w, "  subflow %s: carried no data (a backup, or unused by the scheduler)\n", path)
				continue
			}
			fmt.Fprintf(w, "  subflow %s, %s: %s (busy %.0f %%)\n", path, rateString(sf.GoodputBps), sf.Limits, 100*sf.Busy)
		}
	}
}
