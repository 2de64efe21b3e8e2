package suite

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/emuctl/emuctl/suite/expr"

	"github.com/emuctl/emuctl/analysis"
	"go.yaml.in/yaml/v3"
)

// evaluator judges checks against the runs of a plan.
type evaluator struct {
	plan   *Plan
	runs   []*RunRecord
	byName map[string]*Scenario
}

func newEvaluator(p *Plan, runs []*RunRecord) *evaluator {
	ev := &evaluator{plan: p, runs: runs, byName: map[string]*Scenario{}}
	for _, sc := range p.Scenarios {
		ev.byName[sc.Name] = sc
	}
	return ev
}

// paramValue converts a scenario's parameter value (or a field of it)
// for an expression.
func paramValue(sc *Scenario, name string) (expr.Value, error) {
	pname, field, hasField := strings.Cut(name, ".")
	v, ok := sc.values[pname]
	if !ok || v == nil {
		return expr.Value{}, fmt.Errorf("no parameter %s", pname)
	}
	n := deref(v.node)
	if hasField {
		n = nil
		if m := deref(v.node); m != nil && m.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(m.Content); i += 2 {
				if m.Content[i].Value == field {
					n = deref(m.Content[i+1])
				}
			}
		}
	}
	if n == nil && hasField {
		return expr.Value{}, fmt.Errorf("%s: no such field", name)
	}
	if n == nil || n.Kind != yaml.ScalarNode {
		return expr.StrV(v.Label), nil // a mapping or list value stands for its label
	}
	if f, ok := expr.ScalarNumber(n.Value); ok {
		return expr.NumV(f), nil
	}
	return expr.StrV(n.Value), nil
}

// runEnv evaluates an expression on one run.
type runEnv struct {
	sc  *Scenario
	rec *RunRecord
}

func (e runEnv) Lookup(r *expr.Ref) (expr.Value, error) {
	if isParamRef(e.sc, r.Name) {
		return paramValue(e.sc, r.Name)
	}
	return e.rec.metric(r.Name, r.Arg)
}

func isParamRef(sc *Scenario, name string) bool {
	p, _, _ := strings.Cut(name, ".")
	_, ok := sc.values[p]
	return ok
}

// scenEnv evaluates an expression over scenarios: a metric is the median
// over the valid runs of the scenarios matching where:, the fixed
// parameters and the reference's own selector.
type scenEnv struct {
	ev    *evaluator
	where Binding
	fixed map[string]string
}

func (e scenEnv) Lookup(r *expr.Ref) (expr.Value, error) {
	sel := map[string]string{}
	for k, v := range e.fixed {
		sel[k] = v
	}
	for _, s := range r.Sel {
		sel[s.Param] = s.Label
	}
	if p, _, _ := strings.Cut(r.Name, "."); findParam(e.ev.plan.Suite.Params, p) != nil {
		label, ok := sel[p]
		if !ok {
			return expr.Value{}, fmt.Errorf("parameter %s has no single value here", p)
		}
		for _, sc := range e.ev.plan.Scenarios {
			if sc.Labels[p] == label {
				return paramValue(sc, r.Name)
			}
		}
		return expr.Value{}, notInProfile("no scenario with %s=%s in this profile", p, label)
	}
	scens := e.ev.match(e.where, sel)
	if len(scens) == 0 {
		return expr.Value{}, notInProfile("no scenario with %s in this profile", bindingText(sel))
	}
	var nums []float64
	var strs []string
	var lastErr error
	runs := 0
	for _, rec := range e.ev.runs {
		if !rec.Valid() || !containsScen(scens, rec.Scenario) {
			continue
		}
		runs++
		v, err := rec.metric(r.Name, r.Arg)
		if err != nil {
			lastErr = err
			continue
		}
		if v.IsStr {
			strs = append(strs, v.Str)
		} else {
			nums = append(nums, v.Num)
		}
	}
	switch {
	case runs == 0:
		return expr.Value{}, missing("no valid run of %s", bindingText(sel))
	case len(strs) > 0:
		sort.Strings(strs)
		if strs[0] != strs[len(strs)-1] {
			return expr.Value{}, fmt.Errorf("%s differs between runs (%s, %s)", r.Name, strs[0], strs[len(strs)-1])
		}
		return expr.StrV(strs[0]), nil
	case len(nums) == 0:
		return expr.Value{}, lastErr
	}
	return expr.NumV(analysis.Median(nums)), nil
}

func containsScen(scens []*Scenario, name string) bool {
	for _, s := range scens {
		if s.Name == name {
			return true
		}
	}
	return false
}

// match returns the plan's scenarios that satisfy where (parameters also
// in sel are judged by sel instead) and sel.
func (ev *evaluator) match(where Binding, sel map[string]string) []*Scenario {
	var out []*Scenario
	for _, sc := range ev.plan.Scenarios {
		ok := true
		for p, ls := range where {
			if _, over := sel[p]; !over && !slices.Contains(ls, sc.Labels[p]) {
				ok = false
			}
		}
		for p, l := range sel {
			if sc.Labels[p] != l {
				ok = false
			}
		}
		if ok {
			out = append(out, sc)
		}
	}
	return out
}

// bindingText renders a selection for messages: "loss=5%, sack=on".
func bindingText(sel map[string]string) string {
	if len(sel) == 0 {
		return "any scenario"
	}
	keys := make([]string, 0, len(sel))
	for k := range sel {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + sel[k]
	}
	return strings.Join(parts, ",")
}

// judge evaluates expect and show in an environment: ok is nil when the
// value is missing (the reason is in err).
func judge(c *Check, en expr.Env) (ok *bool, shown expr.Value, err error) {
	show := c.Show
	if show == nil && c.Expect != nil {
		if l, _, _, isCmp := c.Expect.Sides(); isCmp {
			show = &expr.Expr{Root: l}
		}
	}
	if show != nil {
		if shown, err = show.Eval(en); err != nil && !errors.Is(err, expr.ErrMissing) {
			return nil, shown, err
		}
	}
	if c.Expect == nil {
		return nil, shown, err
	}
	v, eerr := c.Expect.Eval(en)
	if eerr != nil {
		return nil, shown, eerr
	}
	b := v.Truth()
	if show == nil {
		shown = v
	}
	return &b, shown, nil
}
