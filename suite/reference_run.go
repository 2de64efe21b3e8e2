package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/emuctl/emuctl/suite/expr"
	"github.com/emuctl/emuctl/validate"
)

// RefOutcome is what a reference engine did in a suite run.
type RefOutcome struct {
	Engine  string `json:"engine"`
	Program string `json:"program"`
	// Status is ran, unavailable (the engine is not installed: Hint says
	// how to install it) or failed (the program did not build or run).
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	Hint   string `json:"hint,omitempty"`
	// Bin is the built program; Built says whether this run compiled it.
	Bin          string  `json:"bin,omitempty"`
	Built        bool    `json:"built,omitempty"`
	BuildSeconds float64 `json:"build_seconds,omitempty"`
	// Seconds is the wall time of the engine's runs (all of them, in
	// parallel on every core); CPUSeconds what they took together.
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	Parallel   int     `json:"parallel,omitempty"`
	// Skipped counts repetitions not run because the scenario's first run
	// was deterministic (no random loss: every seed repeats it).
	Skipped int `json:"skipped,omitempty"`
	// Args are each run's flags, by run ID.
	Args map[string][]string `json:"args,omitempty"`
	Runs []*RunRecord        `json:"runs,omitempty"`
	Note string              `json:"note,omitempty"`
	spec *RefSpec
}

// RefCheck is a check judged on a reference engine's runs.
type RefCheck struct {
	// Measured is the engine's value(s), as CheckResult.Measured; "" when
	// the engine measures nothing for the check.
	Measured string `json:"measured"`
	// Holds, HoldsIn, Judged: the check's expectation on the engine's runs.
	Holds   *bool `json:"holds,omitempty"`
	HoldsIn int   `json:"holds_in,omitempty"`
	Judged  int   `json:"judged,omitempty"`
	// Differs is the suite's explanation of what differs between Linux
	// and the engine for this check (reference.<engine>.differs).
	Differs string `json:"differs,omitempty"`
	items   []Item // the items judged (where the engine measured)
}

// prepareReference checks the engine and builds its program before any
// lab runs (a build takes ~10 s; its failure is reported, never fatal).
func (r *runner) prepareReference(ctx context.Context, engine string) *RefOutcome {
	spec := r.plan.Suite.Reference[engine]
	ro := &RefOutcome{Engine: engine, Program: spec.Program, Note: spec.Note, spec: spec}
	if err := validate.ProbeNS3(); err != nil {
		ro.Status, ro.Reason, ro.Hint = "unavailable", err.Error(), validate.NS3InstallHint
		r.say("%s reference: not available (%v); the report's %s column says so", EngineName(engine), err, EngineName(engine))
		return ro
	}
	t0 := time.Now()
	bin, built, err := validate.BuildNS3(ctx, spec.Program, validate.NS3BinDir())
	ro.BuildSeconds = time.Since(t0).Seconds()
	if err != nil {
		ro.Status, ro.Reason = "failed", "build: "+err.Error()
		r.say("%s reference: %s did not build: %v", EngineName(engine), spec.Program, firstLine(err.Error()))
		return ro
	}
	ro.Bin, ro.Built = bin, built
	if built {
		r.say("%s reference: built %s in %.0f s", EngineName(engine), bin, ro.BuildSeconds)
	}
	return ro
}

// runReference runs the engine's program once per covered scenario and
// repetition, every core busy, after the labs (the simulator would take
// the CPU the labs need). Each run's JSON line goes to <dir>/<engine>/.
func (r *runner) runReference(ctx context.Context, ro *RefOutcome) {
	if ro.Bin == "" {
		return
	}
	type refJob struct {
		sc   *Scenario
		rep  int
		args []string
	}
	prof := r.plan.Profile
	// Every scenario's first repetition comes first: a later one waits
	// for it and is skipped when it was deterministic.
	var jobs []refJob
	first := map[string]chan struct{}{}
	deterministic := map[string]bool{}
	var mu sync.Mutex
	for rep := 1; rep <= max(prof.Reps, ro.spec.Reps); rep++ {
		for _, sc := range r.plan.Scenarios {
			a, ok := sc.ReferenceArgs(ro.Engine)
			if !ok {
				continue
			}
			if rep == 1 {
				first[sc.Name] = make(chan struct{})
			}
			args := append(append([]string{}, a...),
				"--time="+secs(prof.Duration), "--warmup="+secs(prof.Warmup), "--interval="+secs(prof.Interval),
				fmt.Sprintf("--seed=%d", r.opt.Seed), fmt.Sprintf("--run=%d", rep))
			jobs = append(jobs, refJob{sc, rep, args})
		}
	}
	dir := filepath.Join(r.opt.Dir, ro.Engine)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		ro.Status, ro.Reason = "failed", err.Error()
		return
	}
	ro.Parallel = min(runtime.NumCPU(), max(1, len(jobs)))
	r.say("%s reference: up to %d runs of %s (%d at a time)", EngineName(ro.Engine), len(jobs), ro.Program, ro.Parallel)
	recs := make([]*RunRecord, len(jobs))
	ro.Args = map[string][]string{}
	for _, j := range jobs {
		ro.Args[ro.Engine+"-"+runID(j.sc, j.rep, 1)] = j.args
	}
	next := make(chan int)
	var wg sync.WaitGroup
	t0 := time.Now()
	for w := 0; w < ro.Parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				if j.rep > 1 {
					<-first[j.sc.Name]
					mu.Lock()
					skip := deterministic[j.sc.Name]
					if skip {
						ro.Skipped++
					}
					mu.Unlock()
					if skip {
						continue
					}
				}
				rec := &RunRecord{ID: ro.Engine + "-" + runID(j.sc, j.rep, 1), Scenario: j.sc.Name, Labels: j.sc.Labels,
					Rep: j.rep, Attempt: 1, Started: time.Now()}
				line, err := validate.RunNS3(ctx, ro.Bin, j.args)
				rec.Seconds = time.Since(rec.Started).Seconds()
				switch {
				case ctx.Err() != nil:
					rec.Interrupted = true
				case err != nil:
					rec.Error = err.Error()
				default:
					if rec.ref, err = parseRefResult(line); err != nil {
						rec.Error = err.Error()
					} else {
						rec.Metrics = refMetrics(rec.ref)
						rec.File = filepath.Join(ro.Engine, rec.ID+".json")
						if werr := os.WriteFile(filepath.Join(r.opt.Dir, rec.File), append(line, '\n'), 0o644); werr != nil {
							rec.Error = "writing results: " + werr.Error()
						}
					}
				}
				recs[i] = rec
				if j.rep == 1 {
					mu.Lock()
					deterministic[j.sc.Name] = rec.ref != nil && rec.ref.deterministic
					mu.Unlock()
					close(first[j.sc.Name])
				}
			}
		}()
	}
	for i := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	ro.Seconds = time.Since(t0).Seconds()
	failed := 0
	for _, rec := range recs {
		if rec == nil {
			continue
		}
		ro.Runs = append(ro.Runs, rec)
		if rec.ref != nil {
			ro.CPUSeconds += rec.ref.cpuS
		}
		if rec.Error != "" {
			failed++
			if ro.Reason == "" {
				ro.Reason = rec.Error
			}
		}
	}
	ro.Status = "ran"
	if failed == len(ro.Runs) && failed > 0 {
		ro.Status = "failed"
	}
	note := ""
	if ro.Skipped > 0 {
		note += fmt.Sprintf(", %d repetitions of deterministic scenarios skipped", ro.Skipped)
	}
	if failed > 0 {
		note += fmt.Sprintf(", %d failed: %s", failed, firstLine(ro.Reason))
	}
	r.say("%s reference: %d runs in %.1f s (%.1f s of CPU)%s", EngineName(ro.Engine), len(ro.Runs), ro.Seconds, ro.CPUSeconds, note)
}

