package suite

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// mapEnv resolves names from a map; a missing name is errMissing.
type mapEnv map[string]value

func (m mapEnv) lookup(r *ref) (value, error) {
	key := r.name
	if r.hasArg {
		key += "[" + r.arg + "]"
	}
	for _, s := range r.sel {
		key += "{" + s.param + "=" + s.label + "}"
	}
	v, ok := m[key]
	if !ok {
		return value{}, missing("%s", key)
	}
	return v, nil
}

func TestExprEval(t *testing.T) {
	env := mapEnv{
		"goodput":             numV(51.6),
		"goodput[bulk]":       numV(9.5),
		"goodput{sack=on}":    numV(10),
		"goodput{sack=off}":   numV(5),
		"cc[bulk]":            strV("reno"),
		"sysctl[h1:tcp_sack]": strV("1"),
		"scenario":            strV("tcp"),
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
		e, perr := parseExpr(c.expr)
		if perr != nil {
			t.Errorf("%s: %v", c.expr, perr)
			continue
		}
		v, err := e.eval(env)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if f, _ := v.asNumber(); math.Abs(f-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.expr, f, c.want)
		}
	}
}

func TestExprMissingAndErrors(t *testing.T) {
	env := mapEnv{"goodput": numV(1)}
	e, _ := parseExpr("goodput[nope] > 0 and goodput > 0")
	if _, err := e.eval(env); !errors.Is(err, errMissing) {
		t.Errorf("missing flow: %v", err)
	}
	e, _ = parseExpr("goodput / 0")
	if _, err := e.eval(env); !errors.Is(err, errMissing) {
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
		if _, err := parseExpr(b.expr); err == nil || !strings.Contains(err.msg, b.msg) {
			t.Errorf("%q: got %v, want %q", b.expr, err, b.msg)
		}
	}
}

func TestExprOffsets(t *testing.T) {
	_, err := parseExpr("goodput{sack=on} >= (1 +")
	if err == nil || err.off != 24 {
		t.Fatalf("offset: %+v", err)
	}
	e, _ := parseExpr("abs(loss_rate[sta->ap] - loss)")
	var refs []*ref
	walk(e.root, func(n node) {
		if r, ok := n.(*ref); ok {
			refs = append(refs, r)
		}
	})
	if len(refs) != 2 || refs[0].arg != "sta->ap" || refs[0].off != 4 || refs[0].argOff != 14 || refs[1].off != 25 {
		t.Errorf("refs: %+v %+v", refs[0], refs[1])
	}
}

func TestScalarNumber(t *testing.T) {
	for in, want := range map[string]float64{"5%": 0.05, "0%": 0, "54mbit": 54, "2ms": 2, "100": 100, "true": 1, "off": 0, "1.5s": 1500} {
		if got, ok := scalarNumber(in); !ok || math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: %v %v, want %v", in, got, ok, want)
		}
	}
	if _, ok := scalarNumber("cubic"); ok {
		t.Error("cubic read as a number")
	}
}
