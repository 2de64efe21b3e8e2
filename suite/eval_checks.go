package suite

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/emuctl/emuctl/suite/expr"
)

// Check statuses.
const (
	StatusPass    = "pass"
	StatusFail    = "fail"
	StatusSkip    = "skip"
	StatusNA      = "n/a"
	StatusInfo    = "info"
	StatusInvalid = "invalid"
)

// judgeAll evaluates every check.
func (ev *evaluator) judgeAll() []*CheckResult {
	var out []*CheckResult
	for _, c := range ev.plan.Suite.Checks {
		out = append(out, ev.judgeCheck(c))
	}
	return out
}

func (ev *evaluator) judgeCheck(c *Check) *CheckResult {
	cr := &CheckResult{ID: c.ID, Class: c.Class, Title: c.Title, Expect: c.Expect.String(), Paper: c.Paper,
		Note: c.Note, Gating: gating(c.Class), Unit: c.Unit, PerRun: c.Per == "run"}
	if c.Monotone != nil {
		cr.Expect = fmt.Sprintf("%s %s over %s (slack %s, %d inversion(s) allowed)", c.Monotone.Value,
			map[bool]string{true: "increasing", false: "decreasing"}[c.Monotone.Increasing], c.Monotone.Over,
			fmtPct(c.Monotone.Slack), c.Monotone.Inversions)
	}
	if len(ev.match(c.Where, nil)) == 0 {
		cr.Status, cr.Reason = StatusSkip, "no scenario of this profile matches"
		return cr
	}
	switch {
	case c.Expect == nil && c.Show == nil && c.Monotone == nil:
		cr.Status, cr.Measured = StatusInfo, "not measured" // a note-only reference row
		return cr
	case c.Per == "run":
		ev.judgePerRun(c, cr)
	case c.Monotone != nil:
		ev.judgeMonotone(c, cr)
	default:
		ev.judgeScenarios(c, cr)
	}
	ev.finish(c, cr)
	return cr
}

// finish sets the status from the items.
func (ev *evaluator) finish(c *Check, cr *CheckResult) {
	decided, failed := 0, 0
	for _, it := range cr.Items {
		if it.OK != nil {
			decided++
			if !*it.OK {
				failed++
			}
		}
	}
	switch {
	case c.Class == Reference:
		cr.Status = StatusInfo
		if c.Expect != nil || c.Monotone != nil {
			if decided > 0 {
				h := failed == 0
				cr.Holds, cr.HoldsIn, cr.Judged = &h, decided-failed, decided
			}
		}
	case decided == 0 && cr.Status == "" && allAbsent(cr.Items):
		// what it compares is not in this profile (or left out here)
		cr.Status, cr.Reason = StatusSkip, cr.Items[0].Reason
	case decided == 0 && cr.Status == "":
		cr.Status = StatusNA
		if cr.Reason == "" && len(cr.Items) > 0 {
			cr.Reason = cr.Items[0].Reason
		}
	case failed > 0 && c.Class == Fidelity:
		cr.Status = StatusInvalid
	case failed > 0:
		cr.Status = StatusFail
	case cr.Status == "":
		cr.Status = StatusPass
	}
	if cr.Measured == "" {
		cr.Measured = summarise(cr, c.Unit, c.Per == "run")
	}
}

// judgePerRun evaluates the check on every run of matching scenarios.
func (ev *evaluator) judgePerRun(c *Check, cr *CheckResult) {
	for _, rec := range ev.runs {
		sc := ev.byName[rec.Scenario]
		if sc == nil || !c.Where.matches(sc.Labels) || rec.Retried && c.Class != Fidelity {
			continue
		}
		if !rec.measured() || rec.Error != "" || rec.Interrupted || (c.Class != Fidelity && len(rec.Invalid) > 0) {
			continue
		}
		ok, shown, err := judge(c, runEnv{sc: sc, rec: rec})
		if c.Class == Fidelity && ok == nil && err != nil {
			f := false // not confirmed: the run was invalid
			ok = &f
		}
		cr.Items = append(cr.Items, item(rec.ID, ok, shown, err))
		if ok != nil && !shown.IsStr {
			cr.Values = append(cr.Values, shown.Num)
		}
	}
	if len(cr.Items) == 0 {
		cr.Reason = "no valid run of a matching scenario"
	}
}

