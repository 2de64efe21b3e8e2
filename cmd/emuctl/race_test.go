package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
)

// Two `up`s of the same lab at once: exactly one builds it, the other is
// refused without touching it, and the lab works.
func TestRaceTwoUps(t *testing.T) {
	needRoot(t)
	var wg sync.WaitGroup
	res := make([]result, 2)
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = run(t, "", "up", "--topo", "linear,30", "--name", "trace2")
		}()
	}
	wg.Wait()
	t.Cleanup(func() { run(t, "", "down", "trace2") })
	ok, refused := 0, 0
	for _, r := range res {
		switch {
		case r.code == 0:
			ok++
		case strings.Contains(r.stderr, "being changed by another emuctl process") || strings.Contains(r.stderr, "already exists"):
			refused++
		default:
			t.Errorf("unexpected outcome: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	if ok != 1 || refused != 1 {
		t.Fatalf("want one up built and one refused, got %d built, %d refused: %+v", ok, refused, res)
	}
	r := must(t, run(t, "pingall\n", "cli", "trace2"), "cli")
	if !strings.Contains(r.stdout, "0% dropped") {
		t.Errorf("lab built by the winner does not ping:\n%s", r.stdout)
	}
	must(t, run(t, "", "down", "trace2"), "down")
}

// Two `clean`s at once after a crashed up: both succeed, the crashed lab
// is removed once, and nothing is left.
func TestRaceTwoCleans(t *testing.T) {
	needRoot(t)
	cmd := exec.Command(bin, "up", "--topo", "linear,40", "--name", "trace3")
	cmd.Dir = "../.."
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 400; i++ { // kill it once it has made namespaces
		if ents, _ := os.ReadDir(emu.NetnsDir); len(ents) > 0 && hasPrefix(ents, "trace3.") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	var wg sync.WaitGroup
	res := make([]result, 2)
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = run(t, "", "clean")
		}()
	}
	wg.Wait()
	removed := 0
	for _, r := range res {
		if r.code != 0 {
			t.Errorf("clean: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		removed += strings.Count(r.stdout, "removed trace3")
	}
	if removed != 1 {
		t.Errorf("the crashed lab was reported removed %d times, want once: %+v", removed, res)
	}
	if left := emu.Leaks(); len(left) > 0 {
		t.Fatalf("left after two cleans: %v", left)
	}
}

func hasPrefix(ents []os.DirEntry, p string) bool {
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), p) {
			return true
		}
	}
	return false
}

// `down` of a suite's lab while `emuctl test` runs it: the down wins (or
// is told the lab is being changed, and wins on a retry), the suite says
// the run's lab was taken down, makes that run again, finishes with its
// report, and nothing is left.
func TestRaceDownDuringTest(t *testing.T) {
	needRoot(t)
	out := t.TempDir()
	cmd := exec.Command(bin, "test", "suite/testdata/good/tiny.yaml", "--quick", "--out", out, "--seed", "3")
	cmd.Dir = "../.."
	var o bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &o
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	downed := ""
	deadline := time.Now().Add(60 * time.Second)
	for downed == "" && time.Now().Before(deadline) {
		labs, _ := emu.Labs()
		for _, st := range labs {
			if strings.HasPrefix(st.Lab, "tsu-tiny-") && st.Status == emu.StatusUp {
				if r := run(t, "", "down", st.Lab); r.code == 0 {
					downed = st.Lab
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if downed == "" {
		cmd.Process.Kill()
		t.Fatalf("the suite's lab never came up:\n%s", o.String())
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("emuctl test did not finish after its lab was torn down:\n%s", o.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	t.Logf("emuctl test exit %d after `down %s`:\n%s", code, downed, o.String())
	if !strings.Contains(o.String(), "taken down during the run") || !strings.Contains(o.String(), "(retry 1)") {
		t.Errorf("the suite should say its run's lab was taken down and make the run again")
	}
	if code != 0 && code != 1 && code != 2 {
		t.Errorf("exit %d: want 0, 1 or 2", code)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "tsu-tiny", "*", "outcome.json")); len(m) == 0 {
		t.Errorf("no outcome.json: the suite did not write its report")
	}
	if left := emu.Leaks(); len(left) > 0 {
		t.Fatalf("left after the race: %v", left)
	}
}
