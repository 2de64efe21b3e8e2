package suite

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/analysis/report"
	"github.com/emuctl/emuctl/suite/expr"
	"gonum.org/v1/plot"
)

// figure is one written plot.
type figure struct {
	Title string
	PNG   string // relative to the outcome's directory
	SVG   string
}

// makePlots draws the suite's plots from the valid runs.
func makePlots(o *Outcome, p *Plan) ([]figure, error) {
	plots := p.Suite.Plots
	if len(plots) == 0 {
		e, _ := expr.Parse("goodput")
		plots = []*Plot{{Kind: "bars", Metric: e, Title: "Steady goodput per scenario", Unit: "Mbit/s"}}
	}
	var out []figure
	var firstErr error
	for i, pl := range plots {
		figs, err := drawPlot(o, p, pl, i)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("plot %d (%s): %w", i, pl.Kind, err)
		}
		out = append(out, figs...)
	}
	return out, firstErr
}

// shortName is a scenario's labels joined by "/", for axis ticks.
func shortName(p *Plan, sc *Scenario) string {
	var parts []string
	for _, pr := range p.Suite.Params {
		parts = append(parts, sc.Labels[pr.Name])
	}
	if len(parts) == 0 {
		return "base"
	}
	return strings.Join(parts, "/")
}

func validRuns(o *Outcome, scen string) []*RunRecord {
	var out []*RunRecord
	for _, r := range o.Runs {
		if r.Scenario == scen && r.Valid() {
			out = append(out, r)
		}
	}
	return out
}

func drawPlot(o *Outcome, p *Plan, pl *Plot, i int) ([]figure, error) {
	var scens []*Scenario
	for _, sc := range p.Scenarios {
		if pl.Where.matches(sc.Labels) {
			scens = append(scens, sc)
		}
	}
	base := fmt.Sprintf("%02d-%s", i+1, pl.Kind)
	switch pl.Kind {
	case "bars":
		var bars []analysis.Bar
		for _, sc := range scens {
			var vals []float64
			for _, r := range validRuns(o, sc.Name) {
				if v, err := pl.Metric.Eval(runEnv{sc: sc, rec: r}); err == nil && !v.IsStr {
					vals = append(vals, v.Num)
				}
			}
			if len(vals) > 0 {
				bars = append(bars, analysis.Bar{Name: shortName(p, sc), Stat: analysis.Repetitions(vals, 0.95)})
			}
		}
		if len(bars) == 0 {
			return nil, nil
		}
		y := pl.Metric.String()
		if pl.Unit != "" {
			y += " (" + pl.Unit + ")"
		}
		title := pl.Title
		if title == "" {
			title = y
		}
		fig, err := analysis.BarPlot(title+" — "+paramAxis(p), y, bars)
		if err != nil {
			return nil, err
		}
		return save(o, fig, base+"-"+slug(pl.Metric.String()), title)
	case "goodput", "cwnd":
		var out []figure
		for _, sc := range scens {
			runs := validRuns(o, sc.Name)
			if len(runs) == 0 {
				continue
			}
			title := fmt.Sprintf("%s (%s, run %s)", map[string]string{"goodput": "Goodput", "cwnd": "Congestion window"}[pl.Kind], sc.Name, runs[0].ID)
			var fig *plot.Plot
			var err error
			if pl.Kind == "goodput" {
				fig, err = analysis.ThroughputPlot(runs[0].data.res, title)
			} else {
				fig, err = analysis.CwndPlot(runs[0].data.res, title, true)
			}
			if err != nil {
				return out, err
			}
			f, err := save(o, fig, base+"-"+runs[0].ID, title)
			if err != nil {
				return out, err
			}
			out = append(out, f...)
		}
		return out, nil
	case "rtt_cdf":
		var series []analysis.Series
		for _, sc := range scens {
			var vals []float64
			for _, r := range validRuns(o, sc.Name) {
				for j := range r.data.res.Probes {
					pr := &r.data.res.Probes[j]
					w := analysis.ProbeSpan(pr)
					w.FromS += p.Profile.Warmup.Seconds()
					vals = append(vals, analysis.ProbeRTTsMs(pr, w)...)
				}
			}
			if len(vals) > 0 {
				series = append(series, analysis.Series{Name: shortName(p, sc), Values: vals})
			}
		}
		if len(series) == 0 {
			return nil, nil
		}
		title := orDefault(pl.Title, "Probe RTT under load")
		fig, err := analysis.CDFPlot(title, "probe RTT (ms)", series)
		if err != nil {
			return nil, err
		}
		return save(o, fig, base, title)
	case "tack":
		return tackPlot(o, p, pl, scens, base)
	}
	return nil, nil
}

// paramAxis names the parameters in the order short names list them.
func paramAxis(p *Plan) string {
	var n []string
	for _, pr := range p.Suite.Params {
		n = append(n, pr.Name)
	}
	return strings.Join(n, "/")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// tackPlot draws Fig. 22(b) — ACK frequency vs bandwidth for several
// RTT_min — with each valid run's measured receiver ACK rate on top.
func tackPlot(o *Outcome, p *Plan, pl *Plot, scens []*Scenario, base string) ([]figure, error) {
	bws := analysis.LogSpace(0.001e6, 3000e6, 60)
	sw := analysis.SweepBw([]float64{0.001, 0.010, 0.080, 0.200, 0.400}, bws, analysis.DefaultTACK)
	var meas []analysis.Measured
	for _, sc := range scens {
		for _, r := range validRuns(o, sc.Name) {
			for _, f := range r.data.res.Flows {
				if f.Proto == "udp" {
					continue
				}
				g, err1 := r.data.metric("goodput", f.ID)
				a, err2 := r.data.metric("ack_rate", f.ID)
				if err1 == nil && err2 == nil {
					meas = append(meas, analysis.Measured{Name: shortName(p, sc), X: g.Num, Hz: a.Num})
				}
			}
		}
	}
	title := orDefault(pl.Title, "TACK model (Fig. 22b) and measured Linux ACK rates")
	fig, err := analysis.TACKPlot(sw, title, meas)
	if err != nil {
		return nil, err
	}
	return save(o, fig, base, title)
}

func save(o *Outcome, fig *plot.Plot, base, title string) ([]figure, error) {
	paths, err := analysis.SavePlot(fig, filepath.Join(o.Dir, "plots", base))
	if err != nil {
		return nil, err
	}
	f := figure{Title: title}
	for _, pth := range paths {
		rel, _ := filepath.Rel(o.Dir, pth)
		if strings.HasSuffix(pth, ".png") {
			f.PNG = rel
		} else {
			f.SVG = rel
		}
	}
	return []figure{f}, nil
}

func slug(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
			b.WriteRune(c)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// analysisReport runs `emuctl report` on the raw runs into analysis/.
func analysisReport(o *Outcome) (string, error) {
	dir := filepath.Join(o.Dir, "analysis")
	has := false
	for _, r := range o.Runs {
		if r.File != "" {
			has = true
		}
	}
	if !has {
		return "", nil
	}
	_, err := report.Generate(filepath.Join(o.Dir, "runs"), dir, report.Options{
		Title: "emuctl report: " + o.Suite + " (" + o.Profile.Name + ")", WarmupS: o.Profile.Warmup.Seconds(), NoRunPlots: true})
	if err != nil {
		return "", err
	}
	return "analysis", nil
}
