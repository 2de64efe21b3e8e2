package suite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
)

func TestMain(m *testing.M) {
	// this package's labs are all named tsu-*: other labs may be running
	testutil.Main(m, func() []string { return testutil.Mine(emu.Leaks(), "tsu-") })
}

func needRoot(t *testing.T) {
	t.Helper()
	testutil.NeedRoot(t)
}

// tinySuite loads testdata/good/tiny.yaml with edits applied.
func tinySuite(t *testing.T, edits ...string) *Suite {
	t.Helper()
	b, err := os.ReadFile("testdata/good/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("edit %q: not in tiny.yaml", edits[i])
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	s, err := Load("tiny.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runTiny(t *testing.T, ctx context.Context, s *Suite, lab string) (*Outcome, string) {
	t.Helper()
	p, err := s.Plan("quick", PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, err := Run(ctx, p, Options{Dir: dir, Seed: 7, Lab: lab})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out, dir
}

// TestRunTinySuite runs a two-scenario suite end to end (a few seconds)
// and checks the results directory.
func TestRunTinySuite(t *testing.T) {
	needRoot(t)
	out, dir := runTiny(t, context.Background(), tinySuite(t), "tsu-e2e")
	if out.Verdict != "pass" || out.ExitCode() != 0 || len(out.Runs) != 2 {
		t.Fatalf("verdict %s (exit %d), %d runs: %+v", out.Verdict, out.ExitCode(), len(out.Runs), out.Checks)
	}
	for _, f := range []string{"report.md", "runs.csv", "checks.csv", "outcome.json", "analysis/report.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	if pngs, _ := filepath.Glob(filepath.Join(dir, "plots", "*.png")); len(pngs) == 0 {
		t.Error("no plots")
	}
	report, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"# tsu-tiny", "**Verdict: PASS**", "| PASS | C1 | physics |", "| ref | R1 | reference |",
		"| 100 % |", "## Scenarios", "rate=40mbit", "## Conditions", "| netns_settle | before every deploy",
		"## What limited the flows", "| rate=40mbit | bulk |"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "runs.csv"))
	if lines := strings.Count(string(csv), "\n"); lines != 3 || !strings.Contains(string(csv), "goodput[bulk]") ||
		!strings.Contains(string(csv), "limited_net[bulk]") {
		t.Errorf("runs.csv (%d lines):\n%s", lines, csv)
	}
	results, err := analysis.LoadDir(filepath.Join(dir, "runs"))
	if err != nil || len(results) != 2 {
		t.Fatalf("raw results: %d, %v", len(results), err)
	}
	for _, r := range results {
		if !strings.HasPrefix(r.Result.Scenario, "rate=") || r.Result.Repetition != 1 || r.Result.Conditions["suite"] != "tsu-tiny" {
			t.Errorf("raw result %s: scenario %q rep %d", r.Path, r.Result.Scenario, r.Result.Repetition)
		}
		if c := r.Result.Conditions["netns_settle"]; !strings.Contains(c, "settled") {
			t.Errorf("raw result %s: netns_settle %q", r.Path, c)
		}
	}
	if c := out.Conditions["netns_settle"]; !strings.HasPrefix(c, "before every deploy") {
		t.Errorf("outcome netns_settle %q", c)
	}
	for i, r := range out.Runs {
		t.Logf("%s: netns_settle %s (%.2f s)", r.ID, r.NetnsSettle, r.NetnsSettleS)
		// the first run holds the full second; the later ones follow a
		// 2-namespace lab: the short hold
		hold := netnsSettleHoldSmall
		if i == 0 {
			hold = netnsSettleHold
		}
		if r.NetnsSettle == "" || r.NetnsSettleS < hold.Seconds() || !strings.Contains(r.NetnsSettle, "for "+holdText(hold)) {
			t.Errorf("%s: netns settle %q after %.2f s", r.ID, r.NetnsSettle, r.NetnsSettleS)
		}
		if g := r.Metrics["goodput"]; g < 15 || g > 39 {
			t.Errorf("%s: goodput %v Mbit/s", r.ID, g)
		}
	}
	if leaks := testutil.Mine(emu.Leaks(), "tsu-"); len(leaks) > 0 {
		t.Errorf("left behind: %v", leaks)
	}
}

// TestRunTinySuiteOverMachines runs the tiny suite with its two hosts on
// two local machines (the link between them cut, a VXLAN tunnel): every
// lab is deployed over both, the native engine runs each flow's ends on
// their machines and the probe on the client's, and the checks hold as on
// one machine — goodput within capacity, the RTT floor, cc read back, the
// link's queue (sampled where it is) within its bound of 50 packets + the
// one in transmission, its engine's counters adding up.
func TestRunTinySuiteOverMachines(t *testing.T) {
	needRoot(t)
	s := tinySuite(t, "topology:\n  nodes:\n    h1: {}\n    h2: {}", `topology:
  machines:
    m1: {ssh: local, underlay: 192.168.250.1}
    m2: {ssh: local, underlay: 192.168.250.2}
  nodes:
    h1: {machine: m1}
    h2: {machine: m2}`, "checks:\n", `checks:
  - id: Q1
    class: physics
    title: the queue within its bound (sampled on h1's machine)
    per: run
    expect: queue_p95[h1->h2] <= 51
  - id: Q2
    class: physics
    title: the link's engine counters (read on h1's machine)
    per: run
    expect: link_out[h1->h2] > 1000 and link_in[h1->h2] == link_out[h1->h2] + queue_drops[h1->h2]
`)
	out, dir := runTiny(t, context.Background(), s, "tsu-cl")
	if out.Verdict != "pass" || out.ExitCode() != 0 || len(out.Runs) != 2 {
		t.Fatalf("verdict %s (exit %d), %d runs: %+v", out.Verdict, out.ExitCode(), len(out.Runs), out.Checks)
	}
	for _, c := range out.Checks {
		if c.ID == "Q1" || c.ID == "Q2" {
			t.Logf("%s %s: %s, %+v", c.ID, c.Title, c.Status, c.Items)
			if c.Status != StatusPass || len(c.Items) != 2 {
				t.Errorf("%s: %s with %d items: %+v", c.ID, c.Status, len(c.Items), c.Items)
			}
		}
	}
	results, err := analysis.LoadDir(filepath.Join(dir, "runs"))
	if err != nil || len(results) != 2 {
		t.Fatalf("raw results: %d, %v", len(results), err)
	}
	for _, r := range results {
		c := r.Result.Conditions
		t.Logf("%s: machines %q, clock offset %q, %d probes", r.Result.Scenario, c["machines"], c["clock_offset[m1->m2]"], len(r.Result.Probes))
		if c["machines"] != "m1, m2" || c["clock_offset[m1->m2]"] == "" || len(r.Result.Probes) != 1 || c["sysctl.h2.net.ipv4.tcp_sack"] == "" {
			t.Errorf("%s: conditions %v", r.Result.Scenario, c)
		}
	}
	for _, r := range out.Runs {
		if g := r.Metrics["goodput"]; g < 15 || g > 39 {
			t.Errorf("%s: goodput %v Mbit/s", r.ID, g)
		}
	}
}

// TestRunFailingPhysicsCheck: a physics check that cannot hold makes the
// suite fail with exit code 1.
func TestRunFailingPhysicsCheck(t *testing.T) {
	needRoot(t)
	s := tinySuite(t, "expect: goodput[bulk] <= 1.02 * cap(rate)", "expect: goodput[bulk] <= 0.5 * cap(rate)")
	out, _ := runTiny(t, context.Background(), s, "tsu-fail")
	if out.Verdict != "fail" || out.ExitCode() != 1 {
		t.Errorf("verdict %s, exit %d", out.Verdict, out.ExitCode())
	}
	for _, c := range out.Checks {
		if c.ID == "C1" && (c.Status != StatusFail || len(c.Items) != 2) {
			t.Errorf("C1: %s, %d items", c.Status, len(c.Items))
		}
	}
}

// TestRunInterrupted: Ctrl-C (a cancelled context) stops the flows, tears
// the lab down, keeps the partial run and the report.
func TestRunInterrupted(t *testing.T) {
	needRoot(t)
	s := tinySuite(t, "quick: {duration: 2s, warmup: 500ms, reps: 1}", "quick: {duration: 60s, warmup: 500ms, reps: 1}")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(2500*time.Millisecond, cancel)
	start := time.Now()
	out, dir := runTiny(t, ctx, s, "tsu-int")
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("stopping took %v", took)
	}
	if !out.Interrupted || out.Verdict != "interrupted" || out.ExitCode() != 130 {
		t.Errorf("interrupted %v, verdict %s, exit %d", out.Interrupted, out.Verdict, out.ExitCode())
	}
	if len(out.Runs) != 1 || !out.Runs[0].Interrupted {
		t.Fatalf("runs: %+v", out.Runs)
	}
	if leaks := testutil.Mine(emu.Leaks(), "tsu-"); len(leaks) > 0 {
		t.Errorf("left behind after Ctrl-C: %v", leaks)
	}
	if _, err := os.Stat(filepath.Join(dir, out.Runs[0].File)); err != nil {
		t.Errorf("partial result not kept: %v", err)
	}
	report, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(report), "Interrupted (Ctrl-C)") {
		t.Error("report does not say it was interrupted")
	}
}
