package suite

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/emuctl/emuctl/suite/expr"
)

// refData is one reference-engine run converted into the suite's metric
// names and units (Mbit/s, ms, bytes, ratios), so every expression of a
// suite evaluates on it as on a Linux run; a metric the engine does not
// measure is missing (the report shows "—").
type refData struct {
	flows map[string]refFlow
	names []string                      // flow names, sorted
	links map[string]map[string]float64 // "a->b" → link metric → value
	cpuS  float64
	// deterministic: the program drew no random numbers that shape the
	// run, so another seed would repeat it.
	deterministic bool
}

type refFlow struct {
	proto, cc string
	m         map[string]float64
}

// refFlowFields maps the fields of a program's per-flow JSON to metrics.
// The programs print units in the field names; the metrics' units are
// the catalogue's (catalogue.go).
var refFlowFields = map[string][]string{
	"goodput_mbps":       {"goodput"},
	"goodput_whole_mbps": {"goodput_whole"},
	"srtt_ms":            {"srtt"},
	"srtt_p95_ms":        {"srtt_p95"},
	"srtt_std_ms":        {"srtt_std"},
	"srtt_max_ms":        {"srtt_max"},
	"min_rtt_ms":         {"min_rtt"},
	"cwnd_mean_bytes":    {"cwnd_mean"},
	"cwnd_max_bytes":     {"cwnd_max"},
	"retrans":            {"retrans"},
	"rtos":               {"rtos"},
	"tlps":               {"tlps"},
	"recoveries":         {"recoveries"},
	"recovery_mean_ms":   {"recovery_mean"},
	"recovery_p95_ms":    {"recovery_p95"},
	"udp_loss":           {"udp_loss"},
	"owd_mean_ms":        {"owd_mean"},
	"owd_p95_ms":         {"owd_p95"},
	// A simulator has no host stalls: the unstalled percentile is the
	// percentile.
	"owd_p99_ms": {"owd_p99", "owd_p99_unstalled"},
	"owd_min_ms": {"owd_min"},
	"owd_max_ms": {"owd_max"},
	"jitter_ms":  {"jitter"},
}

// refLinkFields maps a program's per-link counters to link metrics.
var refLinkFields = map[string]string{"in": "link_in", "out": "link_out", "loss_drops": "loss_drops",
	"queue_drops": "queue_drops", "queue_peak": "queue_peak"}

// parseRefResult converts one JSON line of a reference program.
func parseRefResult(line []byte) (*refData, error) {
	var raw struct {
		Flows         map[string]map[string]any      `json:"flows"`
		Links         map[string]map[string]*float64 `json:"links"`
		CPU           float64                        `json:"cpu_s"`
		Deterministic bool                           `json:"deterministic"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, fmt.Errorf("not a reference program's result: %v", err)
	}
	if len(raw.Flows) == 0 {
		return nil, fmt.Errorf("the result has no flows")
	}
	rd := &refData{flows: map[string]refFlow{}, links: map[string]map[string]float64{}, cpuS: raw.CPU,
		deterministic: raw.Deterministic}
	for name, f := range raw.Flows {
		rf := refFlow{m: map[string]float64{}}
		rf.proto, _ = f["proto"].(string)
		rf.cc, _ = f["cc"].(string)
		for field, v := range f {
			x, ok := v.(float64) // JSON null (not measured) stays missing
			if !ok {
				continue
			}
			for _, m := range refFlowFields[field] {
				rf.m[m] = x
			}
		}
		if sent, ok := f["segments_sent"].(float64); ok && sent > 0 {
			rf.m["retrans_ratio"] = rf.m["retrans"] / sent
		}
		rd.flows[name] = rf
		rd.names = append(rd.names, name)
	}
	sort.Strings(rd.names)
	for name, l := range raw.Links {
		m := map[string]float64{}
		for field, v := range l {
			if v != nil && refLinkFields[field] != "" {
				m[refLinkFields[field]] = *v
			}
		}
		if in := m["link_in"]; in > 0 {
			m["loss_rate"] = m["loss_drops"] / in
			if in > m["loss_drops"] {
				m["queue_drop_ratio"] = m["queue_drops"] / (in - m["loss_drops"])
			}
		}
		rd.links[name] = m
	}
	return rd, nil
}

// refSummed are the flow metrics a run sums over flows (as on Linux:
// goodput is the aggregate, counters add up); the others are means.
var refSummed = map[string]bool{"goodput": true, "goodput_whole": true, "retrans": true, "recoveries": true,
	"rtos": true, "tlps": true}

var refUDP = map[string]bool{"udp_loss": true, "owd_mean": true, "owd_p95": true, "owd_p99": true,
	"owd_p99_unstalled": true, "owd_min": true, "owd_max": true, "jitter": true}

// metric evaluates one metric on the converted run, as runData.metric
// does on a Linux run.
func (rd *refData) metric(name, arg string) (expr.Value, error) {
	def, known := metricDefs[name]
	if !known {
		return expr.Value{}, fmt.Errorf("unknown metric %s", name)
	}
	switch def.arg {
	case argLink:
		l, ok := rd.links[arg]
		if !ok {
			return expr.Value{}, missing("the reference program reports no link %s", arg)
		}
		v, ok := l[name]
		if !ok {
			return expr.Value{}, missing("the reference program does not count %s", name)
		}
		return expr.NumV(v), nil
	case argLinkOpt, argNodeKey, argNode:
		return expr.Value{}, missing("%s is measured on a lab, not in the simulator", name)
	}
	if name == "jain" {
		var x []float64
		for _, n := range rd.names {
			if f := rd.flows[n]; f.proto == "tcp" {
				x = append(x, f.m["goodput"])
			}
		}
		if len(x) < 2 {
			return expr.Value{}, missing("Jain's index needs two or more TCP flows")
		}
		s, s2 := 0.0, 0.0
		for _, v := range x {
			s, s2 = s+v, s2+v*v
		}
		if s2 == 0 {
			return expr.Value{}, missing("no goodput")
		}
		return expr.NumV(s * s / (float64(len(x)) * s2)), nil
	}
	if arg != "" {
		f, ok := rd.flows[arg]
		if !ok {
			return expr.Value{}, missing("flow %q did not run in the simulator", arg)
		}
		v, ok := f.m[name]
		if !ok || math.IsNaN(v) {
			return expr.Value{}, missing("the simulator does not measure %s", name)
		}
		return expr.NumV(v), nil
	}
	var vals []float64
	for _, n := range rd.names {
		f := rd.flows[n]
		if (f.proto == "udp") != refUDP[name] {
			continue
		}
		if v, ok := f.m[name]; ok && !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return expr.Value{}, missing("the simulator does not measure %s", name)
	}
	if refSummed[name] {
		return expr.NumV(sum(vals)), nil
	}
	return expr.NumV(sum(vals) / float64(len(vals))), nil
}

// refMetrics are a converted run's standard metrics (runs.csv, the
// scenario table), as standardMetrics gives them for a Linux run.
func refMetrics(rd *refData) map[string]float64 {
	out := map[string]float64{}
	for _, n := range standardNames {
		if v, err := rd.metric(n, ""); err == nil && !v.IsStr && !math.IsNaN(v.Num) {
			out[n] = v.Num
		}
	}
	for _, n := range rd.names {
		if v, ok := rd.flows[n].m["goodput"]; ok {
			out["goodput["+n+"]"] = v
		}
	}
	return out
}