// judgeReference judges every check but the fidelity ones on the
// engine's runs and attaches the results to the Linux checks.
func judgeReference(p *Plan, ro *RefOutcome, checks []*CheckResult) {
	if ro.Status != "ran" {
		return
	}
	ev := newEvaluator(p, ro.Runs)
	for i, c := range p.Suite.Checks {
		if c.Class == Fidelity || i >= len(checks) {
			continue
		}
		checks[i].Reference = refView(c, ev.judgeCheck(c), len(checks[i].Items) > 1)
		if checks[i].Reference != nil && ro.spec != nil {
			checks[i].Reference.Differs = ro.spec.Differs[c.ID]
		}
	}
}

// refView keeps the items the engine measured (scenarios it does not
// stand for, and metrics it has not, are left out) and summarises them;
// nil when nothing is left. named keeps "where: value" for a single item
// when the Linux row lists several.
func refView(c *Check, cr *CheckResult, named bool) *RefCheck {
	kept := &CheckResult{Unit: cr.Unit}
	decided, failed := 0, 0
	for _, it := range cr.Items {
		if it.Value == "n/a" || it.Reason != "" && it.OK == nil {
			continue
		}
		kept.Items = append(kept.Items, it)
		if it.OK != nil {
			decided++
			if !*it.OK {
				failed++
			}
		}
	}
	if len(kept.Items) == 0 {
		return nil
	}
	rc := &RefCheck{items: kept.Items}
	if c.Per == "run" {
		kept.Values = perRunValues(kept.Items)
	}
	rc.Measured = summarise(kept, c.Unit, c.Per == "run")
	if named && len(kept.Items) == 1 && c.Per != "run" {
		rc.Measured = kept.Items[0].Where + ": " + rc.Measured
	}
	if decided > 0 && (c.Expect != nil || c.Monotone != nil) {
		h := failed == 0
		rc.Holds, rc.HoldsIn, rc.Judged = &h, decided-failed, decided
	}
	return rc
}

// perRunValues reads back the numbers of per-run items.
func perRunValues(items []Item) []float64 {
	var out []float64
	for _, it := range items {
		if f, ok := expr.ScalarNumber(it.Value); ok {
			out = append(out, f)
		}
	}
	return out
}

func secs(d time.Duration) string { return fmt.Sprintf("%g", d.Seconds()) }

// say prints a line of progress (never inside a drawn bar: the engine
// runs before or after the labs).
func (r *runner) say(format string, args ...any) {
	if r.opt.Progress != nil {
		fmt.Fprintf(r.opt.Progress, format+"\n", args...)
	}
}

// errNoReference is returned when a suite has no block for the engine.
var errNoReference = errors.New("no reference program")

// checkReference validates Options.Reference against the suite.
func checkReference(s *Suite, engine string) error {
	if engine == "" {
		return nil
	}
	if !slices.Contains(Engines, engine) {
		return fmt.Errorf("--reference %s: unknown engine (known: %s)", engine, strings.Join(Engines, ", "))
	}
	if s.Reference[engine] == nil {
		var have []string
		for _, b := range Builtins() {
			if bs, err := LoadBuiltin(b); err == nil && bs.Reference[engine] != nil {
				have = append(have, b)
			}
		}
		return fmt.Errorf("%w: suite %s has no %s program (a reference: %s: block in the suite file; built-in suites with one: %s)",
			errNoReference, s.Name, EngineName(engine), engine, strings.Join(have, ", "))
	}
	return nil
}
