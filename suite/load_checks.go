package suite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/emuctl/emuctl/suite/expr"
	"go.yaml.in/yaml/v3"
)

var (
	checkKeys    = []string{"id", "class", "title", "per", "where", "for", "expect", "show", "monotone", "paper", "note", "unit"}
	monotoneKeys = []string{"value", "over", "direction", "slack", "inversions"}
	plotKeys     = []string{"kind", "metric", "title", "unit", "where"}
	classes      = []string{Physics, Fidelity, Behaviour, Reference}
	plotKinds    = []string{"bars", "goodput", "cwnd", "rtt_cdf", "tack"}
)

// checks decodes and validates the checks: list.
func (d *diag) checks(n *yaml.Node, s *Suite) []*Check {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "checks", "must be a list of checks, got %s", describe(n))
		return nil
	}
	var out []*Check
	ids := map[string]bool{}
	for i, cn := range n.Content {
		path := fmt.Sprintf("checks[%d]", i)
		c := &Check{Per: "scenario", line: deref(cn).Line, col: deref(cn).Column}
		var expect, show, mono *yaml.Node
		hasExpect := false
		for _, e := range d.entries(cn, path, checkKeys, false) {
			p := joinPath(path, e.Key)
			switch e.Key {
			case "id":
				c.ID = d.str(e.V, p)
				if ids[c.ID] {
					d.errorf(e.V, p, "check id %q is used twice", c.ID)
				}
				ids[c.ID] = true
			case "class":
				if c.Class = d.str(e.V, p); c.Class != "" && !slices.Contains(classes, c.Class) {
					d.errorf(e.V, p, "unknown class %q %s", c.Class, choices("valid", c.Class, classes))
				}
			case "title":
				c.Title = d.str(e.V, p)
			case "per":
				if c.Per = d.str(e.V, p); c.Per != "run" && c.Per != "scenario" {
					d.errorf(e.V, p, "unknown per %q (valid: run, scenario)", c.Per)
				}
			case "where":
				c.Where = d.binding(e.V, p, s.Params)
			case "for":
				for _, f := range d.stringList(e.V, p) {
					if findParam(s.Params, f) == nil {
						d.errorf(e.V, p, "unknown parameter %q %s", f, choices("parameters", f, paramNames(s.Params)))
					}
					c.For = append(c.For, f)
				}
			case "expect":
				expect, c.Expect, hasExpect = e.V, d.expr(e.V, p), true
			case "show":
				show, c.Show = e.V, d.expr(e.V, p)
			case "monotone":
				mono = e.V
			case "paper":
				c.Paper = d.str(e.V, p)
			case "note":
				c.Note = d.str(e.V, p)
			case "unit":
				c.Unit = d.str(e.V, p)
			}
		}
		if mono != nil {
			c.Monotone = d.monotone(mono, path+".monotone", s)
		}
		if !hasExpect || c.Expect != nil {
			d.checkShape(cn, path, c)
		}
		v := &validator{d: d, s: s, perRun: c.Per == "run", bound: c.bound()}
		v.expr(c.Expect, expect, path+".expect")
		v.expr(c.Show, show, path+".show")
		if c.Monotone != nil {
			v.bound[c.Monotone.Over] = true
			v.expr(c.Monotone.Value, mono, path+".monotone.value")
		}
		out = append(out, c)
	}
	return out
}

// checkShape reports missing or contradictory keys of a check.
func (d *diag) checkShape(n *yaml.Node, path string, c *Check) {
	switch {
	case c.ID == "":
		d.errorf(n, path, "no id: (e.g. S1-1)")
	case c.Class == "":
		d.errorf(n, path, "check %s: no class: %s", c.ID, choices("valid", "", classes))
	case c.Class != Reference && c.Expect == nil && c.Monotone == nil:
		d.errorf(n, path, "check %s: a %s check needs expect: or monotone:", c.ID, c.Class)
	case c.Class == Reference && c.Expect == nil && c.Show == nil && c.Note == "" && c.Monotone == nil:
		d.errorf(n, path, "check %s: a reference check needs show:, expect: or note:", c.ID)
	case c.Class == Fidelity && c.Per != "run":
		d.errorf(n, path, "check %s: fidelity checks judge single runs: add per: run", c.ID)
	case c.Per == "run" && (len(c.For) > 0 || c.Monotone != nil):
		d.errorf(n, path, "check %s: per: run checks every run on its own; for: and monotone: compare scenarios", c.ID)
	case c.Expect != nil && c.Monotone != nil:
		d.errorf(n, path, "check %s: give expect: or monotone:, not both", c.ID)
	}
}

