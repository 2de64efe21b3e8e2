package suite

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/emuctl/emuctl/analysis"
)

// limitedTable writes what limited each TCP/MPTCP flow in each scenario:
// the medians over valid runs of the shares of its steady window limited
// by the network, the receive window, the send buffer and the
// application, and of its busy share; each MPTCP subflow (by its
// addresses) on a row below its connection. Nothing when no run carries
// the diagnosis.
func limitedTable(b *strings.Builder, o *Outcome, p *Plan) {
	type row struct {
		label    string
		goodput  []float64
		lims     []analysis.Limits
		idle     int // runs in which the subflow carried nothing
		subOrder int
	}
	var rows []*row
	found := false
	for _, sc := range p.Scenarios {
		byKey := map[string]*row{}
		var keys []string
		get := func(key, label string, sub int) *row {
			r := byKey[key]
			if r == nil {
				r = &row{label: label, subOrder: sub}
				byKey[key] = r
				keys = append(keys, key)
			}
			return r
		}
		for _, run := range validRuns(o, sc.Name) {
			if run.data == nil {
				continue
			}
			for i, f := range run.data.res.Flows {
				l := run.data.sum.Flows[i].Limited
				if l == nil {
					continue
				}
				found = true
				r := get(f.ID, fmt.Sprintf("| %s | %s |", sc.Name, f.ID), 0)
				r.goodput = append(r.goodput, run.data.sum.Flows[i].SteadyGoodputBps/1e6)
				r.lims = append(r.lims, l.Limits)
				for _, sf := range l.Subflows {
					path := subflowPath(sf)
					s := get(f.ID+"\x00"+path, fmt.Sprintf("| %s | %s ↳ %s |", sc.Name, f.ID, path), 1)
					s.goodput = append(s.goodput, sf.GoodputBps/1e6)
					s.lims = append(s.lims, sf.Limits)
					if sf.Idle {
						s.idle++
					}
				}
			}
		}
		// Flows in order of appearance, each followed by its subflows,
		// fastest first.
		sort.SliceStable(keys, func(i, j int) bool {
			fi, _, _ := strings.Cut(keys[i], "\x00")
			fj, _, _ := strings.Cut(keys[j], "\x00")
			if fi != fj {
				return false
			}
			ri, rj := byKey[keys[i]], byKey[keys[j]]
			if ri.subOrder != rj.subOrder {
				return ri.subOrder < rj.subOrder
			}
			return analysis.Median(ri.goodput) > analysis.Median(rj.goodput)
		})
		for _, k := range keys {
			rows = append(rows, byKey[k])
		}
	}
	if !found {
		return
	}
	b.WriteString("## What limited the flows (medians over valid runs)\n\n")
	b.WriteString("Share of each TCP/MPTCP flow's steady window its sender was limited by the network (cwnd), the receive window, the send buffer or the application; busy: data in flight or queued (`tcpi_busy_time`). MPTCP subflows (↳) are judged against the connection's send buffer; the connection weighs them by their rate while busy. Definitions: analysis/METRICS.md, \"What limited the sender\".\n\n")
	b.WriteString("| scenario | flow | goodput (Mbit/s) | network | receive window | send buffer | application | busy | limited by |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		if 2*r.idle > len(r.lims) {
			fmt.Fprintf(b, "%s %.2f | — | — | — | — | %s | carried no data (backup, or unused) |\n", r.label, analysis.Median(r.goodput),
				pct0(analysis.Median(busyOf(r.lims))))
			continue
		}
		med := func(f func(analysis.Limits) float64) float64 {
			v := make([]float64, len(r.lims))
			for i, l := range r.lims {
				v[i] = f(l)
			}
			return analysis.Median(v)
		}
		m := analysis.Limits{
			Network: med(func(l analysis.Limits) float64 { return l.Network }),
			Rwnd:    med(func(l analysis.Limits) float64 { return l.Rwnd }),
			Sndbuf:  med(func(l analysis.Limits) float64 { return l.Sndbuf }),
			App:     med(func(l analysis.Limits) float64 { return l.App }),
			Busy:    med(func(l analysis.Limits) float64 { return l.Busy }),
		}
		fmt.Fprintf(b, "%s %.2f | %s | %s | %s | %s | %s | %s |\n", r.label, analysis.Median(r.goodput),
			pct0(m.Network), pct0(m.Rwnd), pct0(m.Sndbuf), pct0(m.App), pct0(m.Busy), m.Dominant())
	}
	b.WriteString("\n")
}

// subflowPath names a subflow by its addresses without ports ("10.1.0.1
// → 10.1.0.2"), stable across runs; its id when they are unknown.
func subflowPath(sf analysis.SubflowLimits) string {
	src, err1 := netip.ParseAddrPort(sf.Src)
	dst, err2 := netip.ParseAddrPort(sf.Dst)
	if err1 != nil || err2 != nil {
		return "subflow " + sf.ID
	}
	return src.Addr().String() + " → " + dst.Addr().String()
}

func busyOf(ls []analysis.Limits) []float64 {
	out := make([]float64, len(ls))
	for i, l := range ls {
		out[i] = l.Busy
	}
	return out
}

func pct0(v float64) string { return fmt.Sprintf("%.0f %%", 100*v) }
