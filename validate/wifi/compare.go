package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// The band a checked ratio (ours / ns-3) must fall in.
const lo, hi = 0.95, 1.05

// row is one figure of one scenario side by side.
type row struct {
	Scenario string   `json:"scenario"`
	Metric   string   `json:"metric"`
	NS3      *float64 `json:"ns3"`
	Ours     *float64 `json:"ours,omitempty"`
	Ratio    *float64 `json:"ratio,omitempty"`
	Verdict  string   `json:"verdict"` // ok, FAIL, explained, info, ns-3 only, error
	Reason   string   `json:"reason,omitempty"`
}

// Verdicts.
const (
	vOK        = "ok"
	vFail      = "FAIL"
	vExplained = "explained"
	vInfo      = "info"
	vNS3Only   = "ns-3 only"
	vError     = "error"
)

// zero is, per metric, the magnitude below which a value counts as nothing:
// two such values agree whatever their ratio.
var zero = map[string]float64{
	"goodput_mbps": 0.01, "collision_p": 0.002, "per": 0.002,
}

// metricsOf returns, for a scenario, every metric with ns-3's value and
// ours (nil when not run or not reported), in a fixed order.
func metricsOf(sc scenario, n *ns3Result, o *oursResult) []row {
	type pair struct {
		name      string
		ns3, ours *float64
	}
	var ps []pair
	add := func(name string, a, b *float64) { ps = append(ps, pair{name, a, b}) }
	ov := func(f func(*oursResult) *float64) *float64 {
		if o == nil {
			return nil
		}
		return f(o)
	}
	add("goodput_mbps", &n.GoodputMbps, ov(func(o *oursResult) *float64 { return &o.GoodputMbps }))
	if len(n.PerStationMbps) > 1 {
		add("collision_p", n.CollisionP, ov(func(o *oursResult) *float64 { return o.CollisionP }))
		add("min/max_station", minMax(n.PerStationMbps), ov(func(o *oursResult) *float64 { return minMax(o.PerStationMbps) }))
	}
	if n.MPDUsPerPPDU != nil && *n.MPDUsPerPPDU > 1 {
		add("mpdus_per_ppdu", n.MPDUsPerPPDU, ov(func(o *oursResult) *float64 { return o.MPDUsPerPPDU }))
	}
	if strings.HasPrefix(sc.name, "range-") {
		add("per", n.MPDUPer, ov(func(o *oursResult) *float64 { return o.PER }))
		add("rx_dbm", n.RxSignalDBm, ov(func(o *oursResult) *float64 { return o.RxDBm }))
	}
	rows := make([]row, 0, len(ps))
	for _, p := range ps {
		rows = append(rows, judge(sc, p.name, p.ns3, p.ours, o != nil))
	}
	return rows
}

func judge(sc scenario, metric string, a, b *float64, ran bool) row {
	r := row{Scenario: sc.name, Metric: metric, NS3: a, Ours: b}
	checked := slices.Contains(sc.checked, metric)
	switch {
	case !ran:
		r.Verdict = vNS3Only
		return r
	case !checked:
		r.Verdict = vInfo
		r.Ratio = ratio(a, b)
		return r
	case a == nil || b == nil:
		r.Verdict = vFail
		r.Reason = "a value is missing"
	default:
		r.Ratio = ratio(a, b)
		z := zero[metric]
		switch {
		case math.Abs(*a) < z && math.Abs(*b) < z:
			r.Verdict = vOK
			r.Reason = "both ≈ 0"
		case r.Ratio != nil && *r.Ratio >= lo && *r.Ratio <= hi:
			r.Verdict = vOK
		default:
			r.Verdict = vFail
		}
	}
	if r.Verdict == vFail {
		if why, ok := explained[sc.name+" "+metric]; ok {
			r.Verdict = vExplained
			r.Reason = why
		}
	}
	return r
}

// ratio is ours / ns-3, +Inf when ns-3 is 0 and ours is not, nil when
// either is missing or both are 0.
func ratio(ns3, ours *float64) *float64 {
	if ns3 == nil || ours == nil {
		return nil
	}
	var q float64
	switch {
	case *ns3 != 0:
		q = *ours / *ns3
	case *ours == 0:
		return nil
	default:
		q = math.Inf(1)
	}
	return &q
}

// minMax is the smallest per-station goodput over the largest (1 = fair).
func minMax(v []float64) *float64 {
	if len(v) < 2 {
		return nil
	}
	mx := slices.Max(v)
	if mx == 0 {
		return nil
	}
	q := slices.Min(v) / mx
	return &q
}

func printTable(w io.Writer, rows []row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tmetric\tns-3\tours\tratio\tverdict")
	for _, r := range rows {
		verdict := r.Verdict
		if r.Reason != "" {
			verdict += " (" + r.Reason + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Scenario, r.Metric, num(r.NS3), num(r.Ours), num(r.Ratio), verdict)
	}
	return tw.Flush()
}

func num(v *float64) string {
	switch {
	case v == nil:
		return "-"
	case math.IsInf(*v, 0):
		return "inf"
	case *v != 0 && math.Abs(*v) < 0.01:
		return fmt.Sprintf("%.2g", *v)
	default:
		return fmt.Sprintf("%.3f", *v)
	}
}
