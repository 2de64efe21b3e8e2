package expr

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// mapEnv resolves names from a map; a missing name is ErrMissing.
type mapEnv map[string]Value

func (m mapEnv) Lookup(r *Ref) (Value, error) {
	key := r.Name
	if r.HasArg {
		key += "[" + r.Arg + "]"
	}
	for _, s := range r.Sel {
		key += "{" + s.Param + "=" + s.Label + "}"
	}
	v, ok := m[key]
	if !ok {
		return Value{}, Missing("%s", key)
	}
	return v, nil
}

func TestExprEval(t *testing.T) {
	env := mapEnv{
		"goodput":             NumV(51.6),
		"goodput[bulk]":       NumV(9.5),
		"goodput{sack=on}":    NumV(10),
		"goodput{sack=off}":   NumV(5),
		"cc[bulk]":            StrV("reno"),
		"sysctl[h1:tcp_sack]": StrV("1"),
		"scenario":            StrV("tcp"),
	}
	cases := []struct {
		expr string
		want float64
	}{
		{"1 + 2 * 3", 7},
		{"(1 + 2) * 3", 9},
		{"-2 - -3", 1},
		{"5%", 0.05},
		{"2ms + 1s", 1002},
		{"54mbit", 54},
		{"500kbit", 0.5},
		{"goodput <= 1.02 * cap(54mbit)", 1},
		{"goodput{sack=on} / goodput{sack=off} - 1 >= 15%", 1},
		{"cc[bulk] == \"reno\"", 1},
		{"cc[bulk] != \"cubic\"", 1},
		{"sysctl[h1:tcp_sack] == 1", 1},
		{"sysctl[h1:tcp_sack] + 0", 1},
		{"not 1 > 2", 1},
		{"1 < 2 && 2 < 3", 1},
		{"1 > 2 || 2 < 3", 1},
		// short-circuit: the missing flow is never asked for
		{"scenario == \"tcp\" or goodput[nope] > 0", 1},
		{"scenario != \"tcp\" and goodput[nope] > 0", 0},
		{"max(1, 5, 3) + min(4, 2)", 7},
		{"if(scenario == \"tcp\", 1, goodput[nope])", 1},
		{"if(1 > 2, goodput[nope], 2)", 2},
		{"abs(-3) + sqrt(16)", 7},
		{"sig(f_tack(48, 10), 3)", 400},
		{"sig(f_tack(200, 80), 3)", 50},
		{"sig(f_tack(7.056, 10), 3)", 294},
		{"sig(f_tack(200, 10) / f_tcp(200, 1), 2) == 0.024", 1},
		{"sig(pivot(10), 3) == 9.6", 1},
		{"round(qdelay(100, 10mbit), 2)", 121.12},
		{"round(cap(12mbit), 3)", 11.477},
		{"round(mathis(5.5, 1%), 1)", 25.7},
	}
	for _, c := range cases {
		e, perr := Parse(c.expr)
		if perr != nil {
			t.Errorf("%s: %v", c.expr, perr)
			continue
		}
		v, err := e.Eval(env)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if f, _ := v.AsNumber(); math.Abs(f-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.expr, f, c.want)
		}
	}
}

func TestExprMissingAndErrors(t *testing.T) {
	env := mapEnv{"goodput": NumV(1)}
	e, _ := Parse("goodput[nope] > 0 and goodput > 0")
	if _, err := e.Eval(env); !errors.Is(err, ErrMissing) {
		t.Errorf("missing flow: %v", err)
	}
	e, _ = Parse("goodput / 0")
	if _, err := e.Eval(env); !errors.Is(err, ErrMissing) {
		t.Errorf("division by zero: %v", err)
	}
	bad := []struct{ expr, msg string }{
		{"goodput >", "expected a number"},
		{"1 < 2 < 3", "comparisons do not chain"},
		{"goodput{sack}", "want param=label"},
		{"(1 + 2", `expected ")"`},
		{"[x]", "must follow a metric name"},
		{"\"open", "unterminated string"},
		{"5furlongs", "unknown unit"},
		{"goodput # 2", "unexpected character"},
	}
	for _, b := range bad {
		if _, err := Parse(b.expr); err == nil || !strings.Contains(err.Msg, b.msg) {
			t.Errorf("%q: got %v, want %q", b.expr, err, b.msg)
		}
	}
}

func TestExprOffsets(t *testing.T) {
	_, err := Parse("goodput{sack=on} >= (1 +")
	if err == nil || err.Off != 24 {
		t.Fatalf("offset: %+v", err)
	}
	e, _ := Parse("abs(loss_rate[sta->ap] - loss)")
	var refs []*Ref
	Walk(e.Root, func(n Node) {
		if r, ok := n.(*Ref); ok {
			refs = append(refs, r)
		}
	})
	if len(refs) != 2 || refs[0].Arg != "sta->ap" || refs[0].Off != 4 || refs[0].ArgOff != 14 || refs[1].Off != 25 {
		t.Errorf("refs: %+v %+v", refs[0], refs[1])
	}
}

func TestScalarNumber(t *testing.T) {
	for in, want := range map[string]float64{"5%": 0.05, "0%": 0, "54mbit": 54, "2ms": 2, "100": 100, "true": 1, "off": 0, "1.5s": 1500} {
		if got, ok := ScalarNumber(in); !ok || math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: %v %v, want %v", in, got, ok, want)
		}
	}
	if _, ok := ScalarNumber("cubic"); ok {
		t.Error("cubic read as a number")
	}
}
