package suite

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/internal/mdhtml"
	"github.com/emuctl/emuctl/suite/expr"
)

// reportColumns are the scenario-table metrics, in order, when present.
var reportColumns = []struct{ name, head string }{
	{"goodput", "goodput (Mbit/s)"}, {"srtt", "srtt (ms)"}, {"retrans", "retrans"}, {"rtos", "RTOs"},
	{"recovery_mean", "recovery (ms)"}, {"subflows", "subflows"}, {"jain", "Jain"}, {"probe_rtt_p95", "probe p95 (ms)"},
	{"jitter", "jitter (ms)"}, {"udp_loss", "UDP loss"}, {"cpu_total", "CPU"},
}

var statusMark = map[string]string{StatusPass: "PASS", StatusFail: "**FAIL**", StatusSkip: "skip", StatusNA: "n/a",
	StatusInfo: "ref", StatusInvalid: "INVALID runs"}

// writeReport writes report.md.
func writeReport(o *Outcome, p *Plan, figs []figure, anaDir string, plotErr error) error {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# %s — %s\n\n", o.Suite, o.Title)
	w("**Verdict: %s** — %s\n\n", strings.ToUpper(o.Verdict), tally(o))
	w("`emuctl test %s%s` · profile **%s** (%v flows, %d repetition(s), %d scenarios, %d runs, seed %d) · %s · took %s · kernel %s, %s CPUs\n\n",
		o.Suite, profileFlag(o.Profile.Name), o.Profile.Name, o.Profile.Duration, o.Profile.Reps, len(p.Scenarios), len(o.Runs),
		o.Seed, o.Started.Format(time.RFC3339), clock(o.Finished.Sub(o.Started)), o.Conditions["kernel"], o.Conditions["cpus"])
	if o.Interrupted {
		w("> Interrupted (Ctrl-C): the table judges the %d runs made before the stop.\n\n", len(o.Runs))
	}
	if len(o.Media) > 0 {
		w("**What carried the scenarios:**\n\n%s\n", mediaText(o.Media))
	}
	w("%s\n", howToRead)
	if o.Reference != nil {
		w("## Checks\n\n| result | ID | class | check | measured (Linux) | %s | expected | paper |\n|---|---|---|---|---|---|---|---|\n",
			EngineName(o.Reference.Engine))
	} else {
		w("## Checks\n\n| result | ID | class | check | measured | expected | paper |\n|---|---|---|---|---|---|---|\n")
	}
	for _, c := range o.Checks {
		mark := statusMark[c.Status]
		if c.Holds != nil {
			mark = holdsText(c)
		}
		exp := ""
		if c.Expect != "" {
			exp = "`" + c.Expect + "`"
		}
		meas := c.Measured
		if c.Reason != "" && (c.Status == StatusSkip || c.Status == StatusNA) {
			meas = c.Reason
		}
		meas = cell(meas)
		if o.Reference != nil {
			meas += " | " + cell(refColumn(o, c)) // the engine's column
		}
		w("| %s | %s | %s | %s | %s | %s | %s |\n", mark, c.ID, c.Class, cell(c.Title), meas, cell(exp), cell(c.Paper))
	}
	w("\n")
	if o.Reference != nil {
		referenceSection(&b, o)
	}
	details(&b, o)
	// the checks, then the plots, then the tables behind them
	if len(figs) > 0 || plotErr != nil {
		w("## Plots\n\n")
		for _, f := range figs {
			w("![%s](%s)\n\n", f.Title, f.PNG)
		}
		if plotErr != nil {
			w("(plotting failed: %v)\n\n", plotErr)
		}
	}
	scenarioTable(&b, o, p)
	limitedTable(&b, o, p)
	wifiTables(&b, o, p)
	runTable(&b, o)
	w("## The study and this reproduction\n\n")
	if p.Suite.Source != "" {
		w("Source: %s\n\n", p.Suite.Source)
	}
	if p.Suite.Study != "" {
		w("%s\n\n", strings.TrimSpace(p.Suite.Study))
	}
	if len(o.Notes) > 0 {
		w("What differs from the study:\n\n")
		for _, n := range o.Notes {
			w("- %s\n", n)
		}
		w("\n")
	}
	conditionsTable(&b, o)
	w("## Files\n\n- `runs/*.json`: raw results (one per run, `emuctl report` reads them); `runs/*.run.json`: validity, link-engine counters, CPU\n- `runs.csv`: one row per run; `checks.csv`, `outcome.json`: the checks (`--json` prints the outcome)\n")
	b.WriteString(referenceFiles(o))
	if anaDir != "" {
		w("- `%s/report.md`: the full analysis report (per-flow tables, repetitions with 95 %% CIs, conditions of every run)\n", anaDir)
	}
	if len(figs) > 0 {
		w("- `plots/`: every figure as SVG and PNG\n")
	}
	w("- `report.html`: this report as a page (`emuctl report DIR --ui` serves it with the rest)\n")
	md := []byte(b.String())
	if err := os.WriteFile(filepath.Join(o.Dir, "report.md"), md, 0o644); err != nil {
		return err
	}
	nav := `emuctl test ` + html.EscapeString(o.Suite)
	if anaDir != "" {
		nav += ` · <a href="` + html.EscapeString(anaDir) + `/report.html">the analysis report (every run's tables and plots)</a>`
	}
	return os.WriteFile(filepath.Join(o.Dir, "report.html"), mdhtml.Page(md, "", nav), 0o644)
}

