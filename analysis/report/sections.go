package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/emuctl/emuctl/analysis"
)

// acks: ACK frequency of every capture the results reference, against the
// TACK model at the measured data rate and the flow's minimum RTT.
func (b *builder) acks() error {
	t := &analysis.Table{Title: "ACK frequency from captures vs the TACK model (β = 4, L = 2, MSS = 1500 B)", Columns: []analysis.Column{
		{Key: "run", Header: "run"}, {Key: "capture", Header: "capture"},
		{Key: "sender", Header: "data sender"}, {Key: "receiver", Header: "receiver"},
		{Key: "data_packets", Header: "data packets"}, {Key: "pure_acks", Header: "pure ACKs"},
		{Key: "acks_per_data", Header: "ACKs/data packet", Digits: 3},
		{Key: "ack_rate_hz", Header: "ACK rate", Unit: "Hz"},
		{Key: "data_rate_mbps", Header: "data rate", Unit: "Mbit/s"},
		{Key: "rtt_min_ms", Header: "RTT_min", Unit: "ms"},
		{Key: "f_tack_hz", Header: "f_tack", Unit: "Hz"},
		{Key: "tack_reduction_pct", Header: "ACKs saved by TACK", Unit: "%", Digits: 3},
	}}
	var meas []analysis.Measured
	var missing []string
	rttSet := map[float64]bool{}
	for _, r := range b.runs {
		for _, c := range r.res.Captures {
			path := c.File
			if !filepath.IsAbs(path) {
				path = filepath.Join(filepath.Dir(r.path), c.File)
			}
			rep, err := analysis.ACKFrequencyFile(path)
			if err != nil {
				if os.IsNotExist(err) {
					missing = append(missing, fmt.Sprintf("%s (run %s)", c.File, r.label))
					continue
				}
				return fmt.Errorf("%s: %w", path, err)
			}
			for _, ac := range rep.Conns {
				rtt := minRTTFor(r.res, ac.Sender, ac.Receiver)
				var rttCell, ftack, red any
				if rtt > 0 {
					pt := analysis.TACKModel(ac.DataRateBps, rtt/1000, analysis.DefaultTACK)
					rttCell, ftack = rtt, pt.FTackHz
					if ac.ACKRateHz > 0 {
						red = (1 - pt.FTackHz/ac.ACKRateHz) * 100
					}
					rttSet[rtt/1000] = true
				}
				t.AddRow(r.label, c.Node+":"+c.Iface, ac.Sender, ac.Receiver, ac.DataPackets, ac.PureACKs, ac.ACKsPerData,
					ac.ACKRateHz, ac.DataRateBps/1e6, rttCell, ftack, red)
				meas = append(meas, analysis.Measured{Name: r.label, X: ac.DataRateBps / 1e6, Hz: ac.ACKRateHz})
			}
		}
	}
	if len(t.Rows) == 0 && len(missing) == 0 {
		return nil
	}
	b.doc.h(1, "ACK frequency")
	if len(missing) > 0 {
		b.doc.p("Captures referenced but not found: " + strings.Join(missing, ", ") + ".")
	}
	if len(t.Rows) == 0 {
		return nil
	}
	b.doc.p("Pure ACKs are the receiver's packets with ACK set, no payload and no SYN/FIN/RST. The TACK frequency is evaluated at each connection's measured data rate and the matching flow's minimum RTT (tcpi_min_rtt); \"ACKs saved\" is 1 − f_tack / measured ACK rate.")
	b.doc.table("ack-frequency", t)
	var rtts []float64
	for r := range rttSet {
		rtts = append(rtts, r)
	}
	sort.Float64s(rtts)
	if len(rtts) == 0 {
		rtts = []float64{0.010}
	}
	sw := analysis.SweepBw(rtts, analysis.LogSpace(1e5, 1e10, 200), analysis.DefaultTACK)
	p, err := analysis.TACKPlot(sw, "Measured ACK rate vs the TACK model", meas)
	return b.plot("ack-frequency", "Measured ACK rate (crosses) against f_tack and f_tcp(L=2) at the runs' RTT_min", p, err)
}

