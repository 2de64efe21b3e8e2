package suite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/suite/expr"
)

// refSuite is a sack-reno-like suite with an ns-3 reference block that
// covers only the wired hop.
const refSuite = `
suite: tsu-ref
params:
  loss: {1%: {p: 1%}, 5%: {p: 5%}}
  sack: {on: true, off: false}
  hop: [wired, wifi]
profiles:
  quick: {duration: 10s, warmup: 2s, reps: 1}
topology:
  nodes: {sta: {}, srv: {}}
  links:
    - endpoints: [sta, srv]
      link: {rate: 54mbit, a->b: {loss: "${loss.p}"}}
flows:
  - {name: bulk, from: sta, to: srv, proto: tcp, cc: reno}
checks:
  - {id: C1, class: physics, per: run, expect: "goodput_whole <= 1.02 * cap(54mbit)", unit: Mbit/s}
  - {id: F1, class: fidelity, per: run, expect: "cpu_total <= 90%"}
  - {id: C5, class: physics, per: run, expect: "abs(loss_rate[sta->srv] - loss.p) <= 3 * binom_sigma(loss.p, link_in[sta->srv])"}
  - id: G5
    class: reference
    for: hop
    where: {loss: 5%}
    expect: goodput{sack=on} / goodput{sack=off} - 1 >= 10%
    show: goodput{sack=on} / goodput{sack=off} - 1
    unit: "%"
    paper: "+15-20 %"
  - {id: R4, class: reference, where: {loss: 5%, hop: wired}, show: "rtos{sack=on} / rtos{sack=off}"}
reference:
  ns3:
    program: sack-reno
    where: {hop: wired}
    args: ["--loss=${loss.p}", "--sack=${sack}", "--time=${duration}"]
    reps: 3
    differs: {G5: "RACK and TLP"}
    note: a note
`

func refPlan(t *testing.T) *Plan {
	t.Helper()
	s, err := Load("ref.yaml", []byte(refSuite))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan("quick", PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReferenceArgsPerScenario(t *testing.T) {
	p := refPlan(t)
	r := p.Suite.Reference["ns3"]
	if r == nil || r.Program != "sack-reno" || r.Reps != 3 || r.Differs["G5"] != "RACK and TLP" || r.Note != "a note" {
		t.Fatalf("decoded %+v", r)
	}
	if want := []string{"--loss=${loss.p}", "--sack=${sack}", "--time=${duration}"}; !reflect.DeepEqual(r.Args, want) {
		t.Errorf("args as written %q", r.Args)
	}
	covered := 0
	for _, sc := range p.Scenarios {
		args, ok := sc.ReferenceArgs("ns3")
		if sc.Labels["hop"] == "wifi" {
			if ok {
				t.Errorf("%s: covered, want left out (where: hop=wired)", sc.Name)
			}
			continue
		}
		covered++
		want := []string{"--loss=" + sc.Labels["loss"], "--sack=" + map[string]string{"on": "true", "off": "false"}[sc.Labels["sack"]], "--time=10s"}
		if !reflect.DeepEqual(args, want) {
			t.Errorf("%s: args %q, want %q", sc.Name, args, want)
		}
	}
	if covered != 4 {
		t.Errorf("%d scenarios covered, want 4", covered)
	}
}

func TestCheckReference(t *testing.T) {
	p := refPlan(t)
	if err := checkReference(p.Suite, "ns3"); err != nil {
		t.Error(err)
	}
	if err := checkReference(p.Suite, "omnet"); err == nil || !strings.Contains(err.Error(), "unknown engine") {
		t.Errorf("omnet: %v", err)
	}
	p.Suite.Reference = nil
	err := checkReference(p.Suite, "ns3")
	if err == nil || !strings.Contains(err.Error(), "built-in suites with one: ") || !strings.Contains(err.Error(), "sack-reno") {
		t.Errorf("no block: %v", err)
	}
}

// ns3Line is what sack-reno prints (fields trimmed), with goodput g, rtos
// and loss drops.
func ns3Line(g float64, rtos, drops int) []byte {
	return []byte(`{"program":"sack-reno","flows":{"bulk":{"proto":"tcp","cc":"linux-reno","goodput_mbps":` + expr.FmtNum(g) +
		`,"goodput_whole_mbps":` + expr.FmtNum(g*0.9) + `,"srtt_ms":5.1,"srtt_p95_ms":null,"segments_sent":1000,"retrans":50,"rtos":` +
		expr.FmtNum(float64(rtos)) + `,"tlps":0,"recoveries":20,"recovery_mean_ms":30,"cwnd_mean_bytes":14480}},` +
		`"links":{"sta->srv":{"in":1000,"loss_drops":` + expr.FmtNum(float64(drops)) + `,"queue_drops":0,"out":950,"queue_peak":3}},"cpu_s":0.25}`)
}

func TestRefConversion(t *testing.T) {
	rd, err := parseRefResult(ns3Line(10, 4, 50))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, arg string
		want      float64
	}{
		{"goodput", "", 10}, {"goodput", "bulk", 10}, {"goodput_whole", "", 9}, {"srtt", "", 5.1}, {"rtos", "bulk", 4},
		{"tlps", "", 0}, {"retrans_ratio", "", 0.05}, {"recovery_mean", "", 30}, {"cwnd_mean", "bulk", 14480},
		{"link_in", "sta->srv", 1000}, {"loss_rate", "sta->srv", 0.05}, {"queue_drop_ratio", "sta->srv", 0},
	} {
		v, err := rd.metric(c.name, c.arg)
		if err != nil || v.IsStr || abs(v.Num-c.want) > 1e-9 {
			t.Errorf("%s[%s] = %v, %v; want %g", c.name, c.arg, v.Num, err, c.want)
		}
	}
	// Not measured by the simulator (null, a lab's, an unknown flow): missing, never 0.
	for _, c := range [][2]string{{"srtt_p95", ""}, {"idle_rtt", "bulk"}, {"cpu_total", ""}, {"engine_late_mean", ""},
		{"goodput", "voice"}, {"owd_p95", ""}, {"jain", ""}, {"counter", "sta:TcpOutSegs"}} {
		if v, err := rd.metric(c[0], c[1]); err == nil {
			t.Errorf("%s[%s] = %v, want missing", c[0], c[1], v)
		}
	}
	m := refMetrics(rd)
	if m["goodput"] != 10 || m["goodput[bulk]"] != 10 || m["rtos"] != 4 {
		t.Errorf("standard metrics %v", m)
	}
	if _, err := parseRefResult([]byte(`{"flows":{}}`)); err == nil {
		t.Error("a result without flows converted")
	}
}

func TestRefConversionDumbbell(t *testing.T) {
	line := []byte(`{"program":"dumbbell","flows":{
	  "a":{"proto":"tcp","cc":"cubic","goodput_mbps":6,"retrans":3,"srtt_ms":20},
	  "b":{"proto":"tcp","cc":"bbr","goodput_mbps":2,"retrans":1,"srtt_ms":10},
	  "voice":{"proto":"udp","owd_mean_ms":12,"owd_p95_ms":15,"owd_p99_ms":16,"udp_loss":0.01,"jitter_ms":0.5}},
	  "links":{"hop1":{"in":10,"queue_drops":1,"loss_drops":0}},"cpu_s":1}`)
	rd, err := parseRefResult(line)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, arg string
		want      float64
	}{
		{"goodput", "", 8}, {"retrans", "", 4}, {"srtt", "", 15}, {"jain", "", 64.0 / (2 * 40)},
		{"owd_p95", "voice", 15}, {"owd_p95", "", 15}, {"owd_p99_unstalled", "voice", 16}, {"udp_loss", "", 0.01},
		{"jitter", "voice", 0.5}, {"queue_drop_ratio", "hop1", 0.1},
	} {
		v, err := rd.metric(c.name, c.arg)
		if err != nil || abs(v.Num-c.want) > 1e-9 {
			t.Errorf("%s[%s] = %v, %v; want %g", c.name, c.arg, v.Num, err, c.want)
		}
	}
}

