package suite

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/emuctl/emuctl/analysis"
)

// refColumn is the reference engine's column in the check table: its
// value for the check, whether the check's expectation holds there, or
// — when the engine could not run — how to get it.
func refColumn(o *Outcome, c *CheckResult) string {
	ro := o.Reference
	switch {
	case c.Class == Fidelity:
		return ""
	case ro.Status == "unavailable":
		if c.Class == Reference {
			return "not run: `" + ro.Hint + "`"
		}
		return ""
	case ro.Status != "ran":
		if c.Class == Reference {
			return "not run (see below)"
		}
		return ""
	case c.Reference == nil:
		return "—"
	}
	s := c.Reference.Measured
	yes, no := "holds", "does not hold" // the study's claim, or the suite's expectation
	if c.Class != Reference {
		yes, no = "pass", "fail"
	}
	if h := c.Reference.Holds; h != nil {
		switch {
		case *h:
			s += " (" + yes + ")"
		case c.Reference.HoldsIn > 0:
			s += fmt.Sprintf(" (%s in %d of %d)", yes, c.Reference.HoldsIn, c.Reference.Judged)
		default:
			s += " (**" + no + "**)"
		}
	}
	return s
}

// referenceSection says how the engine ran and, for every row the suite
// explains (reference.<engine>.differs) or that carries the study's
// value, puts Linux, the engine and the paper side by side with what
// differs.
func referenceSection(b *strings.Builder, o *Outcome) {
	ro := o.Reference
	name := EngineName(ro.Engine)
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## %s beside Linux\n\n", name)
	switch ro.Status {
	case "unavailable":
		w("%s did not run: %s. Install it (`%s`; Debian/Ubuntu, ns-3 3.37) and run again with `--reference %s`: the %s column then holds its values.\n\n",
			name, ro.Reason, ro.Hint, ro.Engine, name)
		return
	case "failed":
		w("%s did not run: %s\n\n", name, cell(ro.Reason))
		return
	}
	failed := 0
	for _, r := range ro.Runs {
		if r.Error != "" || r.Interrupted {
			failed++
		}
	}
	w("`validate/ns3/%s.cc`, emuctl's own ns-3 3.37 program (Debian's libns3-dev), `%s`: %d runs (%d failed) of the scenarios it stands for, %.1f s wall (%.1f s of CPU, %d at a time)",
		ro.Program, ro.Bin, len(ro.Runs), failed, ro.Seconds, ro.CPUSeconds, ro.Parallel)
	if ro.Skipped > 0 {
		w("; %d more repetitions not run: their scenario's first run was deterministic (nothing random in it, so every seed repeats it)", ro.Skipped)
	}
	if ro.Built {
		w("; built for this run in %.0f s", ro.BuildSeconds)
	}
	args := ""
	if ro.spec != nil {
		args = strings.Join(ro.spec.Args, " ")
	}
	w(". Flags per scenario: `%s`, and from the runner the profile's `--time`, `--warmup`, `--interval`, the suite's `--seed` and the repetition as `--run` (every run's in `outcome.json`). %s values are medians over its repetitions",
		args, name)
	if ro.spec != nil && ro.spec.Reps > 0 {
		w(" (at least %d per scenario: a simulation costs little, and more seeds steady the medians)", ro.spec.Reps)
	}
	w(", judged with the suite's own expressions.\n\n")
	if ro.Note != "" {
		w("%s\n\n", strings.TrimSpace(ro.Note))
	}
	if failed > 0 {
		w("First failure: %s\n\n", cell(firstLine(ro.Reason)))
	}
	var rows []string
	for _, c := range o.Checks {
		if c.Reference == nil || c.Reference.Differs == "" && c.Paper == "" {
			continue
		}
		linux := unitText(c.Measured, "")
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s |", c.ID, cell(c.Title), cell(linux),
			cell(c.Reference.Measured), cell(c.Paper), agreement(c, name), cell(c.Reference.Differs)))
	}
	if len(rows) == 0 {
		return
	}
	w("| ID | check | Linux | %s | paper | reproduces the study | what differs (measured) |\n|---|---|---|---|---|---|---|\n", name)
	w("%s\n\n", strings.Join(rows, "\n"))
}

// agreement says which of Linux and the engine reproduce a claim, on
// the scenarios both measured (Linux's items where the engine has one).
func agreement(c *CheckResult, engine string) string {
	rc := c.Reference
	if rc.Holds == nil {
		return ""
	}
	where := map[string]bool{}
	for _, it := range rc.items {
		where[it.Where] = true
	}
	decided, failed := 0, 0
	for _, it := range c.Items {
		if where[it.Where] && it.OK != nil {
			decided++
			if !*it.OK {
				failed++
			}
		}
	}
	if decided == 0 {
		return ""
	}
	linux, ref := failed == 0, *rc.Holds
	switch {
	case ref && !linux:
		return engine + ", not Linux"
	case !ref && linux:
		return "Linux, not " + engine
	case ref:
		return "both"
	}
	return "neither"
}

// refScenarioMedians are the engine's medians per scenario and metric,
// for the scenario table's engine columns.
func refScenarioMedians(o *Outcome) map[string]map[string]float64 {
	if o.Reference == nil || o.Reference.Status != "ran" {
		return nil
	}
	vals := map[string]map[string][]float64{}
	for _, r := range o.Reference.Runs {
		if !r.Valid() {
			continue
		}
		if vals[r.Scenario] == nil {
			vals[r.Scenario] = map[string][]float64{}
		}
		for k, v := range r.Metrics {
			vals[r.Scenario][k] = append(vals[r.Scenario][k], v)
		}
	}
	out := map[string]map[string]float64{}
	for sc, m := range vals {
		out[sc] = map[string]float64{}
		for k, v := range m {
			out[sc][k] = analysis.Median(v)
		}
	}
	return out
}

// referenceFiles is the report's line about the engine's raw results.
func referenceFiles(o *Outcome) string {
	if o.Reference == nil || len(o.Reference.Runs) == 0 {
		return ""
	}
	return fmt.Sprintf("- `%s/*.json`: the %s program's JSON line per run (`outcome.json`'s `reference` has every run's converted metrics)\n",
		filepath.Base(o.Reference.Engine), EngineName(o.Reference.Engine))
}
