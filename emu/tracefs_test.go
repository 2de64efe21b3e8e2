package emu

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// inTracefs runs fn on a throw-away thread with tracefs at
// /sys/kernel/tracing in a private mount namespace (nothing is mounted on
// the host), as staleTraceInstances looks at it.
func inTracefs(t *testing.T, fn func(dir string) error) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with its mount namespace
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			errc <- err
			return
		}
		unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
		dir := "/sys/kernel/tracing/instances"
		if _, err := os.Stat(dir); err != nil {
			if err := unix.Mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, ""); err != nil {
				errc <- fmt.Errorf("no tracefs: %w", err)
				return
			}
		}
		errc <- fn(dir)
	}()
	if err := <-errc; err != nil {
		if strings.Contains(err.Error(), "no tracefs") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
}

// clean removes the tracefs instance of a suite run whose process is gone,
// and of one whose pid a later process reused, and keeps a live run's.
func TestStaleTraceInstances(t *testing.T) {
	needRoot(t)
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	start, _ := procStart(os.Getpid())
	dead := fmt.Sprintf("%s%d-0-s1", TraceInstancePrefix, c.Process.Pid)
	reused := fmt.Sprintf("%s%d-0-s%d", TraceInstancePrefix, os.Getpid(), start+1)
	live := TraceInstanceName(7)
	inTracefs(t, func(dir string) error {
		for _, n := range []string{dead, reused, live} {
			if err := os.Mkdir(dir+"/"+n, 0o755); err != nil {
				return err
			}
		}
		return nil
	})
	defer inTracefs(t, func(dir string) error {
		for _, n := range []string{dead, reused, live} {
			os.Remove(dir + "/" + n)
		}
		return nil
	})
	found, errs := staleTraceInstances(true)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := map[string]bool{"tracefs instance " + dead: true, "tracefs instance " + reused: true}
	for _, f := range found {
		delete(want, f)
		if strings.Contains(f, live) {
			t.Errorf("removed the live run's instance %s", live)
		}
	}
	if len(want) > 0 {
		t.Errorf("not removed: %v (found %v)", want, found)
	}
	inTracefs(t, func(dir string) error {
		if _, err := os.Stat(dir + "/" + live); err != nil {
			t.Errorf("live instance gone: %v", err)
		}
		for _, n := range []string{dead, reused} {
			if _, err := os.Stat(dir + "/" + n); err == nil {
				t.Errorf("stale instance %s still there", n)
			}
		}
		return nil
	})
}