const howToRead = `How to read this: **physics** checks hold for any correct emulator (goodput within capacity, RTT floor, queue bound, loss rate) — a failure means an emulator bug or an overloaded host; **fidelity** checks judge each run (CPU headroom, host stalls, link-engine timing, settings read back) and a failure makes that run *invalid*: it is left out of every other check and made again once; **behaviour** checks are what the study is about, on mainline Linux; **reference** rows put the study's own numbers beside ours and never gate. The exit code is non-zero when a physics or behaviour check fails. Scenario-level values are medians over the valid repetitions.
`

func profileFlag(p string) string {
	if p == "default" {
		return ""
	}
	return " --" + p
}

// tally counts outcomes per class for the verdict line.
func tally(o *Outcome) string {
	count := func(class string) (pass, fail, other int) {
		for _, c := range o.Checks {
			if c.Class != class {
				continue
			}
			switch c.Status {
			case StatusPass:
				pass++
			case StatusFail:
				fail++
			default:
				other++
			}
		}
		return
	}
	var parts []string
	for _, cl := range []string{Physics, Behaviour} {
		p, f, x := count(cl)
		s := fmt.Sprintf("%s %d/%d passed", cl, p, p+f)
		if x > 0 {
			s += fmt.Sprintf(" (%d not judged)", x)
		}
		parts = append(parts, s)
	}
	invalid, errs := 0, 0
	for _, r := range o.Runs {
		switch r.Status() {
		case "invalid":
			invalid++
		case "error":
			errs++
		}
	}
	parts = append(parts, fmt.Sprintf("fidelity: %d of %d runs invalid", invalid, len(o.Runs)))
	if errs > 0 {
		parts = append(parts, fmt.Sprintf("**%d runs failed**", errs))
	}
	refs, holds := 0, 0
	for _, c := range o.Checks {
		if c.Class == Reference {
			refs++
			if c.Holds != nil && *c.Holds {
				holds++
			}
		}
	}
	parts = append(parts, fmt.Sprintf("%d reference values beside the study's", refs))
	return strings.Join(parts, "; ")
}

func cell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ") }

