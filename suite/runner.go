package suite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Options tune Run.
type Options struct {
	// Dir is the output directory (created). Raw results go to Dir/runs.
	Dir string
	// Seed orders the runs; 0 picks one (recorded in the outcome).
	Seed uint64
	// Lab names the lab each run builds (default "<suite>-<pid>").
	Lab string
	// Progress receives the progress bar (on a terminal) or one line per
	// run; nil for none.
	Progress io.Writer
	// TTY draws a bar with an ETA instead of plain lines.
	TTY bool
	// Log receives debug lines (deploy, teardown); default: discard.
	Log *slog.Logger
	// Reference names a reference engine ("ns3") whose program runs every
	// scenario it covers after the labs, for the report's third column
	// (reference_run.go); "" for none.
	Reference string
	// Watch, when set, receives the run's status after every change (a
	// run begun, its lab up, a run ended with the checks judged so far,
	// the verdict): emuctl test --ui. It is called on the runner's
	// goroutine and must not block.
	Watch func(Status)
}

// job is one repetition of one scenario.
type job struct {
	sc  *Scenario
	rep int
}

// Run runs a plan: for each repetition, in random order, it waits for
// the kernel to finish freeing deleted namespaces (settle.go), builds a
// fresh lab, runs the flows, tears the lab down, and judges the run's
// fidelity (an invalid run is made again up to the profile's
// retry_invalid); then it judges every check and writes the results
// directory. Cancelling ctx (Ctrl-C) stops the running flows, tears the
// lab down and keeps what was measured: the outcome is then marked
// interrupted and the report covers the runs made.
func Run(ctx context.Context, p *Plan, o Options) (*Outcome, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("emuctl test builds labs of network namespaces: run it as root (sudo)")
	}
	if err := checkReference(p.Suite, o.Reference); err != nil {
		return nil, err
	}
	if o.Seed == 0 {
		o.Seed = rand.Uint64()%1_000_000 + 1
	}
	if o.Lab == "" {
		o.Lab = fmt.Sprintf("%s-%d", p.Suite.Name, os.Getpid())
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "runs"), 0o755); err != nil {
		return nil, err
	}
	out := &Outcome{Suite: p.Suite.Name, Title: p.Suite.Title, File: p.Suite.File, Profile: p.Profile, Dir: o.Dir,
		Lab: o.Lab, Seed: o.Seed, Started: time.Now(), Notes: p.Suite.Notes, Conditions: hostConditions()}
	// scenarios whose medium this machine lacks, or whose stand-in gives
	// way to the real one here, and those whose queue no backend can run
	// here are left out, said so
	mediaNotes, media := p.ChooseMedia()
	out.Media = media
	out.Notes = append(slices.Clip(out.Notes), mediaNotes...)
	out.Notes = append(out.Notes, p.LeaveOutUnavailable()...)
	r := &runner{plan: p, opt: o, out: out, ev: newEvaluator(p, nil), prevNetns: -1}
	if slices.Contains(p.Suite.Collect, "cong_state") {
		t, err := startTracer()
		if err != nil {
			out.Conditions["cong_state"] = "not traced (" + err.Error() + "): episodes from sampled ca_state"
		} else {
			out.Conditions["cong_state"] = "tracefs tcp:tcp_cong_state_set in a private instance"
			r.trace = t
			defer t.close()
		}
	}
	var ref *RefOutcome
	if o.Reference != "" {
		ref = r.prepareReference(ctx, o.Reference)
		out.Reference = ref
	}
	jobs := r.order()
	r.bar = newProgress(o.Progress, o.TTY, p, len(jobs))
	r.bar.watch = o.Watch
	r.bar.update(func(s *Status) { s.Lab, s.Dir = o.Lab, o.Dir })
	pending := map[string]int{} // repetitions still to make, per scenario
	for _, j := range jobs {
		pending[j.sc.Name]++
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		r.runJob(ctx, j)
		pending[j.sc.Name]--
		if o.Watch != nil {
			checks := r.watchChecks(pending)
			r.bar.update(func(s *Status) { s.Checks = checks })
		}
	}
	r.bar.done()
	r.bar.update(func(s *Status) { s.Phase, s.Current = "judging", "" })
	if ref != nil && ctx.Err() == nil {
		r.runReference(ctx, ref)
	}
	out.Conditions["netns_settle"] = settleSummary(out.Runs)
	out.Interrupted = ctx.Err() != nil
	out.Finished = time.Now()
	r.ev.runs = out.Runs
	out.Checks = r.ev.judgeAll()
	if ref != nil {
		judgeReference(p, ref, out.Checks)
	}
	out.Verdict = verdict(out)
	err := writeOutputs(out, p)
	r.bar.update(func(s *Status) {
		s.Phase, s.Verdict, s.Interrupted = "finished", out.Verdict, out.Interrupted
		s.Checks = s.Checks[:0]
		for _, cr := range out.Checks {
			s.Checks = append(s.Checks, checkStatus(cr, true))
		}
		if err == nil {
			s.Report = "report.md"
		}
	})
	return out, err
}

