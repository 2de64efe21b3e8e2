package report

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/emuctl/emuctl/analysis"
	"gonum.org/v1/plot"
)

// Options control a report.
type Options struct {
	// Title heads the report (default "emuctl report: <dir>").
	Title string
	// WarmupS is passed to the summaries (see analysis.Options).
	WarmupS float64
	// Level is the confidence level of intervals (default 0.95).
	Level float64
	// NoRunPlots skips the per-run plots (throughput, cwnd, RTT CDF),
	// which dominate the time for directories with many runs.
	NoRunPlots bool
}

// Output lists what Generate wrote.
type Output struct {
	Markdown, HTML string
	Tables, Plots  []string
	Runs           int
}

// run is one loaded result with its label and summary.
type run struct {
	label string
	path  string
	res   *analysis.Result
	sum   analysis.RunSummary
}

// Generate reads every result under dir and writes report.md,
// report.html, tables/ and plots/ into out (created if needed).
func Generate(dir, out string, o Options) (*Output, error) {
	if o.Level == 0 {
		o.Level = 0.95
	}
	loaded, err := analysis.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	if len(loaded) == 0 {
		return nil, fmt.Errorf("%s: no result files (*.json with \"version\": %d and \"flows\")", dir, analysis.Version)
	}
	runs := make([]run, len(loaded))
	for i, l := range loaded {
		label, _ := filepath.Rel(dir, l.Path)
		label = strings.TrimSuffix(label, ".json")
		runs[i] = run{label: label, path: l.Path, res: l.Result,
			sum: l.Result.Summarise(analysis.Options{WarmupS: o.WarmupS})}
	}
	if o.Title == "" {
		o.Title = "emuctl report: " + filepath.Base(filepath.Clean(dir))
	}
	b := &builder{out: out, opt: o, doc: &document{title: o.Title}, runs: runs, res: &Output{Runs: len(runs)}}
	for _, sub := range []string{"tables", "plots"} {
		if err := os.MkdirAll(filepath.Join(out, sub), 0o755); err != nil {
			return nil, err
		}
	}
	// what a person looks at first: the plots (across repetitions, then
	// per run), then the tables
	steps := []func() error{b.repetitions, b.perRun, b.overview, b.acks, b.conditions, b.definitions}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	if err := b.writeTables(); err != nil {
		return nil, err
	}
	b.res.Markdown = filepath.Join(out, "report.md")
	b.res.HTML = filepath.Join(out, "report.html")
	for path, render := range map[string]func(*os.File) error{
		b.res.Markdown: func(f *os.File) error { return b.doc.markdown(f) },
		b.res.HTML:     func(f *os.File) error { return b.doc.html(f) },
	} {
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		err = render(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	return b.res, nil
}

type builder struct {
	out  string
	opt  Options
	doc  *document
	runs []run
	res  *Output
}

func (b *builder) labels() []string {
	l := make([]string, len(b.runs))
	for i, r := range b.runs {
		l[i] = r.label
	}
	return l
}

func (b *builder) sums() []analysis.RunSummary {
	s := make([]analysis.RunSummary, len(b.runs))
	for i, r := range b.runs {
		s[i] = r.sum
	}
	return s
}

func (b *builder) plot(name, caption string, p *plot.Plot, err error) error {
	if err != nil {
		return fmt.Errorf("plot %s: %w", name, err)
	}
	files, err := analysis.SavePlot(p, filepath.Join(b.out, "plots", name))
	if err != nil {
		return err
	}
	b.res.Plots = append(b.res.Plots, files...)
	b.doc.fig(name, caption)
	return nil
}

// overview: the runs, per-run aggregates, flows and probes.
func (b *builder) overview() error {
	d := b.doc
	d.h(1, "Runs")
	runs := &analysis.Table{Title: "Result files", Columns: []analysis.Column{
		{Key: "run", Header: "run"}, {Key: "scenario", Header: "scenario"}, {Key: "repetition", Header: "rep"},
		{Key: "engine", Header: "engine"}, {Key: "lab", Header: "lab"}, {Key: "start", Header: "start (UTC)"},
		{Key: "duration_s", Header: "duration", Unit: "s"}, {Key: "flows", Header: "flows"}, {Key: "probes", Header: "probes"},
	}}
	for _, r := range b.runs {
		var rep any
		if r.res.Repetition > 0 {
			rep = r.res.Repetition
		}
		start := ""
		if !r.res.Start.IsZero() {
			start = r.res.Start.UTC().Format("2006-01-02 15:04:05")
		}
		runs.AddRow(r.label, r.res.Scenario, rep, r.res.Engine, r.res.Lab, start, r.res.DurationS, len(r.res.Flows), len(r.res.Probes))
	}
	d.table("runs", runs)
	w := b.opt.WarmupS
	if w == 0 {
		w = analysis.DefaultWarmupS
	}
	d.p(fmt.Sprintf("Goodput is application bytes delivered to the receiver per second. \"Steady\" windows leave out the first %g s of each flow; aggregates and Jain's index use the window in which all flows of a run are active and past that warm-up; Jain's index compares the run's TCP and MPTCP flows (its UDP flows when it has no TCP), never a probe or a paced UDP flow with a bulk transfer. Utilisation is steady goodput over the bottleneck's capacity R × payload/frame (R × 1448/1514 for TCP with timestamps).", w))
	d.table("run-summary", analysis.RunTable("Per-run aggregate (common steady-state window)", b.labels(), b.sums()))
	d.table("flows", analysis.FlowTable("Per-flow metrics", b.labels(), b.sums()))
	d.table("probes", analysis.ProbeTable("Latency probes (steady state)", b.labels(), b.sums()))
	return nil
}

// repetitions: statistics across runs of a scenario, ratios to the first
// scenario, and bar charts with confidence intervals.
func (b *builder) repetitions() error {
	var results []*analysis.Result
	for _, r := range b.runs {
		results = append(results, r.res)
	}
	scen := analysis.GroupScenarios(b.labels(), results, b.sums())
	repeated := false
	for _, s := range scen {
		if len(s.Runs) >= 2 {
			repeated = true
		}
	}
	if !repeated {
		return nil
	}
	d := b.doc
	lvl := b.opt.Level
	d.h(1, "Repetitions")
	text := fmt.Sprintf("Mean, median, sample standard deviation and the %g %% Student-t confidence interval of the mean across the runs of each scenario (runs with the same \"scenario\").", lvl*100)
	if len(scen) >= 2 {
		text += fmt.Sprintf(" Ratios compare each scenario with the first (%q); their intervals use the delta method on the log ratio with Welch degrees of freedom.", scen[0].Name)
	}
	d.p(text)
	for _, m := range analysis.StandardMetrics {
		var bars []analysis.Bar
		for _, s := range scen {
			if v := s.Values(m); len(v) > 0 {
				bars = append(bars, analysis.Bar{Name: s.Name, Stat: analysis.Repetitions(v, lvl)})
			}
		}
		if len(bars) == 0 {
			continue
		}
		y := m.Header
		if m.Unit != "" {
			y += " (" + m.Unit + ")"
		}
		p, err := analysis.BarPlot(m.Header+" per scenario", y, bars)
		if err := b.plot("bars-"+m.Key, m.Header+" per scenario, mean with confidence interval", p, err); err != nil {
			return err
		}
	}
	d.table("repetitions", analysis.RepetitionTable("Across repetitions", scen, analysis.StandardMetrics, lvl))
	if len(scen) >= 2 {
		d.table("ratios", analysis.RatioTable("Ratio to the baseline scenario", scen, analysis.StandardMetrics, lvl))
	}
	return nil
}

// perRun: throughput, cwnd and RTT CDF plots of each run.
func (b *builder) perRun() error {
	if b.opt.NoRunPlots {
		return nil
	}
	d := b.doc
	d.h(1, "Per-run plots")
	for i, r := range b.runs {
		d.h(2, r.label)
		slug := fmt.Sprintf("run%03d", i+1)
		if hasSamples(r.res) {
			p, err := analysis.ThroughputPlot(r.res, "Goodput: "+r.label)
			if err := b.plot(slug+"-goodput", "Goodput vs time per flow", p, err); err != nil {
				return err
			}
		}
		if hasTCP(r.res) {
			p, err := analysis.CwndPlot(r.res, "cwnd: "+r.label, false)
			if err := b.plot(slug+"-cwnd", "Congestion window vs time (segments)", p, err); err != nil {
				return err
			}
		}
		if series := rttSeries(r.res); len(series) > 0 {
			p, err := analysis.CDFPlot("RTT CDF: "+r.label, "RTT (ms)", series)
			if err := b.plot(slug+"-rtt-cdf", "RTT CDF (srtt per flow and probe RTT, whole run)", p, err); err != nil {
				return err
			}
		}
	}
	return nil
}

func hasSamples(r *analysis.Result) bool {
	for _, f := range r.Flows {
		if len(f.Samples) > 0 {
			return true
		}
	}
	return false
}

func hasTCP(r *analysis.Result) bool {
	for _, f := range r.Flows {
		for _, s := range f.Samples {
			if s.TCP != nil || len(s.Subflows) > 0 {
				return true
			}
		}
	}
	return false
}

func rttSeries(r *analysis.Result) []analysis.Series {
	var out []analysis.Series
	for i := range r.Flows {
		f := &r.Flows[i]
		if v := analysis.SRTTsMs(f, analysis.WholeRun(f)); len(v) > 0 {
			out = append(out, analysis.Series{Name: "srtt " + f.ID, Values: v})
		}
		sub := analysis.SubflowSRTTsMs(f, analysis.WholeRun(f))
		ids := make([]string, 0, len(sub))
		for id := range sub {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			out = append(out, analysis.Series{Name: "srtt " + f.ID + "/" + id, Values: sub[id]})
		}
	}
	for i := range r.Probes {
		p := &r.Probes[i]
		if v := analysis.ProbeRTTsMs(p, analysis.ProbeSpan(p)); len(v) > 0 {
			out = append(out, analysis.Series{Name: "probe " + p.ID, Values: v})
		}
	}
	return out
}
