package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
)

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "emuctl-e2e")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "emuctl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	// Every shell the tests start (emuctl shell, cli's sh and xterm)
	// reads ~/.bashrc: the tests give them an empty home, so nothing in
	// the user's (a pyenv rehash waiting on a lock, say) slows a prompt
	// or is left half done when a test ends its shell. Go keeps its
	// caches (make release builds).
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if out, err := exec.Command("go", "env", v).Output(); err == nil && os.Getenv(v) == "" {
			os.Setenv(v, strings.TrimSpace(string(out)))
		}
	}
	home := filepath.Join(dir, "home")
	os.Mkdir(home, 0o700)
	os.Setenv("HOME", home)
	code := m.Run()
	os.RemoveAll(dir)
	if os.Geteuid() == 0 {
		if leaks := emu.Leaks(); len(leaks) > 0 {
			fmt.Fprintf(os.Stderr, "LEAK CHECK FAILED:\n  %s\n", strings.Join(leaks, "\n  "))
			code = 1
		} else {
			fmt.Println("leak check: no emuctl object remains")
		}
	}
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runCmd(t, exec.Command(bin, args...), stdin, args)
}

// runCmd runs cmd (emuctl with args) from the checkout's root, stdin
// given, and returns its output and exit code.
func runCmd(t *testing.T, cmd *exec.Cmd, stdin string, args []string) result {
	t.Helper()
	cmd.Dir = "../.."
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	r := result{o.String(), e.String(), 0}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return r
}

