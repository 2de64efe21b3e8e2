package suite

import (
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
)

// fakeRun makes a run whose flow "bulk" delivers mbps for 4 s, with the
// given congestion control read back.
func fakeRun(t *testing.T, sc *Scenario, rep int, mbps float64, cc string) *RunRecord {
	t.Helper()
	f := analysis.Flow{ID: "bulk", Proto: "tcp", CC: cc, From: "h1", To: "h2", StartS: 0, EndS: 4}
	for i := 1; i <= 40; i++ {
		b := int64(mbps * 1e6 / 8 / 10)
		f.Samples = append(f.Samples, analysis.Sample{TS: float64(i) / 10, Bytes: b, GoodputBps: float64(b) * 80,
			TCP: &analysis.TCPInfo{SrttUs: 5000, MinRttUs: 4100, CwndSegs: 10, CwndBytes: 14480}})
	}
	res := &analysis.Result{Version: 1, Start: time.Unix(1e9, 0), DurationS: 4, Flows: []analysis.Flow{f},
		Conditions: map[string]string{}}
	rd := newRunData(res, 1, nil, cpuLoad{Max: 0.3, Peak: 0.4, OK: true})
	rd.idle = map[string]float64{"bulk": 2.2}
	return &RunRecord{ID: runID(sc, rep, 1), Scenario: sc.Name, Labels: sc.Labels, Rep: rep, Attempt: 1, data: rd}
}