func item(where string, ok *bool, shown expr.Value, err error) Item {
	it := Item{Where: where, Value: shown.String(), OK: ok}
	if err != nil {
		it.Value, it.Reason = "n/a", strings.TrimSuffix(err.Error(), ": "+expr.ErrMissing.Error())
		it.Reason = strings.TrimSuffix(it.Reason, ": "+errNotInProfile.Error())
		it.absent = errors.Is(err, errNotInProfile)
	}
	return it
}

// errNotInProfile: an expression names scenarios the profile does not
// have, or the machine left out (a stand-in's real counterpart) — the
// check has nothing to judge here, which is not a missing measurement.
var errNotInProfile = fmt.Errorf("not in this profile: %w", expr.ErrMissing)

func notInProfile(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), errNotInProfile)
}

// allAbsent reports whether every item names scenarios the profile lacks.
func allAbsent(items []Item) bool {
	for _, it := range items {
		if !it.absent {
			return false
		}
	}
	return len(items) > 0
}

// bindings lists the label combinations of the check's for: parameters
// (minus skip) that occur among the scenarios matching where.
func (ev *evaluator) bindings(c *Check, skip string) []map[string]string {
	out := []map[string]string{{}}
	for _, pn := range c.For {
		if pn == skip {
			continue
		}
		var next []map[string]string
		for _, b := range out {
			for _, v := range findParam(ev.plan.Suite.Params, pn).Values {
				nb := map[string]string{pn: v.Label}
				for k, x := range b {
					nb[k] = x
				}
				if ls, ok := c.Where[pn]; ok && !slices.Contains(ls, v.Label) {
					continue
				}
				if len(ev.match(c.Where, withFixed(c.Where, nb))) > 0 {
					next = append(next, nb)
				}
			}
		}
		out = next
	}
	return out
}

