package lab_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/lab"
)

// A node shell keeps what a Mininet user expects of h1.cmd(): the node's
// name and hosts, the directory and variables between commands, jobs,
// Ctrl-C, exit statuses; only bash stays resident.
func TestShell(t *testing.T) {
	testutil.NeedRoot(t)
	l := up(t, lab.NewTopology("tlabsh").Host("h1").Host("h2").Switch("s1").Link("h1", "s1").Link("h2", "s1"))
	ctx := context.Background()
	sh, err := l.Shell(ctx, "h1")
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	cmd := func(line string) string {
		t.Helper()
		out, err := sh.Cmd(ctx, line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		return out
	}
	if got := cmd("hostname"); got != "h1\n" {
		t.Errorf("hostname %q", got)
	}
	h2, _ := l.Addr("h2")
	if got := cmd("getent hosts h2"); !strings.HasPrefix(got, h2.String()+" ") {
		t.Errorf("h2 by name: %q, want %s", got, h2)
	}
	cmd("cd /tmp && export EMUCTL_T=42")
	if got := cmd("pwd; echo $EMUCTL_T"); got != "/tmp\n42\n" {
		t.Errorf("kept state: %q", got)
	}
	// exit statuses
	if _, err := sh.Cmd(ctx, "false"); err == nil {
		t.Error("false: no error")
	} else if ee := (*lab.ExitError)(nil); !errors.As(err, &ee) || ee.Code != 1 {
		t.Errorf("false: %v", err)
	}
	// job control
	cmd("sleep 30 &")
	if got := cmd("jobs"); !strings.Contains(got, "sleep 30") {
		t.Errorf("jobs: %q", got)
	}
	cmd("kill %1; wait")
	if got := cmd("jobs"); got != "" {
		t.Errorf("jobs after kill %%1: %q", got)
	}
	// Ctrl-C: to a command sent, and by a context that ends
	if err := sh.Send("sleep 30"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	t0 := time.Now()
	sh.SendInt()
	if _, err := sh.Wait(ctx); err != nil || time.Since(t0) > 2*time.Second {
		t.Errorf("SendInt: %v after %v", err, time.Since(t0))
	}
	if got := cmd("echo $?"); got != "130\n" {
		t.Errorf("status after Ctrl-C: %q", got)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = sh.Cmd(cctx, "sleep 20")
	cancel()
	if ee := (*lab.ExitError)(nil); !errors.As(err, &ee) || ee.Code != 130 {
		t.Errorf("a cancelled command: %v", err)
	}
	// a command that reads its input does not eat the shell's
	if got := cmd("head -c0; echo after"); got != "after\n" {
		t.Errorf("input: %q", got)
	}
	// streaming
	var sb strings.Builder
	if code, err := sh.Stream(ctx, "for i in 1 2 3; do echo $i; done", &sb); err != nil || code != 0 || sb.String() != "1\n2\n3\n" {
		t.Errorf("stream: %d %v %q", code, err, sb.String())
	}
	// only bash is resident for the shell
	exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(sh.Pid()), "exe"))
	if filepath.Base(exe) != "bash" {
		t.Errorf("the shell's process is %s, want bash (the helper execs it)", exe)
	}
	// the round trip of Cmd("true"), logged (make bench measures it beside Mininet)
	var rt []time.Duration
	for range 200 {
		t0 := time.Now()
		cmd("true")
		rt = append(rt, time.Since(t0))
	}
	sort.Slice(rt, func(i, j int) bool { return rt[i] < rt[j] })
	t.Logf("Cmd(\"true\") round trip: median %v, p90 %v", rt[100], rt[180])
	pid := sh.Pid()
	sh.Close()
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
		t.Errorf("bash %d still runs after Close", pid)
	}
	if _, err := sh.Cmd(ctx, "true"); err == nil {
		t.Error("a closed shell ran a command")
	}
	if _, err := sh.Cmd(ctx, "echo a\necho b"); err == nil {
		t.Error("two lines taken as one command")
	}
}
