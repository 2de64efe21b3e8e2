package expr

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Value is a number or a string.
type Value struct {
	Num   float64
	Str   string
	IsStr bool
}

func NumV(v float64) Value  { return Value{Num: v} }
func StrV(s string) Value   { return Value{Str: s, IsStr: true} }
func BoolV(b bool) Value    { return NumV(map[bool]float64{true: 1, false: 0}[b]) }
func (v Value) Truth() bool { return !v.IsStr && v.Num != 0 && !math.IsNaN(v.Num) }

// AsNumber converts a string that holds a number (sysctls are read as
// text) or a unit-suffixed value.
func (v Value) AsNumber() (float64, bool) {
	if !v.IsStr {
		return v.Num, true
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(v.Str), 64); err == nil {
		return f, true
	}
	return ScalarNumber(v.Str)
}

func (v Value) String() string {
	if v.IsStr {
		return strconv.Quote(v.Str)
	}
	return FmtNum(v.Num)
}

// ErrMissing marks a value that the runs do not provide (no valid run,
// a flow without probes, ...): the check cannot be decided.
var ErrMissing = errors.New("missing")

// Missing is an error that wraps ErrMissing: what the runs do not provide.
func Missing(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrMissing)
}

// Env resolves names for an evaluation.
type Env interface {
	Lookup(r *Ref) (Value, error)
}

func (e *Expr) Eval(en Env) (Value, error) { return evalNode(e.Root, en) }

func evalNode(n Node, en Env) (Value, error) {
	switch x := n.(type) {
	case *NumLit:
		return NumV(x.V), nil
	case *StrLit:
		return StrV(x.S), nil
	case *Ref:
		return en.Lookup(x)
	case *Unary:
		v, err := evalNode(x.X, en)
		if err != nil {
			return v, err
		}
		if x.Op == "not" {
			return BoolV(!v.Truth()), nil
		}
		f, ok := v.AsNumber()
		if !ok {
			return Value{}, fmt.Errorf("cannot negate %s", v)
		}
		return NumV(-f), nil
	case *Binary:
		return evalBinary(x, en)
	case *Call:
		if x.Fn == "if" && len(x.Args) == 3 {
			// lazy: only the chosen branch is evaluated, so it may name
			// what only some scenarios have
			c, err := evalNode(x.Args[0], en)
			if err != nil {
				return c, err
			}
			if c.Truth() {
				return evalNode(x.Args[1], en)
			}
			return evalNode(x.Args[2], en)
		}
		args := make([]float64, len(x.Args))
		for i, a := range x.Args {
			v, err := evalNode(a, en)
			if err != nil {
				return v, err
			}
			f, ok := v.AsNumber()
			if !ok {
				return Value{}, fmt.Errorf("%s: argument %d is %s, not a number", x.Fn, i+1, v)
			}
			args[i] = f
		}
		fn := Functions[x.Fn]
		return NumV(fn.F(args)), nil
	}
	return Value{}, fmt.Errorf("bad expression node %T", n)
}

func evalBinary(x *Binary, en Env) (Value, error) {
	l, err := evalNode(x.L, en)
	if x.Op == "and" || x.Op == "or" {
		// Short-circuit, so "scenario == \"tcp\" and goodput[tcp_a] ..."
		// never asks for a flow the scenario does not have.
		if err != nil {
			return l, err
		}
		if l.Truth() == (x.Op == "or") {
			return BoolV(l.Truth()), nil
		}
		r, err := evalNode(x.R, en)
		if err != nil {
			return r, err
		}
		return BoolV(r.Truth()), nil
	}
	if err != nil {
		return l, err
	}
	r, err := evalNode(x.R, en)
	if err != nil {
		return r, err
	}
	if l.IsStr || r.IsStr {
		if x.Op == "==" || x.Op == "!=" {
			lf, lok := l.AsNumber()
			rf, rok := r.AsNumber()
			eq := l.Str == r.Str
			if !(l.IsStr && r.IsStr) && lok && rok {
				eq = lf == rf
			}
			return BoolV(eq == (x.Op == "==")), nil
		}
	}
	lf, lok := l.AsNumber()
	rf, rok := r.AsNumber()
	if !lok || !rok {
		return Value{}, fmt.Errorf("%q needs numbers, got %s and %s", x.Op, l, r)
	}
	switch x.Op {
	case "+":
		return NumV(lf + rf), nil
	case "-":
		return NumV(lf - rf), nil
	case "*":
		return NumV(lf * rf), nil
	case "/":
		if rf == 0 {
			return NumV(math.NaN()), fmt.Errorf("division by zero: %w", ErrMissing)
		}
		return NumV(lf / rf), nil
	case "<":
		return BoolV(lf < rf), nil
	case "<=":
		return BoolV(lf <= rf), nil
	case ">":
		return BoolV(lf > rf), nil
	case ">=":
		return BoolV(lf >= rf), nil
	case "==":
		return BoolV(lf == rf), nil
	case "!=":
		return BoolV(lf != rf), nil
	}
	return Value{}, fmt.Errorf("unknown operator %q", x.Op)
}

// Sides returns the operands of the top-level comparison, so a check can
// show the measured side next to its bound.
func (e *Expr) Sides() (l, r Node, op string, ok bool) {
	if b, isBin := e.Root.(*Binary); isBin {
		switch b.Op {
		case "<", "<=", ">", ">=", "==", "!=":
			return b.L, b.R, b.Op, true
		}
	}
	return nil, nil, "", false
}

// FmtNum renders a number with four significant digits.
func FmtNum(v float64) string {
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
