package suite

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// value is a number or a string.
type value struct {
	num   float64
	str   string
	isStr bool
}

func numV(v float64) value  { return value{num: v} }
func strV(s string) value   { return value{str: s, isStr: true} }
func boolV(b bool) value    { return numV(map[bool]float64{true: 1, false: 0}[b]) }
func (v value) truth() bool { return !v.isStr && v.num != 0 && !math.IsNaN(v.num) }

// asNumber converts a string that holds a number (sysctls are read as
// text) or a unit-suffixed value.
func (v value) asNumber() (float64, bool) {
	if !v.isStr {
		return v.num, true
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(v.str), 64); err == nil {
		return f, true
	}
	return scalarNumber(v.str)
}

func (v value) String() string {
	if v.isStr {
		return strconv.Quote(v.str)
	}
	return fmtNum(v.num)
}

// errMissing marks a value that the runs do not provide (no valid run,
// a flow without probes, ...): the check cannot be decided.
var errMissing = errors.New("missing")

// env resolves names for an evaluation.
type env interface {
	lookup(r *ref) (value, error)
}

func (e *Expr) eval(en env) (value, error) { return evalNode(e.root, en) }

func evalNode(n node, en env) (value, error) {
	switch x := n.(type) {
	case *numLit:
		return numV(x.v), nil
	case *strLit:
		return strV(x.s), nil
	case *ref:
		return en.lookup(x)
	case *unary:
		v, err := evalNode(x.x, en)
		if err != nil {
			return v, err
		}
		if x.op == "not" {
			return boolV(!v.truth()), nil
		}
		f, ok := v.asNumber()
		if !ok {
			return value{}, fmt.Errorf("cannot negate %s", v)
		}
		return numV(-f), nil
	case *binary:
		return evalBinary(x, en)
	case *call:
		if x.fn == "if" && len(x.args) == 3 {
			// lazy: only the chosen branch is evaluated, so it may name
			// what only some scenarios have
			c, err := evalNode(x.args[0], en)
			if err != nil {
				return c, err
			}
			if c.truth() {
				return evalNode(x.args[1], en)
			}
			return evalNode(x.args[2], en)
		}
		args := make([]float64, len(x.args))
		for i, a := range x.args {
			v, err := evalNode(a, en)
			if err != nil {
				return v, err
			}
			f, ok := v.asNumber()
			if !ok {
				return value{}, fmt.Errorf("%s: argument %d is %s, not a number", x.fn, i+1, v)
			}
			args[i] = f
		}
		fn := functions[x.fn]
		return numV(fn.f(args)), nil
	}
	return value{}, fmt.Errorf("bad expression node %T", n)
}

func evalBinary(x *binary, en env) (value, error) {
	l, err := evalNode(x.l, en)
	if x.op == "and" || x.op == "or" {
		// Short-circuit, so "scenario == \"tcp\" and goodput[tcp_a] ..."
		// never asks for a flow the scenario does not have.
		if err != nil {
			return l, err
		}
		if l.truth() == (x.op == "or") {
			return boolV(l.truth()), nil
		}
		r, err := evalNode(x.r, en)
		if err != nil {
			return r, err
		}
		return boolV(r.truth()), nil
	}
	if err != nil {
		return l, err
	}
	r, err := evalNode(x.r, en)
	if err != nil {
		return r, err
	}
	if l.isStr || r.isStr {
		if x.op == "==" || x.op == "!=" {
			lf, lok := l.asNumber()
			rf, rok := r.asNumber()
			eq := l.str == r.str
			if !(l.isStr && r.isStr) && lok && rok {
				eq = lf == rf
			}
			return boolV(eq == (x.op == "==")), nil
		}
	}
	lf, lok := l.asNumber()
	rf, rok := r.asNumber()
	if !lok || !rok {
		return value{}, fmt.Errorf("%q needs numbers, got %s and %s", x.op, l, r)
	}
	switch x.op {
	case "+":
		return numV(lf + rf), nil
	case "-":
		return numV(lf - rf), nil
	case "*":
		return numV(lf * rf), nil
	case "/":
		if rf == 0 {
			return numV(math.NaN()), fmt.Errorf("division by zero: %w", errMissing)
		}
		return numV(lf / rf), nil
	case "<":
		return boolV(lf < rf), nil
	case "<=":
		return boolV(lf <= rf), nil
	case ">":
		return boolV(lf > rf), nil
	case ">=":
		return boolV(lf >= rf), nil
	case "==":
		return boolV(lf == rf), nil
	case "!=":
		return boolV(lf != rf), nil
	}
	return value{}, fmt.Errorf("unknown operator %q", x.op)
}

// sides returns the operands of the top-level comparison, so a check can
// show the measured side next to its bound.
func (e *Expr) sides() (l, r node, op string, ok bool) {
	if b, isBin := e.root.(*binary); isBin {
		switch b.op {
		case "<", "<=", ">", ">=", "==", "!=":
			return b.l, b.r, b.op, true
		}
	}
	return nil, nil, "", false
}

// fmtNum renders a number with four significant digits.
func fmtNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 0):
		return fmt.Sprint(v)
	case v == math.Trunc(v) && math.Abs(v) < 1e9:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
