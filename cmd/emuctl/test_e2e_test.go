package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
)

// TestTestCLI runs `emuctl test` as a user types it: --list, validate on
// suite files, a tiny suite end to end, a bad suite file, and Ctrl-C.
func TestTestCLI(t *testing.T) {
	r := must(t, run(t, "", "test", "--list"))
	for _, s := range []string{"asym-mptcp", "bufferbloat", "cc-mlo", "sack-reno", "tack", "wifi-physics"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("--list lacks %s:\n%s", s, r.stdout)
		}
	}
	files, _ := filepath.Glob("../../topologies/suites/*.yaml")
	args := []string{"validate"}
	for _, f := range files {
		rel, _ := filepath.Rel("../..", f)
		args = append(args, rel)
	}
	r = must(t, run(t, "", args...))
	if strings.Count(r.stdout, ": ok (suite ") != len(files) || len(files) < 5 {
		t.Errorf("validate suites:\n%s", r.stdout)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("suite: tsu-bad\ntopology: {nodes: {h1: {}, h2: {}}, links: [{endpoints: [h1, h2]}]}\nflows: [{from: h1, to: h3}]\nchecks: []\n"), 0o644)
	for _, cmd := range [][]string{{"validate", bad}, {"test", bad}} {
		if r = run(t, "", cmd...); r.code != 1 || !strings.Contains(r.stderr, bad+":3:9: flows[0]") {
			t.Errorf("%v: exit %d\n%s", cmd, r.code, r.stderr)
		}
	}
	if r = run(t, "", "test", "sack-renoo"); r.code == 0 || !strings.Contains(r.stderr, `did you mean "sack-reno"`) {
		t.Errorf("unknown suite: exit %d\n%s", r.code, r.stderr)
	}

	needRoot(t)
	out := t.TempDir()
	r = must(t, run(t, "", "test", "suite/testdata/good/tiny.yaml", "--quick", "--out", out, "--seed", "3"))
	for _, want := range []string{"tsu-tiny — tiny test suite", "PASS  C1", "ref   R1", "verdict: PASS", "report: " + out} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "[2/2] rate=") {
		t.Errorf("no progress lines on stderr:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "tsu-tiny", "latest", "report.md")); err != nil {
		t.Errorf("results: %v", err)
	}
	r = must(t, run(t, "", "test", "suite/testdata/good/tiny.yaml", "--quick", "--out", out, "--json"))
	if !strings.Contains(r.stdout, `"verdict": "pass"`) || !strings.Contains(r.stdout, `"checks": [`) {
		t.Errorf("--json:\n%.400s", r.stdout)
	}

	// Ctrl-C in the middle of a run: exit 130, nothing left behind.
	long := filepath.Join(t.TempDir(), "long.yaml")
	b, _ := os.ReadFile("../../suite/testdata/good/tiny.yaml")
	os.WriteFile(long, bytes.Replace(b, []byte("duration: 3s, warmup: 1s"), []byte("duration: 60s, warmup: 1s"), 1), 0o644)
	cmd := exec.Command(bin, "test", long, "--out", out)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("Ctrl-C: %v\nstdout: %s\nstderr: %s", err, o.String(), e.String())
	}
	if !strings.Contains(e.String(), "stopping") || !strings.Contains(o.String(), "verdict: INTERRUPTED") {
		t.Errorf("Ctrl-C output:\n%s\n%s", o.String(), e.String())
	}
	for _, l := range emu.Leaks() {
		if strings.Contains(l, "tsu-tiny-") {
			t.Errorf("left behind after Ctrl-C: %s", l)
		}
	}
}