func tinyPlan(t *testing.T) *Plan {
	t.Helper()
	s, err := LoadFile("testdata/good/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan("default", PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func judged(p *Plan, runs []*RunRecord) (*Outcome, map[string]*CheckResult) {
	ev := newEvaluator(p, runs)
	for _, r := range runs {
		r.Invalid = ev.fidelity(r)
	}
	o := &Outcome{Runs: runs, Checks: ev.judgeAll()}
	o.Verdict = verdict(o)
	by := map[string]*CheckResult{}
	for _, c := range o.Checks {
		by[c.ID] = c
	}
	return o, by
}

func TestChecksPass(t *testing.T) {
	p := tinyPlan(t)
	slow, fast := p.Scenarios[0], p.Scenarios[1]
	runs := []*RunRecord{fakeRun(t, slow, 1, 19, "reno"), fakeRun(t, fast, 1, 38, "reno"), fakeRun(t, fast, 2, 36, "reno")}
	o, by := judged(p, runs)
	for id, want := range map[string]string{"C1": StatusPass, "C3": StatusPass, "F1": StatusPass, "B1": StatusPass, "R1": StatusInfo} {
		if by[id].Status != want {
			t.Errorf("%s: %s (%s), want %s", id, by[id].Status, by[id].Measured, want)
		}
	}
	// scenario-level values are medians over repetitions: (38+36)/2 / 19
	if by["B1"].Measured != "1.947" {
		t.Errorf("B1 measured %q", by["B1"].Measured)
	}
	if !strings.HasPrefix(by["R1"].Measured, "99.3 %") {
		t.Errorf("R1 (unit %%) shows %q", by["R1"].Measured)
	}
	if o.Verdict != "pass" || o.ExitCode() != 0 {
		t.Errorf("verdict %s, exit %d", o.Verdict, o.ExitCode())
	}
}

func TestPhysicsFailureFailsTheSuite(t *testing.T) {
	p := tinyPlan(t)
	// 25 Mbit/s through a 20 Mbit/s link: an emulator bug.
	runs := []*RunRecord{fakeRun(t, p.Scenarios[0], 1, 25, "reno"), fakeRun(t, p.Scenarios[1], 1, 38, "reno")}
	o, by := judged(p, runs)
	if by["C1"].Status != StatusFail || o.Verdict != "fail" || o.ExitCode() != 1 {
		t.Errorf("C1 %s, verdict %s, exit %d", by["C1"].Status, o.Verdict, o.ExitCode())
	}
	if len(by["C1"].Items) != 2 || *by["C1"].Items[0].OK || !*by["C1"].Items[1].OK {
		t.Errorf("items: %+v", by["C1"].Items)
	}
}

func TestBehaviourFailure(t *testing.T) {
	p := tinyPlan(t)
	runs := []*RunRecord{fakeRun(t, p.Scenarios[0], 1, 19, "reno"), fakeRun(t, p.Scenarios[1], 1, 15, "reno")}
	o, by := judged(p, runs)
	if by["B1"].Status != StatusFail || o.ExitCode() != 1 {
		t.Errorf("B1 %s, exit %d", by["B1"].Status, o.ExitCode())
	}
}

func TestFidelityFailureInvalidatesRuns(t *testing.T) {
	p := tinyPlan(t)
	// The fast scenario's only run used cubic: invalid, so B1 cannot be
	// judged and the verdict is inconclusive, not a pass or a fail.
	bad := fakeRun(t, p.Scenarios[1], 1, 5, "cubic")
	o, by := judged(p, []*RunRecord{fakeRun(t, p.Scenarios[0], 1, 19, "reno"), bad})
	if len(bad.Invalid) != 1 || !strings.HasPrefix(bad.Invalid[0], "F1") || bad.Valid() {
		t.Fatalf("invalid: %v", bad.Invalid)
	}
	if by["F1"].Status != StatusInvalid || by["B1"].Status != StatusNA || by["C1"].Status != StatusPass {
		t.Errorf("F1 %s, B1 %s, C1 %s", by["F1"].Status, by["B1"].Status, by["C1"].Status)
	}
	if !strings.Contains(by["B1"].Reason, "no valid run of rate=40mbit") {
		t.Errorf("B1 reason %q", by["B1"].Reason)
	}
	if o.Verdict != "inconclusive" || o.ExitCode() != 2 {
		t.Errorf("verdict %s, exit %d", o.Verdict, o.ExitCode())
	}
}

func TestSkipOutsideProfileAndInterrupted(t *testing.T) {
	p := tinyPlan(t)
	p.Scenarios = p.Scenarios[:1] // as if the profile only had 20mbit
	o, by := judged(p, []*RunRecord{fakeRun(t, p.Scenarios[0], 1, 19, "reno")})
	// B1 compares 40mbit with 20mbit: a scenario this profile does not
	// have is nothing to judge (skip, as a check whose where: matches
	// nothing), not a missing measurement (n/a, which is inconclusive)
	if by["B1"].Status != StatusSkip || !strings.Contains(by["B1"].Reason, "in this profile") || by["R1"].Status != StatusInfo {
		t.Errorf("B1 %s (%q), R1 %s", by["B1"].Status, by["B1"].Reason, by["R1"].Status)
	}
	if o.ExitCode() != 0 {
		t.Errorf("a profile without B1's scenarios: verdict %s, exit %d", o.Verdict, o.ExitCode())
	}
	o.Interrupted = true
	o.Checks = nil
	if o.Verdict = verdict(o); o.ExitCode() != 130 {
		t.Errorf("interrupted: verdict %s, exit %d", o.Verdict, o.ExitCode())
	}
}

func TestMonotone(t *testing.T) {
	m := &Monotone{Increasing: true, Slack: 0.1, Inversions: 1}
	for _, c := range []struct {
		seq []float64
		ok  bool
	}{
		{[]float64{1, 2, 3}, true},
		{[]float64{1, 2, 1.9, 3}, true},    // one small inversion
		{[]float64{1, 2, 1.9, 1.8}, false}, // two
		{[]float64{1, 2, 1.5, 3}, false},   // beyond the slack
	} {
		if got := monotoneOK(c.seq, m); got != c.ok {
			t.Errorf("%v: %v", c.seq, got)
		}
	}
	if !monotoneOK([]float64{3, 2, 1}, &Monotone{}) {
		t.Error("decreasing")
	}
}