// minRTTFor is the minimum RTT (ms) of the flow between the two socket
// addresses, or the smallest of the run's flows when none matches.
func minRTTFor(r *analysis.Result, a, b string) float64 {
	best := 0.0
	for i := range r.Flows {
		f := &r.Flows[i]
		m := analysis.MinRTTMs(f)
		if m <= 0 {
			continue
		}
		if (f.Src == a && f.Dst == b) || (f.Src == b && f.Dst == a) {
			return m
		}
		if best == 0 || m < best {
			best = m
		}
	}
	return best
}

// conditions: the recorded conditions (those shared by all runs once,
// the differing ones per run) and each run's links.
func (b *builder) conditions() error {
	d := b.doc
	d.h(1, "Conditions")
	common := map[string]string{}
	keys := map[string]bool{}
	for i, r := range b.runs {
		for k, v := range r.res.Conditions {
			keys[k] = true
			if i == 0 {
				common[k] = v
			}
		}
	}
	for k, v := range common {
		for _, r := range b.runs {
			if rv, ok := r.res.Conditions[k]; !ok || rv != v {
				delete(common, k)
				break
			}
		}
	}
	if len(keys) == 0 {
		d.p("The results record no conditions.")
	}
	d.table("conditions", analysis.ConditionsTable("Conditions shared by all runs", common))
	diff := &analysis.Table{Title: "Conditions that differ between runs", Columns: []analysis.Column{
		{Key: "run", Header: "run"}, {Key: "key", Header: "condition"}, {Key: "value", Header: "value"},
	}}
	var ks []string
	for k := range keys {
		if _, ok := common[k]; !ok {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	for _, r := range b.runs {
		for _, k := range ks {
			if v, ok := r.res.Conditions[k]; ok {
				diff.AddRow(r.label, k, v)
			} else {
				diff.AddRow(r.label, k, "(not recorded)")
			}
		}
	}
	d.table("conditions-differing", diff)
	// Runs with identical links share one table.
	var groups [][]int
	key := map[string]int{}
	for i, r := range b.runs {
		if len(r.res.Links) == 0 {
			continue
		}
		k, _ := json.Marshal(r.res.Links)
		j, ok := key[string(k)]
		if !ok {
			j = len(groups)
			key[string(k)] = j
			groups = append(groups, nil)
		}
		groups[j] = append(groups[j], i)
	}
	for gi, g := range groups {
		var names []string
		for _, i := range g {
			names = append(names, b.runs[i].label)
		}
		title := "Links: " + strings.Join(names, ", ")
		if len(g) == len(b.runs) {
			title = "Links (all runs)"
		}
		d.table(fmt.Sprintf("links-%d", gi+1), analysis.LinkTable(title, b.runs[g[0]].res.Links))
	}
	var labels []string
	var links [][]analysis.Link
	for _, r := range b.runs {
		labels, links = append(labels, r.label), append(links, r.res.Links)
	}
	if qt := analysis.QueueTable("Queues: disciplines, drops, CE marks, sojourn and occupancy per run", labels, links); len(qt.Rows) > 0 {
		d.table("queues", qt)
	}
	var steps [][]analysis.Step
	for _, r := range b.runs {
		steps = append(steps, r.res.Steps)
	}
	if st := analysis.StepTable("Schedule steps applied during each run (link changes on a timetable)", labels, steps); len(st.Rows) > 0 {
		d.table("steps", st)
	}
	return nil
}

// definitions: where the metrics are defined.
func (b *builder) definitions() error {
	b.doc.h(1, "Definitions")
	b.doc.p("Metric definitions are in emuctl's analysis/METRICS.md. Jitter is reported two ways and never interchangeably: RFC 3550 interarrival jitter (J ← J + (|D| − J)/16, what iperf reports) and the mean absolute delay difference Σ|d_i − d_{i−1}|/(N−1) (TIPHON-style). TCP retransmission ratios are not loss rates; queue drops are counted per link.")
	return nil
}

// writeTables writes each table of the document as CSV and JSON.
func (b *builder) writeTables() error {
	for _, bl := range b.doc.blocks {
		tb, ok := bl.(tableBlock)
		if !ok {
			continue
		}
		for _, ext := range []string{"csv", "json"} {
			path := filepath.Join(b.out, "tables", tb.name+"."+ext)
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			err = tb.t.Write(f, ext)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			b.res.Tables = append(b.res.Tables, path)
		}
	}
	return nil
}
