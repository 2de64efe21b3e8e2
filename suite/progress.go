package suite

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/emuctl/emuctl/suite/expr"
)

// progress reports runs as they go: on a terminal a bar with elapsed
// time and an ETA, redrawn twice a second, with one line per finished
// run above it; otherwise one plain line per run.
type progress struct {
	w       io.Writer
	tty     bool
	total   int
	planned map[string]time.Duration
	mu      sync.Mutex
	started time.Time
	jobT0   time.Time
	cur     string
	waitFor string // cur while the bar shows a wait
	curPlan time.Duration
	done_   int
	spent   time.Duration // actual time of finished jobs
	plan    time.Duration // their planned time
	left    time.Duration // planned time of jobs not started
	stop    chan struct{}
	wg      sync.WaitGroup
	// watch receives st after every change (Options.Watch); nil: none
	watch func(Status)
	st    Status
}

func newProgress(w io.Writer, tty bool, p *Plan, jobs int) *progress {
	pr := &progress{w: w, tty: tty && w != nil, total: jobs, started: time.Now(), planned: map[string]time.Duration{},
		left: p.Estimate(), stop: make(chan struct{})}
	pr.st = Status{Suite: p.Suite.Name, Title: p.Suite.Title, Profile: p.Profile.Name, Runs: jobs, Phase: "settling",
		Started: pr.started, Finished: []RunLine{}, Checks: []CheckStatus{}}
	for _, sc := range p.Scenarios {
		pr.planned[sc.Name] = sc.span() + runOverhead
	}
	if pr.tty {
		pr.wg.Add(1)
		go func() {
			defer pr.wg.Done()
			t := time.NewTicker(500 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-pr.stop:
					return
				case <-t.C:
					pr.mu.Lock()
					pr.draw()
					pr.mu.Unlock()
				}
			}
		}()
	}
	return pr
}

// quiet: nothing to print and nobody watching
func (pr *progress) quiet() bool { return pr == nil || pr.w == nil && pr.watch == nil }

// emit hands the watcher the status as it stands (pr.mu held).
func (pr *progress) emit() {
	if pr.watch == nil {
		return
	}
	pr.st.Runs, pr.st.Done, pr.st.Updated = pr.total, pr.done_, time.Now()
	pr.st.LeftS = pr.eta().Seconds()
	st := pr.st
	st.Finished = slices.Clone(st.Finished)
	st.Checks = slices.Clone(st.Checks)
	pr.watch(st)
}

// update changes the watched status (its phase, checks, verdict) and
// hands it on.
func (pr *progress) update(f func(*Status)) {
	if pr.quiet() {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	f(&pr.st)
	pr.emit()
}

func (pr *progress) start(j job, attempt int) {
	if pr.quiet() {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.cur = fmt.Sprintf("%s #%d", j.sc.Name, j.rep)
	if attempt > 1 {
		pr.cur += fmt.Sprintf(" (retry %d)", attempt-1)
		pr.total++ // a retry is one more run
	} else {
		pr.left -= pr.planned[j.sc.Name]
	}
	pr.curPlan, pr.jobT0 = pr.planned[j.sc.Name], time.Now()
	pr.st.Current, pr.st.Phase = pr.cur, "settling"
	pr.emit()
	if !pr.tty {
		return
	}
	pr.draw()
}

// eta scales the plan by how fast finished runs went.
func (pr *progress) eta() time.Duration {
	ratio := 1.0
	if pr.plan > 0 {
		ratio = float64(pr.spent) / float64(pr.plan)
	}
	cur := max(0, time.Duration(float64(pr.curPlan)*ratio)-time.Since(pr.jobT0))
	return time.Duration(float64(pr.left)*ratio) + cur
}

func (pr *progress) draw() {
	const width = 24
	filled := 0
	if pr.total > 0 {
		filled = width * pr.done_ / pr.total
	}
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
	fmt.Fprintf(pr.w, "\r[%s] %d/%d  %s  %s elapsed, ETA %s\x1b[K", bar, pr.done_, pr.total, pr.cur,
		clock(time.Since(pr.started)), clock(pr.eta()))
}

func (pr *progress) finish(rec *RunRecord) {
	if pr.quiet() {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	took := time.Since(pr.jobT0)
	pr.done_++
	pr.spent += took
	pr.plan += pr.curPlan
	line := fmt.Sprintf("[%d/%d] %s #%d: %s", pr.done_, pr.total, rec.Scenario, rec.Rep, runLine(rec))
	if rec.Attempt > 1 {
		line = fmt.Sprintf("[%d/%d] %s #%d (retry %d): %s", pr.done_, pr.total, rec.Scenario, rec.Rep, rec.Attempt-1, runLine(rec))
	}
	line += fmt.Sprintf(" (%.1f s)", took.Seconds())
	pr.st.Finished = append(pr.st.Finished, RunLine{Scenario: rec.Scenario, Rep: rec.Rep, Attempt: rec.Attempt,
		Status: rec.Status(), Line: runLine(rec), Seconds: took.Seconds()})
	pr.st.Current = ""
	pr.emit()
	if pr.w == nil {
		return
	}
	if pr.tty {
		fmt.Fprintf(pr.w, "\r%s\x1b[K\n", line)
		pr.draw()
		return
	}
	fmt.Fprintln(pr.w, line)
}

// waiting says the runner waits for something before the current run:
// on a terminal the bar shows it in place of the run, otherwise a line
// is begun that waited ends.
func (pr *progress) waiting(what string) {
	if pr.quiet() {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.w == nil {
		return
	}
	if pr.tty {
		pr.waitFor, pr.cur = pr.cur, what+" ..."
		pr.draw()
		return
	}
	fmt.Fprintf(pr.w, "%s ...", what)
}

// waited ends a wait with its result ("3.4 s"), as one line above the
// bar on a terminal.
func (pr *progress) waited(what, result string) {
	if pr.quiet() {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.w == nil {
		return
	}
	if pr.tty {
		pr.cur = pr.waitFor
		fmt.Fprintf(pr.w, "\r%s ... %s\x1b[K\n", what, result)
		pr.draw()
		return
	}
	fmt.Fprintf(pr.w, " %s\n", result)
}

// runLine is the one-line summary of a run.
func runLine(rec *RunRecord) string {
	switch rec.Status() {
	case "error":
		return "ERROR " + firstLine(rec.Error)
	case "interrupted":
		return "interrupted"
	}
	s := ""
	if g, ok := rec.Metrics["goodput"]; ok {
		s = fmt.Sprintf("goodput %s Mbit/s", expr.FmtNum(g))
	}
	if v, ok := rec.Metrics["srtt"]; ok {
		s += fmt.Sprintf(", srtt %s ms", expr.FmtNum(v))
	}
	if v, ok := rec.Metrics["probe_rtt_p95"]; ok {
		s += fmt.Sprintf(", probe p95 %s ms", expr.FmtNum(v))
	}
	if len(rec.Invalid) > 0 {
		return "INVALID " + strings.Join(rec.Invalid, "; ") + " — " + s
	}
	return "ok, " + s
}

func (pr *progress) done() {
	if pr.w == nil {
		return
	}
	if pr.tty {
		close(pr.stop)
		pr.wg.Wait()
		fmt.Fprint(pr.w, "\r\x1b[K")
	}
}

// clock renders a duration as m:ss or h:mm:ss.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