// refRuns makes ns-3 runs of the wired scenarios: SACK on gives gOn,
// off gOff, both at 5 % loss with rtos each.
func refRuns(t *testing.T, p *Plan, gOn, gOff float64) []*RunRecord {
	t.Helper()
	var runs []*RunRecord
	for _, sc := range p.Scenarios {
		if _, ok := sc.ReferenceArgs("ns3"); !ok {
			continue
		}
		g := gOff
		if sc.Labels["sack"] == "on" {
			g = gOn
		}
		for rep := 1; rep <= 3; rep++ {
			rd, err := parseRefResult(ns3Line(g+float64(rep)/100, 4, 50))
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, &RunRecord{ID: "ns3-" + runID(sc, rep, 1), Scenario: sc.Name, Labels: sc.Labels, Rep: rep,
				Attempt: 1, ref: rd, Metrics: refMetrics(rd)})
		}
	}
	return runs
}

func TestJudgeReference(t *testing.T) {
	p := refPlan(t)
	// Linux: a check result as judgeAll gives it, G5 not holding on the
	// wired hop and holding on Wi-Fi.
	no, yes := false, true
	linux := make([]*CheckResult, len(p.Suite.Checks))
	for i, c := range p.Suite.Checks {
		linux[i] = &CheckResult{ID: c.ID, Class: c.Class, Unit: c.Unit, Paper: c.Paper, Measured: "x"}
	}
	linux[3].Items = []Item{{Where: "hop=wired", Value: "1.5", OK: &no}, {Where: "hop=wifi", Value: "0.12", OK: &yes}}
	linux[3].Holds, linux[3].HoldsIn, linux[3].Judged = &no, 1, 2
	ro := &RefOutcome{Engine: "ns3", Program: "sack-reno", Status: "ran", spec: p.Suite.Reference["ns3"], Note: "a note",
		Runs: refRuns(t, p, 11.5, 10)}
	judgeReference(p, ro, linux)

	if linux[1].Reference != nil {
		t.Errorf("fidelity check judged on ns-3: %+v", linux[1].Reference)
	}
	c1 := linux[0].Reference
	if c1 == nil || c1.Holds == nil || !*c1.Holds || !strings.Contains(c1.Measured, "(12 runs)") {
		t.Errorf("C1 on ns-3: %+v", c1)
	}
	if c5 := linux[2].Reference; c5 == nil || c5.Holds == nil || *c5.Holds {
		t.Errorf("C5 on ns-3 (5 %% configured on the 1 %% scenarios too: 50 of 1000 is 5 %%): %+v", c5)
	}
	g5 := linux[3].Reference
	// the median of 11.51..11.53 over 10.01..10.03: +15 %; only hop=wired
	// is the engine's, named because the Linux row has two items
	if g5 == nil || g5.Measured != "hop=wired: 15 %" || g5.Holds == nil || !*g5.Holds || g5.Differs != "RACK and TLP" {
		t.Fatalf("G5 on ns-3: %+v", g5)
	}
	if got := agreement(linux[3], "ns-3"); got != "ns-3, not Linux" {
		t.Errorf("agreement %q (judged on hop=wired only)", got)
	}
	if r4 := linux[4].Reference; r4 == nil || r4.Measured != "1" || r4.Holds != nil {
		t.Errorf("R4 on ns-3: %+v", r4)
	}

	o := &Outcome{Checks: linux, Reference: ro}
	if got := refColumn(o, linux[3]); got != "hop=wired: 15 % (holds)" {
		t.Errorf("G5 column %q", got)
	}
	if got := refColumn(o, linux[0]); !strings.HasSuffix(got, "(pass)") {
		t.Errorf("C1 column %q", got)
	}
	var b strings.Builder
	referenceSection(&b, o)
	for _, want := range []string{"## ns-3 beside Linux", "`validate/ns3/sack-reno.cc`", "`--loss=${loss.p} --sack=${sack} --time=${duration}`",
		"at least 3 per scenario", "a note", "| G5 |  | x | hop=wired: 15 % | +15-20 % | ns-3, not Linux | RACK and TLP |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("section lacks %q:\n%s", want, b.String())
		}
	}
}