// bound lists the parameters fixed while a scenario-level check is
// evaluated: its for: parameters and where: parameters with one label.
func (c *Check) bound() map[string]bool {
	b := map[string]bool{}
	for _, f := range c.For {
		b[f] = true
	}
	for p, ls := range c.Where {
		if len(ls) == 1 {
			b[p] = true
		}
	}
	return b
}

func (d *diag) monotone(n *yaml.Node, path string, s *Suite) *Monotone {
	m := &Monotone{Increasing: true}
	for _, e := range d.entries(n, path, monotoneKeys, false) {
		p := joinPath(path, e.Key)
		switch e.Key {
		case "value":
			m.Value = d.expr(e.V, p)
		case "over":
			if m.Over = d.str(e.V, p); findParam(s.Params, m.Over) == nil {
				d.errorf(e.V, p, "unknown parameter %q %s", m.Over, choices("parameters", m.Over, paramNames(s.Params)))
			}
		case "direction":
			switch dir := d.str(e.V, p); dir {
			case "increasing":
			case "decreasing":
				m.Increasing = false
			default:
				d.errorf(e.V, p, "unknown direction %q (valid: increasing, decreasing)", dir)
			}
		case "slack":
			m.Slack, _ = d.percent(e.V, p)
		case "inversions":
			m.Inversions, _ = d.integer(e.V, p, 0, 100)
		}
	}
	if m.Value == nil || m.Over == "" {
		d.errorf(n, path, "needs value: and over:")
	}
	return m
}

// plots decodes the plots: list.
func (d *diag) plots(n *yaml.Node, s *Suite) []*Plot {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "plots", "must be a list of plots, got %s", describe(n))
		return nil
	}
	var out []*Plot
	for i, pn := range n.Content {
		path := fmt.Sprintf("plots[%d]", i)
		p := &Plot{}
		var metric *yaml.Node
		for _, e := range d.entries(pn, path, plotKeys, false) {
			pp := joinPath(path, e.Key)
			switch e.Key {
			case "kind":
				if p.Kind = d.str(e.V, pp); !slices.Contains(plotKinds, p.Kind) {
					d.errorf(e.V, pp, "unknown kind %q %s", p.Kind, choices("valid", p.Kind, plotKinds))
				}
			case "metric":
				metric, p.Metric = e.V, d.expr(e.V, pp)
			case "title":
				p.Title = d.str(e.V, pp)
			case "unit":
				p.Unit = d.str(e.V, pp)
			case "where":
				p.Where = d.binding(e.V, pp, s.Params)
			}
		}
		if p.Kind == "bars" && p.Metric == nil {
			d.errorf(pn, path, "a bars plot needs metric:")
		}
		v := &validator{d: d, s: s, perRun: true, bound: map[string]bool{}}
		v.expr(p.Metric, metric, path+".metric")
		out = append(out, p)
	}
	return out
}

// validator checks the names an expression uses.
type validator struct {
	d      *diag
	s      *Suite
	perRun bool
	bound  map[string]bool
}

func (v *validator) expr(e *expr.Expr, n *yaml.Node, path string) {
	if e == nil {
		return
	}
	n = deref(n)
	expr.Walk(e.Root, func(x expr.Node) {
		switch x := x.(type) {
		case *expr.Call:
			fn, ok := expr.Functions[x.Fn]
			if !ok {
				v.d.exprErrorf(n, path, x.Off, "unknown function %q (functions: %s%s)", x.Fn, strings.Join(functionNames(), ", "), didYouMean(x.Fn, functionNames()))
			} else if len(x.Args) < fn.MinArgs || len(x.Args) > fn.MaxArgs {
				v.d.exprErrorf(n, path, x.Off, "%s takes %s, got %d arguments", x.Fn, arity(fn), len(x.Args))
			}
		case *expr.Ref:
			v.ref(x, n, path)
		}
	})
}

func arity(f expr.Function) string {
	if f.MinArgs == f.MaxArgs {
		return fmt.Sprintf("%d arguments (%s)", f.MinArgs, f.Doc)
	}
	return fmt.Sprintf("%d to %d arguments (%s)", f.MinArgs, f.MaxArgs, f.Doc)
}

