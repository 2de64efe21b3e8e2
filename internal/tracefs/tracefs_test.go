package tracefs

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/internal/proc"
	"github.com/emuctl/emuctl/internal/testutil"
)

func TestMain(m *testing.M) {
	testutil.Main(m, func() []string { found, _ := Stale(false); return found })
}

// inPrivate runs fn as Stale and New see tracefs; a host without tracefs
// skips.
func inPrivate(t *testing.T, fn func(dir string) error) {
	t.Helper()
	if err := InPrivate(fn); err != nil {
		if strings.Contains(err.Error(), "mount tracefs") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
}

// TestStale: the instance of a run whose process is gone, and of one whose
// pid a later process reused, are removed; a live run's is kept.
func TestStale(t *testing.T) {
	testutil.NeedRoot(t)
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	start, _ := proc.Start(os.Getpid())
	dead := fmt.Sprintf("%s%d-0-s1", Prefix, c.Process.Pid)
	reused := fmt.Sprintf("%s%d-0-s%d", Prefix, os.Getpid(), start+1)
	live := InstanceName(7)
	other := "someone-elses-instance"
	inPrivate(t, func(dir string) error {
		for _, n := range []string{dead, reused, live, other} {
			if err := os.Mkdir(dir+"/"+n, 0o755); err != nil {
				return err
			}
		}
		return nil
	})
	defer inPrivate(t, func(dir string) error {
		for _, n := range []string{dead, reused, live, other} {
			os.Remove(dir + "/" + n)
		}
		return nil
	})
	if found, _ := Stale(false); len(found) != 2 {
		t.Errorf("Stale(false) = %v, want the dead and the reused run's", found)
	}
	found, errs := Stale(true)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := map[string]bool{"tracefs instance " + dead: true, "tracefs instance " + reused: true}
	for _, f := range found {
		delete(want, f)
		if strings.Contains(f, live) || strings.Contains(f, other) {
			t.Errorf("removed %s", f)
		}
	}
	if len(want) > 0 {
		t.Errorf("not removed: %v (found %v)", want, found)
	}
	inPrivate(t, func(dir string) error {
		for _, n := range []string{live, other} {
			if _, err := os.Stat(dir + "/" + n); err != nil {
				t.Errorf("%s gone: %v", n, err)
			}
		}
		for _, n := range []string{dead, reused} {
			if _, err := os.Stat(dir + "/" + n); err == nil {
				t.Errorf("stale instance %s still there", n)
			}
		}
		return nil
	})
}

// TestInstance: New makes an instance that records an event (our own
// exec of true, sched:sched_process_exec), Clear empties it, Close
// removes it.
func TestInstance(t *testing.T) {
	testutil.NeedRoot(t)
	in, err := New([][2]string{{"trace_clock", "mono"}, {"buffer_size_kb", "64"}}, "sched/sched_process_exec")
	if err != nil {
		if strings.Contains(err.Error(), "mount tracefs") || strings.Contains(err.Error(), "has no") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	name := in.Name()
	if !strings.HasPrefix(name, Prefix) {
		t.Errorf("instance %q lacks the prefix", name)
	}
	if found, _ := Stale(false); len(found) != 0 {
		t.Errorf("a live instance counts as stale: %v", found)
	}
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	ours := fmt.Sprintf(" pid=%d ", c.Process.Pid) // other processes exec too
	data, err := in.Read()
	if err != nil || !strings.Contains(string(data), ours) {
		t.Errorf("our exec (%s) not recorded (%v):\n%.500s", ours, err, data)
	}
	in.Clear()
	if data, _ := in.Read(); strings.Contains(string(data), ours) {
		t.Errorf("Clear left our exec event:\n%.500s", data)
	}
	in.Close()
	inPrivate(t, func(dir string) error {
		if _, err := os.Stat(dir + "/" + name); err == nil {
			t.Errorf("instance %s still there after Close", name)
		}
		return nil
	})
}