func TestReferenceUnavailable(t *testing.T) {
	o := &Outcome{Reference: &RefOutcome{Engine: "ns3", Status: "unavailable", Reason: "ns-3 programs cannot be built: missing g++ (not on PATH)",
		Hint: "apt-get install libns3-dev g++"}}
	ref := &CheckResult{ID: "G5", Class: Reference}
	if got := refColumn(o, ref); got != "not run: `apt-get install libns3-dev g++`" {
		t.Errorf("reference row: %q", got)
	}
	if got := refColumn(o, &CheckResult{Class: Physics}); got != "" {
		t.Errorf("physics row: %q", got)
	}
	var b strings.Builder
	referenceSection(&b, o)
	if !strings.Contains(b.String(), "ns-3 did not run: ns-3 programs cannot be built: missing g++") || !strings.Contains(b.String(), "`apt-get install libns3-dev g++`") {
		t.Errorf("section:\n%s", b.String())
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestRunReference runs a stand-in program (a shell script printing a
// result line) through the runner: every covered scenario and seed once,
// the scenarios whose first run says it was deterministic only once, the
// flags the runner adds passed on, the lines kept, the metrics converted.
func TestRunReference(t *testing.T) {
	p := refPlan(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "fake")
	// deterministic at 1 % (standing in for "no random loss")
	script := `#!/bin/sh
det=false; case "$*" in *--loss=1%*) det=true;; esac
case "$*" in *"--warmup=2 --interval=0.1 --seed=7 --run="*) ;; *) echo "bad flags: $*" >&2; exit 2;; esac
echo '{"flows":{"bulk":{"proto":"tcp","goodput_mbps":10,"rtos":1}},"deterministic":'$det',"cpu_s":0.01}'
`
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &runner{plan: p, opt: Options{Dir: dir, Seed: 7}, prevNetns: -1}
	ro := &RefOutcome{Engine: "ns3", Program: "fake", Bin: prog, spec: p.Suite.Reference["ns3"]}
	r.runReference(context.Background(), ro)
	if ro.Status != "ran" || ro.Reason != "" {
		t.Fatalf("status %s: %s", ro.Status, ro.Reason)
	}
	// 4 wired scenarios × 3 seeds (reps: 3), the two at 1 % once each
	if len(ro.Runs) != 8 || ro.Skipped != 4 {
		t.Errorf("%d runs, %d skipped; want 8 and 4", len(ro.Runs), ro.Skipped)
	}
	for _, rec := range ro.Runs {
		if !rec.Valid() || rec.Metrics["goodput"] != 10 || rec.Labels["hop"] != "wired" {
			t.Errorf("%s: valid %v, metrics %v, error %q", rec.ID, rec.Valid(), rec.Metrics, rec.Error)
		}
		if _, err := os.Stat(filepath.Join(dir, rec.File)); err != nil {
			t.Errorf("%s: raw line not kept: %v", rec.ID, err)
		}
		if a := ro.Args[rec.ID]; len(a) == 0 || a[len(a)-1] != fmt.Sprintf("--run=%d", rec.Rep) {
			t.Errorf("%s: args %q", rec.ID, a)
		}
	}
}
