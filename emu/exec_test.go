package emu

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/proc"
	"github.com/emuctl/emuctl/topo"
)

func TestExecInNode(t *testing.T) {
	needRoot(t)
	spec := gen(t, "single,3", "texec")
	spec.Node("h1").Env = []topo.KV{{Key: "GREETING", Value: "hello from h1"}}
	up(t, spec, Options{})

	run := func(node string, argv ...string) (string, int) {
		cmd, err := Command("texec", node, argv)
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("%v: %v", argv, err)
		}
		return string(out), 0
	}
	if _, code := run("h1", "sh", "-c", "exit 7"); code != 7 {
		t.Errorf("exit code %d, want 7", code)
	}
	if out, _ := run("h2", "hostname"); strings.TrimSpace(out) != "h2" {
		t.Errorf("hostname in h2 = %q", out)
	}
	// names resolve through the lab's hosts file
	addr, _ := PrimaryAddr(spec.Node("h3"))
	if out, code := run("h1", "getent", "hosts", "h3"); code != 0 || !strings.Contains(out, addr.String()) {
		t.Errorf("getent hosts h3 in h1: %q (exit %d), want %s", out, code, addr)
	}
	if out, _ := run("h1", "sh", "-c", "echo $GREETING"); strings.TrimSpace(out) != "hello from h1" {
		t.Errorf("node env not set: %q", out)
	}
	// argv is not passed through a shell
	if out, _ := run("h1", "echo", "$HOME;", "x"); strings.TrimSpace(out) != "$HOME; x" {
		t.Errorf("argv was shell-interpreted: %q", out)
	}
	// the command sees only the node's interfaces
	out, _ := run("h2", "cat", "/proc/net/dev")
	if !strings.Contains(out, "h2-eth0") || strings.Contains(out, "h1-eth0") {
		t.Errorf("h2 sees the wrong interfaces:\n%s", out)
	}
	if _, code := run("h1", "no-such-command-xyz"); code != 127 {
		t.Errorf("missing command: exit %d, want 127", code)
	}
	if _, err := Command("texec", "h9", []string{"true"}); err == nil || !strings.Contains(err.Error(), "h1") {
		t.Errorf("unknown node: %v", err)
	}
	// the host's /etc/hosts is untouched by exec's private mount
	if out, err := exec.Command("getent", "hosts", "h3").Output(); err == nil && strings.Contains(string(out), addr.String()) {
		t.Errorf("lab names leaked into the host's resolver: %s", out)
	}
	_ = time.Second
}

func TestStartCommandsStoppedOnDown(t *testing.T) {
	needRoot(t)
	spec := gen(t, "single,2", "tstart")
	spec.Node("h1").Start = []string{"sleep 300", "echo started > /dev/null; sleep 301"}
	st := up(t, spec, Options{})
	if len(st.Procs) != 2 {
		t.Fatalf("procs %+v", st.Procs)
	}
	for _, p := range st.Procs {
		if !proc.Alive(p.PID, p.Start) {
			t.Fatalf("start process %d not running", p.PID)
		}
	}
	if err := Down("tstart", nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Procs {
		if proc.Alive(p.PID, p.Start) && !isZombie(p.PID) {
			t.Errorf("start process %d survived down", p.PID)
		}
	}
	requireGone(t, "tstart")

	bad := gen(t, "single,2", "tstartbad")
	bad.Node("h2").Start = []string{"echo oops >&2; exit 3"}
	_, err := Deploy(t.Context(), bad, Options{})
	if err == nil || !strings.Contains(err.Error(), "oops") {
		t.Fatalf("failing start command: want error with its output, got %v", err)
	}
	requireGone(t, "tstartbad")
}
