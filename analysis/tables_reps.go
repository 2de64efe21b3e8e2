package analysis

import (
	"fmt"
)

// Metric is a named per-run number pooled across repetitions.
type Metric struct {
	Key, Header, Unit string
	// Of extracts the value from a run summary (false: not available).
	Of func(RunSummary) (float64, bool)
}

// StandardMetrics are the per-run metrics the repetition table pools:
// aggregate steady goodput, mean srtt of the flows, mean retransmission
// ratio and Jain's index.
var StandardMetrics = []Metric{
	{"aggregate_mbps", "aggregate goodput", "Mbit/s", func(r RunSummary) (float64, bool) {
		return r.AggregateBps / mbit, r.AggregateBps > 0
	}},
	{"srtt_ms", "srtt mean", "ms", func(r RunSummary) (float64, bool) {
		return meanOf(r.Flows, func(f FlowSummary) *float64 {
			if f.SRTTMs == nil {
				return nil
			}
			return &f.SRTTMs.Mean
		})
	}},
	{"retrans_ratio", "retrans ratio", "", func(r RunSummary) (float64, bool) {
		return meanOf(r.Flows, func(f FlowSummary) *float64 { return f.RetransRatio })
	}},
	{"jain", "Jain index", "", func(r RunSummary) (float64, bool) {
		if r.Jain == nil {
			return 0, false
		}
		return *r.Jain, true
	}},
}

func meanOf(fs []FlowSummary, get func(FlowSummary) *float64) (float64, bool) {
	var s float64
	n := 0
	for _, f := range fs {
		if v := get(f); v != nil {
			s += *v
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return s / float64(n), true
}

// Scenario is the runs of one scenario.
type Scenario struct {
	Name string
	Runs []RunSummary
}

// GroupScenarios pools summaries by scenario name (runs without one form
// their own scenario named by label), in order of first appearance.
func GroupScenarios(labels []string, results []*Result, sums []RunSummary) []Scenario {
	idx := map[string]int{}
	var out []Scenario
	for i, r := range results {
		name := r.Scenario
		if name == "" {
			name = labels[i]
		}
		j, ok := idx[name]
		if !ok {
			j = len(out)
			idx[name] = j
			out = append(out, Scenario{Name: name})
		}
		out[j].Runs = append(out[j].Runs, sums[i])
	}
	return out
}

// Values extracts a metric from each run of a scenario.
func (s Scenario) Values(m Metric) []float64 {
	var v []float64
	for _, r := range s.Runs {
		if x, ok := m.Of(r); ok {
			v = append(v, x)
		}
	}
	return v
}

// RepetitionTable is one row per scenario and metric: n, mean, median,
// stddev and the confidence interval at level.
func RepetitionTable(title string, scen []Scenario, metrics []Metric, level float64) *Table {
	t := &Table{Title: title, Columns: []Column{
		{Key: "scenario", Header: "scenario"},
		{Key: "metric", Header: "metric"},
		{Key: "unit", Header: "unit"},
		{Key: "n", Header: "n"},
		{Key: "mean", Header: "mean"},
		{Key: "median", Header: "median"},
		{Key: "stddev", Header: "stddev"},
		{Key: "ci_low", Header: fmt.Sprintf("%g %% CI low", level*100)},
		{Key: "ci_high", Header: fmt.Sprintf("%g %% CI high", level*100)},
	}}
	for _, s := range scen {
		for _, m := range metrics {
			v := s.Values(m)
			if len(v) == 0 {
				continue
			}
			rs := Repetitions(v, level)
			var lo, hi any
			if rs.N >= 2 {
				lo, hi = rs.CILow, rs.CIHigh
			}
			t.AddRow(s.Name, m.Header, m.Unit, rs.N, rs.Mean, rs.Median, rs.Stddev, lo, hi)
		}
	}
	return t
}

// RatioTable compares every scenario with the first one (the baseline) on
// each metric: mean ratio and its confidence interval.
func RatioTable(title string, scen []Scenario, metrics []Metric, level float64) *Table {
	t := &Table{Title: title, Columns: []Column{
		{Key: "scenario", Header: "scenario"},
		{Key: "baseline", Header: "baseline"},
		{Key: "metric", Header: "metric"},
		{Key: "ratio", Header: "ratio"},
		{Key: "ci_low", Header: fmt.Sprintf("%g %% CI low", level*100)},
		{Key: "ci_high", Header: fmt.Sprintf("%g %% CI high", level*100)},
	}}
	if len(scen) < 2 {
		return t
	}
	base := scen[0]
	for _, s := range scen[1:] {
		for _, m := range metrics {
			a, b := s.Values(m), base.Values(m)
			if len(a) == 0 || len(b) == 0 {
				continue
			}
			r := Ratio(a, b, level)
			var lo, hi any
			if r.CIHigh > 0 {
				lo, hi = r.CILow, r.CIHigh
			}
			t.AddRow(s.Name, base.Name, m.Header, r.Ratio, lo, hi)
		}
	}
	return t
}
