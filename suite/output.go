package suite

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/emuctl/emuctl/analysis"
)

// standardNames are the metrics every run records (when defined) in
// runs.csv and the outcome, besides goodput per flow.
var standardNames = []string{"goodput", "goodput_whole", "srtt", "srtt_p95", "min_rtt", "cwnd_mean", "retrans",
	"retrans_ratio", "rtos", "tlps", "recoveries", "recovery_mean", "subflows", "jain", "udp_loss", "owd_mean",
	"owd_p95", "owd_p99", "owd_p99_unstalled", "owd_max", "jitter", "jitter_mad", "probe_rtt", "probe_rtt_p95", "probe_rtt_p99", "probe_rtt_p99_unstalled", "probe_rtt_min", "probe_jitter", "probe_loss",
	"cpu_total", "cpu_max", "cpu_peak", "host_stall", "delay_samples_stalled", "engine_late_mean", "engine_late_max",
	"limited_net", "limited_rwnd", "limited_sndbuf", "limited_app", "busy"}

// limitedNames are the limited-by metrics recorded per TCP/MPTCP flow;
// the _fast ones (the MPTCP subflow that carried the most) per MPTCP flow.
var limitedNames = []string{"limited_net", "limited_rwnd", "limited_sndbuf", "limited_app", "busy", "busy_fast", "limited_sndbuf_fast"}

func standardMetrics(rd *runData) map[string]float64 {
	out := map[string]float64{}
	for _, n := range standardNames {
		if v, err := rd.metric(n, ""); err == nil && !v.IsStr && !math.IsNaN(v.Num) {
			out[n] = v.Num
		}
	}
	for _, f := range rd.res.Flows {
		id := f.ID
		if f.Group != "" {
			id = f.Group
		}
		if v, err := rd.metric("goodput", id); err == nil {
			out["goodput["+id+"]"] = v.Num
		}
		for _, n := range limitedNames {
			if strings.HasSuffix(n, "_fast") && f.Proto != "mptcp" {
				continue
			}
			if v, err := rd.metric(n, id); err == nil {
				out[n+"["+id+"]"] = v.Num
			}
		}
	}
	return out
}

// writeRun writes a run's raw result (analysis format, readable by
// `emuctl report`) and its sidecar (validity, engine counters, CPU).
func writeRun(dir string, rec *RunRecord) error {
	base := filepath.Join(dir, "runs", rec.ID)
	if rec.data != nil {
		f, err := os.Create(base + ".json")
		if err != nil {
			return err
		}
		err = analysis.Encode(f, rec.data.res)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		rec.File = filepath.Join("runs", rec.ID+".json")
	}
	side := struct {
		*RunRecord
		Status string                 `json:"status"`
		Links  map[string]interface{} `json:"engine_links,omitempty"`
		CPU    *cpuLoad               `json:"cpu,omitempty"`
	}{RunRecord: rec, Status: rec.Status()}
	if rec.data != nil {
		side.Links = map[string]interface{}{}
		for k, v := range rec.data.links {
			side.Links[k] = v
		}
		side.CPU = &cpuLoad{Max: rec.data.cpuMax, Peak: rec.data.cpuPeak, Total: rec.data.cpuTot, OK: rec.data.cpuOK, StallMs: rec.data.stall}
	}
	return writeJSON(base+".run.json", side)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// writeOutputs writes everything but the raw runs: CSV tables, the
// outcome JSON, plots, the analysis report and report.md.
func writeOutputs(o *Outcome, p *Plan) error {
	if err := writeRunsCSV(o, p); err != nil {
		return err
	}
	if err := writeChecksCSV(o); err != nil {
		return err
	}
	plots, perr := makePlots(o, p)
	anaDir, aerr := analysisReport(o)
	if err := writeJSON(filepath.Join(o.Dir, "outcome.json"), o); err != nil {
		return err
	}
	if err := writeReport(o, p, plots, anaDir, firstErr(perr, aerr)); err != nil {
		return err
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// writeRunsCSV writes one row per run: parameters, status, metrics.
func writeRunsCSV(o *Outcome, p *Plan) error {
	cols := map[string]bool{}
	for _, r := range o.Runs {
		for k := range r.Metrics {
			cols[k] = true
		}
	}
	names := make([]string, 0, len(cols))
	for k := range cols {
		names = append(names, k)
	}
	sort.Strings(names)
	f, err := os.Create(filepath.Join(o.Dir, "runs.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	head := []string{"run", "scenario"}
	for _, pr := range p.Suite.Params {
		head = append(head, pr.Name)
	}
	head = append(head, "rep", "attempt", "status", "seconds", "invalid", "error")
	w.Write(append(head, names...))
	for _, r := range o.Runs {
		row := []string{r.ID, r.Scenario}
		for _, pr := range p.Suite.Params {
			row = append(row, r.Labels[pr.Name])
		}
		row = append(row, fmt.Sprint(r.Rep), fmt.Sprint(r.Attempt), r.Status(), fmt.Sprintf("%.1f", r.Seconds),
			joinList(r.Invalid), r.Error)
		for _, n := range names {
			if v, ok := r.Metrics[n]; ok {
				row = append(row, fmt.Sprintf("%.6g", v))
			} else {
				row = append(row, "")
			}
		}
		w.Write(row)
	}
	w.Flush()
	return w.Error()
}

func joinList(l []string) string {
	s := ""
	for i, x := range l {
		if i > 0 {
			s += "; "
		}
		s += x
	}
	return s
}

func writeChecksCSV(o *Outcome) error {
	f, err := os.Create(filepath.Join(o.Dir, "checks.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write([]string{"id", "class", "status", "gating", "title", "measured", "expect", "paper", "reason"})
	for _, c := range o.Checks {
		w.Write([]string{c.ID, c.Class, c.Status, fmt.Sprint(c.Gating), c.Title, c.Measured, c.Expect, c.Paper, c.Reason})
	}
	w.Flush()
	return w.Error()
}