func must(t *testing.T, r result, args ...string) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("emuctl %v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

func needRoot(t *testing.T) {
	t.Helper()
	testutil.NeedRoot(t)
}

func TestValidateFiles(t *testing.T) {
	files, _ := filepath.Glob("../../topologies/*.yaml")
	if len(files) == 0 {
		t.Fatal("no example topologies")
	}
	for _, f := range files {
		rel, _ := filepath.Rel("../..", f)
		r := run(t, "", "validate", rel)
		if r.code != 0 {
			t.Errorf("validate %s: exit %d: %s", rel, r.code, r.stderr)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\nnodes:\n  h1: {kind: hots}\nlinks:\n  - endpoints: [h1, h9]\n"), 0o644)
	r := run(t, "", "validate", bad)
	if r.code == 0 {
		t.Fatal("bad file validated")
	}
	for _, want := range []string{bad + ":3:", "hots", bad + ":5:", "h9"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("validate output lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestUpExecCLIDown(t *testing.T) {
	needRoot(t)
	must(t, run(t, "", "up", "--name", "te2e", "topologies/linear3.yaml"))
	t.Cleanup(func() { run(t, "", "down", "te2e") })

	ls := must(t, run(t, "", "ls"))
	if !strings.Contains(ls.stdout, "te2e") || !strings.Contains(ls.stdout, "up") {
		t.Errorf("ls:\n%s", ls.stdout)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(must(t, run(t, "", "ls", "--json")).stdout), &rows); err != nil || len(rows) != 1 {
		t.Errorf("ls --json: %v %v", err, rows)
	}
	detail := must(t, run(t, "", "ls", "te2e")).stdout
	for _, want := range []string{"h1", "s3", "te2e.h1", "h1-eth0"} {
		if !strings.Contains(detail, want) {
			t.Errorf("ls te2e lacks %q:\n%s", want, detail)
		}
	}
	must(t, run(t, "", "exec", "h1", "--", "ping", "-c2", "-W2", "h3"))
	// standard tools see the lab: ip netns exec uses the same hosts file
	if out, err := exec.Command("ip", "netns", "exec", "te2e.h2", "getent", "hosts", "h3").CombinedOutput(); err != nil || !strings.Contains(string(out), "10.0.0.3") {
		t.Errorf("ip netns exec te2e.h2 getent hosts h3: %v %s", err, out)
	}
	if r := run(t, "", "exec", "h1", "--", "sh", "-c", "exit 3"); r.code != 3 {
		t.Errorf("exec exit code %d, want 3", r.code)
	}
	if r := run(t, "", "exec", "--lab", "te2e", "h2", "--", "hostname"); strings.TrimSpace(r.stdout) != "h2" {
		t.Errorf("hostname: %q", r.stdout)
	}
	insp := must(t, run(t, "", "inspect"))
	var st emu.State
	if err := json.Unmarshal([]byte(insp.stdout), &st); err != nil || st.Lab != "te2e" || len(st.Namespaces) != 6 {
		t.Errorf("inspect: %v %+v", err, st.Namespaces)
	}

	cli := must(t, run(t, "pingall\nnodes\nnet\nlinks\ndump\nh1 echo hi from $(hostname)\nbogus\nexit\n", "cli"))
	for _, want := range []string{"Results: 0% dropped (6/6 received)", "h1 -> h2 h3", "available nodes are", "h1 h1-eth0:s1-eth1",
		"h1-eth0<->s1-eth1 (OK OK)", "<Host h1: h1-eth0:10.0.0.1", "hi from h1", "Unknown command: bogus"} {
		if !strings.Contains(cli.stdout, want) {
			t.Errorf("cli output lacks %q:\n%s", want, cli.stdout)
		}
	}
	sh := run(t, "hostname\nexit 0\n", "shell", "h3")
	if !strings.Contains(sh.stdout, "h3") || !strings.Contains(sh.stderr, "@h3 (te2e)]") {
		t.Errorf("shell: stdout %q stderr %q", sh.stdout, sh.stderr)
	}

	must(t, run(t, "", "down"))
	must(t, run(t, "", "down", "te2e"))
	if r := run(t, "", "exec", "h1", "--", "true"); r.code == 0 || !strings.Contains(r.stderr, "no lab") {
		t.Errorf("exec after down: %d %s", r.code, r.stderr)
	}
	must(t, run(t, "", "clean", "--check"))
}

func TestTopoFlagAndLabSelection(t *testing.T) {
	needRoot(t)
	a := must(t, run(t, "", "up", "--topo", "linear,2"))
	name := strings.Fields(a.stdout)[1]
	t.Cleanup(func() { run(t, "", "down", name) })
	must(t, run(t, "", "up", "--topo", "single,2", "--name", "tsecond"))
	t.Cleanup(func() { run(t, "", "down", "tsecond") })
	r := run(t, "", "exec", "h1", "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, name) || !strings.Contains(r.stderr, "tsecond") {
		t.Errorf("ambiguous exec should list the labs: %d %s", r.code, r.stderr)
	}
	must(t, run(t, "", "exec", "-l", name, "h1", "--", "ping", "-c1", "-W2", "h2"))
	must(t, run(t, "", "down", "--all"))
	if r := must(t, run(t, "", "ls")); !strings.Contains(r.stdout, "no labs") {
		t.Errorf("ls after down --all: %s", r.stdout)
	}
}

func TestInterruptedUpLeavesNothing(t *testing.T) {
	needRoot(t)
	cmd := exec.Command(bin, "up", "--topo", "linear,150", "--name", "tint")
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// interrupt as soon as the lab has begun to exist
	for i := 0; i < 3000; i++ {
		if _, err := os.Stat(emu.StateDir("tint")); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if err == nil {
		run(t, "", "down", "tint")
		t.Skip("up finished before the interrupt arrived")
	}
	if !strings.Contains(e.String(), "interrupt") && !strings.Contains(e.String(), "canceled") {
		t.Errorf("up's error does not say it was interrupted: %s", e.String())
	}
	if r := run(t, "", "clean", "--check"); r.code != 0 {
		t.Fatalf("interrupted up left objects:\n%s", r.stdout)
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	needRoot(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: tbad\nnodes:\n  h1: {}\n  h2: {}\nlinks:\n  - endpoints: [h1, h2]\n    mtu: lots\n"), 0o644)
	r := run(t, "", "up", bad)
	if r.code == 0 || !strings.Contains(r.stderr, bad+":7:") {
		t.Fatalf("want a positioned error, got %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(emu.StateDir("tbad")); err == nil {
		t.Fatal("a bad file created a state dir")
	}
	if r := run(t, "", "clean", "--check"); r.code != 0 {
		t.Fatalf("objects exist after a refused up: %s", r.stdout)
	}
}