// runner holds one suite run's state.
type runner struct {
	plan  *Plan
	opt   Options
	out   *Outcome
	ev    *evaluator
	trace *tracer
	bar   *progress
	// prevNetns is how many namespaces the previous run's lab had (-1:
	// none before, or not known): the next wait's hold (settleHold)
	prevNetns int
}

// order lists every repetition of every scenario, shuffled by the seed.
func (r *runner) order() []job {
	var jobs []job
	for _, sc := range r.plan.Scenarios {
		for rep := 1; rep <= r.plan.Profile.Reps; rep++ {
			jobs = append(jobs, job{sc, rep})
		}
	}
	rng := rand.New(rand.NewPCG(r.opt.Seed, 0x5eed))
	rng.Shuffle(len(jobs), func(i, k int) { jobs[i], jobs[k] = jobs[k], jobs[i] })
	return jobs
}

// runJob makes one repetition, again while it is invalid and retries
// are left.
func (r *runner) runJob(ctx context.Context, j job) {
	for attempt := 1; ; attempt++ {
		r.bar.start(j, attempt)
		rec := r.runOne(ctx, j, attempt)
		r.out.Runs = append(r.out.Runs, rec)
		if rec.data != nil && rec.Error == "" && !rec.Interrupted {
			rec.Invalid = r.ev.fidelity(rec)
			rec.Metrics = standardMetrics(rec.data)
		}
		if err := writeRun(r.opt.Dir, rec); err != nil {
			rec.Error = joinErr(rec.Error, "writing results: "+err.Error())
		}
		r.bar.finish(rec)
		retry := len(rec.Invalid) > 0 && attempt <= r.plan.Profile.RetryInvalid ||
			rec.Error != "" && !strings.HasPrefix(rec.Error, "teardown") && attempt == 1 // a run that could not be made gets one more try
		if !retry || ctx.Err() != nil {
			return
		}
		rec.Retried = true
		if rec.Error != "" {
			time.Sleep(2 * time.Second)
		}
	}
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// verdict sums the checks up: fail beats inconclusive beats pass.
func verdict(o *Outcome) string {
	fail, undecided := false, false
	for _, c := range o.Checks {
		switch {
		case c.Gating && c.Status == StatusFail:
			fail = true
		case c.Gating && c.Status == StatusNA:
			undecided = true
		}
	}
	for _, r := range o.Runs {
		if r.Error != "" && !r.Retried {
			fail = true // a run that could not be made, even when tried again
		}
	}
	switch {
	case fail:
		return "fail"
	case o.Interrupted:
		return "interrupted"
	case undecided:
		return "inconclusive"
	}
	return "pass"
}

// ExitCode maps the verdict: 0 pass, 1 fail, 2 inconclusive, 130
// interrupted (as a shell reports Ctrl-C).
func (o *Outcome) ExitCode() int {
	switch o.Verdict {
	case "pass":
		return 0
	case "inconclusive":
		return 2
	case "interrupted":
		return 130
	}
	return 1
}
