package suite

import (
	"time"

	"github.com/emuctl/emuctl/suite/expr"
)

// Outcome is what a suite run produced: every run, every check, and
// where the files are. It is also the --json output.
type Outcome struct {
	Suite    string    `json:"suite"`
	Title    string    `json:"title"`
	File     string    `json:"file"`
	Profile  Profile   `json:"profile"`
	Dir      string    `json:"dir"`
	Lab      string    `json:"lab"`
	Seed     uint64    `json:"seed"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Interrupted is set when Ctrl-C stopped the suite; the runs done so
	// far are kept and judged.
	Interrupted bool           `json:"interrupted,omitempty"`
	Runs        []*RunRecord   `json:"runs"`
	Checks      []*CheckResult `json:"checks"`
	// Verdict is pass, fail (a physics or behaviour check failed, or a
	// run could not be made), inconclusive (a gating check had no valid
	// run to judge) or interrupted.
	Verdict    string            `json:"verdict"`
	Conditions map[string]string `json:"conditions,omitempty"`
	Notes      []string          `json:"notes,omitempty"`
	// Media: what carried the scenarios of each parameter value that
	// names a medium, needs something of the machine or has a stand-in
	// (capability.go), and whether they ran.
	Media []Medium `json:"media,omitempty"`
	// Reference is the reference engine's part (--reference ns3): its
	// runs, and in Checks[i].Reference each check judged on them.
	Reference *RefOutcome `json:"reference,omitempty"`
}

// RunRecord is one run (one repetition of one scenario, one attempt).
type RunRecord struct {
	ID       string            `json:"id"`
	Scenario string            `json:"scenario"`
	Labels   map[string]string `json:"labels"`
	Rep      int               `json:"rep"`
	Attempt  int               `json:"attempt"`
	Started  time.Time         `json:"started"`
	Seconds  float64           `json:"seconds"`
	// File is the raw result, relative to the outcome's directory.
	File string `json:"file,omitempty"`
	// Error is why the run could not be made (deploy or traffic failure).
	Error       string `json:"error,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
	// NetnsSettle is how the wait for the kernel to free deleted network
	// namespaces before the deploy went (also the raw result's
	// netns_settle condition); NetnsSettleS is its length.
	NetnsSettle  string  `json:"netns_settle,omitempty"`
	NetnsSettleS float64 `json:"netns_settle_s"`
	// Invalid lists the fidelity checks the run failed; an invalid run
	// is left out of every other check.
	Invalid []string `json:"invalid,omitempty"`
	// Retried is set on a run that was made again (invalid, or its lab
	// did not come up).
	Retried bool `json:"retried,omitempty"`
	// Metrics are the run's standard metrics (also in runs.csv).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	data    *runData
	ref     *refData // a reference engine's run (reference_data.go)
}

// Valid reports whether the run counts for the checks.
func (r *RunRecord) Valid() bool {
	return r.Error == "" && !r.Interrupted && len(r.Invalid) == 0 && r.measured()
}

// measured reports whether the run has results: a lab's, or a
// reference engine's (ref).
func (r *RunRecord) measured() bool { return r.data != nil || r.ref != nil }

// metric evaluates a metric on the run's results.
func (r *RunRecord) metric(name, arg string) (expr.Value, error) {
	if r.ref != nil {
		return r.ref.metric(name, arg)
	}
	return r.data.metric(name, arg)
}

// Status is ok, invalid, error or interrupted.
func (r *RunRecord) Status() string {
	switch {
	case r.Error != "":
		return "error"
	case r.Interrupted:
		return "interrupted"
	case len(r.Invalid) > 0:
		return "invalid"
	}
	return "ok"
}

// CheckResult is one check's outcome.
type CheckResult struct {
	ID    string `json:"id"`
	Class string `json:"class"`
	Title string `json:"title"`
	// Status is pass, fail, skip (no scenario of this profile), n/a (no
	// valid run to judge), info (reference) or invalid (fidelity: some
	// runs were invalid).
	Status string `json:"status"`
	// Holds is a reference check's expectation, evaluated (nil: none);
	// HoldsIn counts the items where it held, of Judged.
	Holds   *bool `json:"holds,omitempty"`
	HoldsIn int   `json:"holds_in,omitempty"`
	Judged  int   `json:"judged,omitempty"`
	// Measured is the value(s) shown, Expect the condition, Paper the
	// study's value.
	Measured string    `json:"measured"`
	Items    []Item    `json:"items,omitempty"`
	Expect   string    `json:"expect,omitempty"`
	Paper    string    `json:"paper,omitempty"`
	Note     string    `json:"note,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Gating   bool      `json:"gating"`
	PerRun   bool      `json:"per_run,omitempty"`
	Unit     string    `json:"unit,omitempty"`
	Values   []float64 `json:"-"`
	// Reference is the check judged on the reference engine's runs (nil:
	// no engine ran, or it measures nothing here).
	Reference *RefCheck `json:"reference,omitempty"`
}

// Item is one evaluation of a check: one run, or one binding of its for:
// parameters.
type Item struct {
	Where  string `json:"where"`
	Value  string `json:"value"`
	OK     *bool  `json:"ok,omitempty"`
	Reason string `json:"reason,omitempty"`
	// absent: the item names scenarios this profile (or this machine,
	// which left them out) does not have — not a missing measurement
	absent bool
}

// Gating classes decide the exit code.
func gating(class string) bool { return class == Physics || class == Behaviour }
