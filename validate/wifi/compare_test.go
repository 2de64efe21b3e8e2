package main

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestScenarioNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, sc := range scenarios() {
		if seen[sc.name] {
			t.Errorf("scenario %q twice", sc.name)
		}
		seen[sc.name] = true
		if len(sc.checked) == 0 {
			t.Errorf("%s checks nothing", sc.name)
		}
	}
}

// Every explained row must name a scenario and a metric it checks, so a
// renamed scenario cannot leave a stale excuse behind.
func TestExplainedRowsExist(t *testing.T) {
	byName := map[string]scenario{}
	for _, sc := range scenarios() {
		byName[sc.name] = sc
	}
	for key, why := range explained {
		name, metric, ok := strings.Cut(key, " ")
		sc, found := byName[name]
		switch {
		case !ok:
			t.Errorf("explained %q: want \"scenario metric\"", key)
		case !found:
			t.Errorf("explained %q: no scenario %q", key, name)
		case !slices.Contains(sc.checked, metric):
			t.Errorf("explained %q: %s does not check %s (checks %v)", key, name, metric, sc.checked)
		case why == "":
			t.Errorf("explained %q: no reason", key)
		}
	}
}

func f(v float64) *float64 { return &v }

func TestJudge(t *testing.T) {
	sc := scenario{name: "x", checked: []string{"goodput_mbps", "collision_p"}}
	for _, tc := range []struct {
		metric    string
		ns3, ours *float64
		want      string
	}{
		{"goodput_mbps", f(30), f(30.9), vOK},
		{"goodput_mbps", f(30), f(28.6), vOK},
		{"goodput_mbps", f(30), f(31.6), vFail},
		{"goodput_mbps", f(30), f(28.4), vFail},
		{"goodput_mbps", f(0), f(0.001), vOK},  // both ≈ 0
		{"goodput_mbps", f(0), f(5), vFail},    // ratio +Inf
		{"collision_p", f(0.1), nil, vFail},    // ours did not report it
		{"min/max_station", f(1), f(2), vInfo}, // not checked
	} {
		got := judge(sc, tc.metric, tc.ns3, tc.ours, true)
		if got.Verdict != tc.want {
			t.Errorf("%s %v vs %v: verdict %s, want %s", tc.metric, num(tc.ns3), num(tc.ours), got.Verdict, tc.want)
		}
	}
	if r := judge(sc, "goodput_mbps", f(0), f(5), true); r.Ratio == nil || !math.IsInf(*r.Ratio, 1) {
		t.Errorf("ratio of 5 to 0: %v, want +Inf", num(r.Ratio))
	}
	if r := judge(sc, "goodput_mbps", f(30), nil, false); r.Verdict != vNS3Only {
		t.Errorf("ns-3 only run: verdict %s", r.Verdict)
	}
}

func TestJudgeExplained(t *testing.T) {
	key := "range-pd-a6-100m goodput_mbps"
	if _, ok := explained[key]; !ok {
		t.Skipf("%s is no longer explained", key)
	}
	sc := scenario{name: "range-pd-a6-100m", checked: []string{"goodput_mbps"}}
	r := judge(sc, "goodput_mbps", f(0), f(5.27), true)
	if r.Verdict != vExplained || r.Reason == "" {
		t.Errorf("verdict %s (%s), want explained with a reason", r.Verdict, r.Reason)
	}
}