func (v *validator) ref(r *expr.Ref, n *yaml.Node, path string) {
	pname, field, hasField := strings.Cut(r.Name, ".")
	if p := findParam(v.s.Params, pname); p != nil {
		switch {
		case r.HasArg || len(r.Sel) > 0:
			v.d.exprErrorf(n, path, r.Off, "%s is a parameter: it takes no [ ] or { }", pname)
		case !v.perRun && !v.bound[pname]:
			v.d.exprErrorf(n, path, r.Off, "parameter %s has no single value here: add it to for: or give where: one label", pname)
		case hasField:
			for _, val := range p.Values {
				if m := deref(val.node); m == nil || m.Kind != yaml.MappingNode || !hasKey(m, field) {
					v.d.exprErrorf(n, path, r.Off, "value %q of parameter %s has no field %q", val.Label, pname, field)
					break
				}
			}
		}
		return
	}
	def, ok := metricDefs[r.Name]
	if !ok {
		valid := append(paramNames(v.s.Params), metricNames()...)
		v.d.exprErrorf(n, path, r.Off, "unknown name %q: not a parameter (%s) or a metric (see suite/catalogue.go)%s",
			r.Name, strings.Join(paramNames(v.s.Params), ", "), didYouMean(r.Name, valid))
		return
	}
	v.arg(r, def, n, path)
	if len(r.Sel) > 0 && v.perRun {
		v.d.exprErrorf(n, path, r.Off, "%s{...}: a per-run expression sees one run; selectors choose scenarios in scenario-level checks", r.Name)
	}
	for _, si := range r.Sel {
		p := findParam(v.s.Params, si.Param)
		if p == nil {
			v.d.exprErrorf(n, path, si.Off, "unknown parameter %q in the selector %s", si.Param, choices("parameters", si.Param, paramNames(v.s.Params)))
		} else if p.value(si.Label) == nil {
			v.d.exprErrorf(n, path, si.Off, "parameter %s has no label %q %s", si.Param, si.Label, choices("labels", si.Label, p.labels()))
		}
	}
}

// arg checks what is between [ ] against the metric's kind.
func (v *validator) arg(r *expr.Ref, def metricDef, n *yaml.Node, path string) {
	switch {
	case def.arg == argNone && r.HasArg:
		v.d.exprErrorf(n, path, r.ArgOff, "%s takes no [ ]", r.Name)
	case (def.arg == argFlow || def.arg == argLink || def.arg == argNodeKey || def.arg == argNode) && !r.HasArg:
		v.d.exprErrorf(n, path, r.Off, "%s needs [%s]", r.Name, map[argKind]string{argFlow: "flow", argLink: "a->b", argNodeKey: "node:name", argNode: "node"}[def.arg])
	case !r.HasArg || !v.s.namesKnown:
	case def.arg == argFlow || def.arg == argFlowOpt:
		if !v.s.flowNames[r.Arg] {
			v.d.exprErrorf(n, path, r.ArgOff, "unknown flow %q %s", r.Arg, choices("flows", r.Arg, sortedSet(v.s.flowNames)))
		}
	case def.arg == argLink || def.arg == argLinkOpt:
		a, b, ok := strings.Cut(r.Arg, "->")
		a, b = strings.TrimSpace(a), strings.TrimSpace(b)
		if !ok {
			v.d.exprErrorf(n, path, r.ArgOff, "%s[%s]: name a link direction as a->b", r.Name, r.Arg)
			return
		}
		for _, x := range []string{a, b} {
			if !v.s.nodeNames[x] {
				v.d.exprErrorf(n, path, r.ArgOff, "unknown node %q %s", x, choices("nodes", x, sortedSet(v.s.nodeNames)))
			}
		}
	case def.arg == argNode:
		if !v.s.nodeNames[r.Arg] {
			v.d.exprErrorf(n, path, r.ArgOff, "unknown node %q %s", r.Arg, choices("nodes", r.Arg, sortedSet(v.s.nodeNames)))
		}
	case def.arg == argNodeKey:
		node, key, ok := strings.Cut(r.Arg, ":")
		if !ok || key == "" {
			v.d.exprErrorf(n, path, r.ArgOff, "%s[%s]: write [node:name]", r.Name, r.Arg)
		} else if !v.s.nodeNames[node] {
			v.d.exprErrorf(n, path, r.ArgOff, "unknown node %q %s", node, choices("nodes", node, sortedSet(v.s.nodeNames)))
		}
	}
}
