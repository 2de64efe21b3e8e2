package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGTERM to `emuctl exec` reaches the command, and the exit code says so.
func TestExecForwardsSignals(t *testing.T) {
	needRoot(t)
	must(t, run(t, "", "up", "--topo", "single,2", "--name", "tsig"))
	t.Cleanup(func() { run(t, "", "down", "tsig") })
	cmd := exec.Command(bin, "exec", "h1", "--", "sh", "-c", "trap 'echo got TERM; exit 42' TERM; while :; do sleep 0.05; done")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 42 || !strings.Contains(out.String(), "got TERM") {
		t.Fatalf("want the command to get SIGTERM and exit 42: %v, output %q", err, out.String())
	}
}

func tmux(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("tmux", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// waitPane waits until the pane shows want.
func waitPane(t *testing.T, session, want string) string {
	t.Helper()
	var screen string
	for i := 0; i < 100; i++ {
		screen = tmux(t, "capture-pane", "-p", "-t", session)
		if strings.Contains(screen, want) {
			return screen
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("pane never showed %q:\n%s", want, screen)
	return ""
}

// On a real terminal: the shell prompt names the node, ^C interrupts the
// command running in the node and not emuctl, and the exit code is 130.
func TestShellAndCtrlCOnTerminal(t *testing.T) {
	needRoot(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (scripts/install-deps.sh installs it)")
	}
	must(t, run(t, "", "up", "--topo", "single,2", "--name", "ttty"))
	t.Cleanup(func() { run(t, "", "down", "ttty") })
	session := "emuctl-tty-test"
	wd, _ := os.Getwd()
	// emuctl shell reads the user's ~/.bashrc; the test's is empty, so
	// what root's does on this machine (a pyenv rehash waiting on a lock,
	// say) neither delays the prompt nor is left half done by the kill
	home := t.TempDir()
	tmux(t, "new-session", "-d", "-s", session, "-x", "150", "-y", "40", "-c", wd, "env HOME="+home+" "+bin+" shell h2")
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", session).Run() })
	waitPane(t, session, "@h2 (ttty)]")
	// waited for by what only the output shows (the typed line shows
	// the command itself at once)
	tmux(t, "send-keys", "-t", session, "hostname; ping -c1 -W2 h1 >/dev/null && echo PING-OK-$((40+2))", "Enter")
	screen := waitPane(t, session, "PING-OK-42")
	if !strings.Contains(screen, "\nh2\n") {
		t.Errorf("hostname inside the shell is not h2:\n%s", screen)
	}
	// a nested emuctl exec on the terminal, interrupted with ^C
	// (emuctl becomes the command, so the shell sees it killed by SIGINT,
	// as for any command: it ends the line, and $? is 130 after it)
	tmux(t, "send-keys", "-t", session, bin+" exec h1 -- sleep 100", "Enter")
	time.Sleep(700 * time.Millisecond)
	tmux(t, "send-keys", "-t", session, "C-c", "")
	time.Sleep(300 * time.Millisecond)
	tmux(t, "send-keys", "-t", session, "echo EXIT=$?", "Enter")
	waitPane(t, session, "EXIT=130")
	tmux(t, "send-keys", "-t", session, "exit", "Enter")
}