// details lists the items of checks that have several, failing ones first.
func details(b *strings.Builder, o *Outcome) {
	var rows []string
	for _, c := range o.Checks {
		if len(c.Items) < 2 && c.Status != StatusFail {
			continue
		}
		for _, it := range c.Items {
			res := "n/a"
			if it.OK != nil {
				res = map[bool]string{true: "ok", false: "**fails**"}[*it.OK]
			}
			if it.OK != nil && *it.OK && (c.Class == Fidelity || c.PerRun) {
				continue // many runs: only the failures are details
			}
			v := unitText(it.Value, c.Unit)
			if it.Reason != "" {
				v += " (" + it.Reason + ")"
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s |", c.ID, cell(it.Where), cell(v), res))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("### Check details\n\n| ID | where | value | |\n|---|---|---|---|\n" + strings.Join(rows, "\n") + "\n\n")
}

// scenarioTable prints medians per scenario.
func scenarioTable(b *strings.Builder, o *Outcome, p *Plan) {
	var cols []int
	ref := refScenarioMedians(o) // scenario → metric → the engine's median
	refCol := map[int]bool{}
	for i, c := range reportColumns {
		for _, r := range o.Runs {
			if _, ok := r.Metrics[c.name]; ok && r.Valid() {
				cols = append(cols, i)
				break
			}
		}
		for _, m := range ref {
			if _, ok := m[c.name]; ok && slices.Contains(cols, i) {
				refCol[i] = true
			}
		}
	}
	b.WriteString("## Scenarios (medians over valid runs)\n\n| scenario | valid runs |")
	ncols := len(cols)
	for _, i := range cols {
		b.WriteString(" " + reportColumns[i].head + " |")
		if refCol[i] {
			b.WriteString(" " + EngineName(o.Reference.Engine) + " |")
			ncols++
		}
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", ncols) + "\n")
	for _, sc := range p.Scenarios {
		runs := validRuns(o, sc.Name)
		fmt.Fprintf(b, "| %s | %d |", sc.Name, len(runs))
		for _, i := range cols {
			var vals []float64
			for _, r := range runs {
				if v, ok := r.Metrics[reportColumns[i].name]; ok {
					vals = append(vals, v)
				}
			}
			s := "—"
			if len(vals) > 0 {
				s = expr.FmtNum(analysis.Median(vals))
				if reportColumns[i].name == "cpu_total" || reportColumns[i].name == "udp_loss" {
					s = fmtPct(analysis.Median(vals))
				}
			}
			b.WriteString(" " + s + " |")
			if refCol[i] {
				s = "—"
				if v, ok := ref[sc.Name][reportColumns[i].name]; ok {
					s = expr.FmtNum(v)
					if reportColumns[i].name == "udp_loss" {
						s = fmtPct(v)
					}
				}
				b.WriteString(" " + s + " |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func runTable(b *strings.Builder, o *Outcome) {
	b.WriteString("## Runs (in the order made)\n\n| run | status | seconds | summary |\n|---|---|---|---|\n")
	for _, r := range o.Runs {
		fmt.Fprintf(b, "| %s | %s | %.1f | %s |\n", r.ID, r.Status(), r.Seconds, cell(runLine(r)))
	}
	b.WriteString("\n")
}

func conditionsTable(b *strings.Builder, o *Outcome) {
	keys := make([]string, 0, len(o.Conditions))
	for k := range o.Conditions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString("## Conditions\n\n| | |\n|---|---|\n")
	fmt.Fprintf(b, "| profile | %s: duration %v, warm-up %v, sampling %v, %d repetition(s), retry_invalid %d |\n",
		o.Profile.Name, o.Profile.Duration, o.Profile.Warmup, o.Profile.Interval, o.Profile.Reps, o.Profile.RetryInvalid)
	for _, k := range keys {
		fmt.Fprintf(b, "| %s | %s |\n", k, cell(o.Conditions[k]))
	}
	b.WriteString("\nEvery run's own conditions (sysctls of each endpoint, offloads, link parameters and backends, counters) are in its raw result and in the analysis report.\n\n")
}

// holdsText says whether a reference claim holds here, and where.
func holdsText(c *CheckResult) string {
	switch {
	case *c.Holds && c.Judged > 1:
		return fmt.Sprintf("ref: holds (%d/%d)", c.HoldsIn, c.Judged)
	case *c.Holds:
		return "ref: holds"
	case c.HoldsIn > 0:
		return fmt.Sprintf("ref: holds in %d of %d", c.HoldsIn, c.Judged)
	}
	return "ref: **does not hold**"
}