// withFixed adds where's single-label parameters to a binding.
func withFixed(where Binding, b map[string]string) map[string]string {
	out := map[string]string{}
	for p, ls := range where {
		if len(ls) == 1 {
			out[p] = ls[0]
		}
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func (ev *evaluator) judgeScenarios(c *Check, cr *CheckResult) {
	for _, b := range ev.bindings(c, "") {
		fixed := withFixed(c.Where, b)
		ok, shown, err := judge(c, scenEnv{ev: ev, where: c.Where, fixed: fixed})
		where := bindingText(b)
		if len(b) == 0 {
			where = "all"
		}
		cr.Items = append(cr.Items, item(where, ok, shown, err))
		if err == nil && !shown.IsStr {
			cr.Values = append(cr.Values, shown.Num)
		}
	}
}

// judgeMonotone walks the over: parameter in its declared order.
func (ev *evaluator) judgeMonotone(c *Check, cr *CheckResult) {
	m := c.Monotone
	for _, b := range ev.bindings(c, m.Over) {
		var seq []float64
		var parts []string
		var reason string
		for _, v := range findParam(ev.plan.Suite.Params, m.Over).Values {
			fixed := withFixed(c.Where, b)
			fixed[m.Over] = v.Label
			if !slices.Contains(c.Where[m.Over], v.Label) && c.Where[m.Over] != nil || len(ev.match(c.Where, fixed)) == 0 {
				continue
			}
			x, err := m.Value.Eval(scenEnv{ev: ev, where: c.Where, fixed: fixed})
			if err != nil {
				reason = strings.TrimSuffix(err.Error(), ": "+expr.ErrMissing.Error())
				parts = append(parts, v.Label+": n/a")
				continue
			}
			seq = append(seq, x.Num)
			parts = append(parts, v.Label+": "+fmtUnit(x.Num, c.Unit))
		}
		it := Item{Where: bindingText(b), Value: strings.Join(parts, " → ")}
		if len(b) == 0 {
			it.Where = "all"
		}
		if reason != "" && len(seq) < 2 {
			it.Reason = reason
		} else {
			ok := monotoneOK(seq, m)
			it.OK = &ok
		}
		cr.Items = append(cr.Items, it)
	}
	if len(cr.Items) == 1 {
		cr.Measured = cr.Items[0].Value
	}
}

// monotoneOK counts steps against the direction: each must stay within
// the slack, and at most Inversions of them may occur.
func monotoneOK(seq []float64, m *Monotone) bool {
	inv := 0
	for i := 1; i < len(seq); i++ {
		prev, cur := seq[i-1], seq[i]
		if !m.Increasing {
			prev, cur = -prev, -cur
		}
		if cur >= prev {
			continue
		}
		inv++
		if math.Abs(cur-prev) > m.Slack*math.Abs(seq[i-1]) {
			return false
		}
	}
	return inv <= m.Inversions
}

// summarise renders the measured values of a check for its table row.
func summarise(cr *CheckResult, unit string, perRun bool) string {
	if len(cr.Items) == 0 {
		return "—"
	}
	if len(cr.Items) == 1 {
		return unitText(cr.Items[0].Value, unit)
	}
	if perRun && len(cr.Values) == 0 {
		seen := map[string]int{}
		var order []string
		for _, it := range cr.Items {
			if seen[it.Value] == 0 {
				order = append(order, it.Value)
			}
			seen[it.Value]++
		}
		var parts []string
		for _, v := range order {
			parts = append(parts, fmt.Sprintf("%s (%d runs)", unitText(v, unit), seen[v]))
		}
		return strings.Join(parts, ", ")
	}
	if perRun {
		lo, hi := cr.Values[0], cr.Values[0]
		for _, v := range cr.Values {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		s := fmtUnit(lo, unit)
		if hi != lo {
			s = fmtUnit(lo, unit) + " … " + fmtUnit(hi, unit)
		}
		return fmt.Sprintf("%s (%d runs)", s, len(cr.Items))
	}
	var parts []string
	for _, it := range cr.Items {
		parts = append(parts, it.Where+": "+unitText(it.Value, unit))
	}
	return strings.Join(parts, "; ")
}

// unitText formats a shown value (already text) with the unit.
func unitText(v, unit string) string {
	if unit == "%" {
		if f, ok := expr.ScalarNumber(v); ok && v != "n/a" {
			return fmtPct(f)
		}
	}
	if unit != "" && v != "n/a" && !strings.HasPrefix(v, `"`) {
		return v + " " + unit
	}
	return v
}

func fmtUnit(v float64, unit string) string { return unitText(expr.FmtNum(v), unit) }

func fmtPct(f float64) string {
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", f*100), "0"), ".") + " %"
}

// fidelity evaluates the fidelity checks on one run and returns the
// failures ("C7: 0.97"). A value that could not be read fails too: a run
// is valid only when its conditions were confirmed.
func (ev *evaluator) fidelity(rec *RunRecord) []string {
	sc := ev.byName[rec.Scenario]
	var out []string
	for _, c := range ev.plan.Suite.Checks {
		if c.Class != Fidelity || sc == nil || !c.Where.matches(sc.Labels) {
			continue
		}
		ok, shown, err := judge(c, runEnv{sc: sc, rec: rec})
		switch {
		case ok == nil && err != nil:
			out = append(out, c.ID+" ("+c.Title+"): not confirmed: "+strings.TrimSuffix(err.Error(), ": "+expr.ErrMissing.Error()))
		case ok != nil && !*ok:
			out = append(out, c.ID+" ("+c.Title+"): "+unitText(shown.String(), c.Unit))
		}
	}
	return out
}
