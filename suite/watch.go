package suite

import (
	"slices"
	"time"
)

// Status is a suite's run as it stands, for a live view (Options.Watch,
// emuctl test --ui): what runs now, what ran, and every check judged on
// the valid runs made so far.
type Status struct {
	Suite   string `json:"suite"`
	Title   string `json:"title"`
	Profile string `json:"profile"`
	// Lab is the name every run's lab takes (one lab at a time).
	Lab string `json:"lab"`
	Dir string `json:"dir"`
	// Runs is how many runs are planned, with the retries so far; Done
	// how many ended.
	Runs int `json:"runs"`
	Done int `json:"done"`
	// Phase is settling (waiting for the kernel to free the previous
	// lab's namespaces), running (a run's lab is built, measured or torn
	// down), judging (every run made: checks, plots, report) or finished.
	Phase string `json:"phase"`
	// Current is the run being made ("scenario #rep", with its retry).
	Current string    `json:"current,omitempty"`
	Started time.Time `json:"started"`
	// LeftS is the time left as estimated at Updated: the plan scaled by
	// how fast the finished runs went.
	LeftS   float64   `json:"left_s"`
	Updated time.Time `json:"updated"`
	// Finished lists the runs that ended, in order.
	Finished []RunLine `json:"finished"`
	// Checks are judged on the runs so far; Decided says the scenarios a
	// check judges have all been run (its status is final).
	Checks []CheckStatus `json:"checks"`
	// Verdict and Report (report.md, relative to Dir) when finished;
	// Interrupted when Ctrl-C stopped it.
	Verdict     string `json:"verdict,omitempty"`
	Report      string `json:"report,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
}

// RunLine is one finished run, as the progress line says it.
type RunLine struct {
	Scenario string  `json:"scenario"`
	Rep      int     `json:"rep"`
	Attempt  int     `json:"attempt"`
	Status   string  `json:"status"` // ok, invalid, error, interrupted
	Line     string  `json:"line"`
	Seconds  float64 `json:"seconds"`
}

// CheckStatus is a check judged so far.
type CheckStatus struct {
	ID       string `json:"id"`
	Class    string `json:"class"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Measured string `json:"measured"`
	Gating   bool   `json:"gating"`
	Decided  bool   `json:"decided"`
}

// watchChecks judges every check on the runs so far; a check is decided
// once no scenario it judges has a repetition still to make.
func (r *runner) watchChecks(pending map[string]int) []CheckStatus {
	ev := newEvaluator(r.plan, r.out.Runs)
	var out []CheckStatus
	for i, cr := range ev.judgeAll() {
		c := r.plan.Suite.Checks[i]
		decided := !slices.ContainsFunc(ev.match(c.Where, nil), func(sc *Scenario) bool { return pending[sc.Name] > 0 })
		out = append(out, checkStatus(cr, decided))
	}
	return out
}

// checkStatus is a judged check as a live view shows it.
func checkStatus(cr *CheckResult, decided bool) CheckStatus {
	return CheckStatus{ID: cr.ID, Class: cr.Class, Title: cr.Title, Status: cr.Status, Measured: cr.Measured, Gating: cr.Gating, Decided: decided}
}
