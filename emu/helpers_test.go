package emu

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/topo"
)

func needRoot(t *testing.T) {
	t.Helper()
	testutil.NeedRoot(t)
}

func gen(t *testing.T, g, name string) *topo.Spec {
	t.Helper()
	s, err := topo.Generate(g, topo.GenOptions{Name: name})
	if err != nil {
		t.Fatalf("generate %s: %v", g, err)
	}
	return s
}

// up deploys spec and registers a Down for the end of the test.
func up(t *testing.T, spec *topo.Spec, opt Options) *State {
	t.Helper()
	st, err := Deploy(context.Background(), spec, opt)
	if err != nil {
		t.Fatalf("deploy %s: %v", spec.Name, err)
	}
	t.Cleanup(func() {
		if err := Down(spec.Name, nil); err != nil {
			t.Errorf("down %s: %v", spec.Name, err)
		}
	})
	return st
}

func requirePingAll(t *testing.T, st *State) {
	t.Helper()
	res := PingAll(context.Background(), st, 3, time.Second)
	if len(res) == 0 {
		t.Fatal("pingall ran no probe")
	}
	bad := 0
	for _, r := range res {
		if !r.OK {
			bad++
			if bad <= 10 {
				t.Errorf("ping %s -> %s (%s): no reply", r.From, r.To, r.Addr)
			}
		} else if r.RTT <= 0 || r.RTT > 500*time.Millisecond {
			t.Errorf("ping %s -> %s: implausible RTT %v on an unshaped lab", r.From, r.To, r.RTT)
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d pings failed", bad, len(res))
	}
}

// labObjects lists what of a lab is still on the host.
func labObjects(lab string) []string {
	var out []string
	names, _ := listNetns()
	for _, n := range names {
		if m, err := netnsMarker(n); err == nil {
			if l, ok := labFromMarker(m); ok && l == lab {
				out = append(out, "netns "+n)
			}
		}
	}
	for _, n := range labNetnsFiles(lab) { // crash_test.go
		if strings.HasPrefix(n, ".emuctl-") {
			out = append(out, "namespace anchor "+n)
		} else if !decoys[n] && unmountedNetnsFiles(lab) > 0 {
			if fi, err := os.Lstat(filepath.Join(NetnsDir, n)); err == nil && fi.Mode().IsRegular() {
				if m, err := netnsMarker(n); err != nil || m == "" {
					out = append(out, "unmounted namespace file "+n)
				}
			}
		}
	}
	if _, err := os.Stat(stateDir(lab)); err == nil {
		out = append(out, "state dir")
	}
	ents, _ := os.ReadDir("/etc/netns")
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), lab+".") {
			continue
		}
		if tgt, err := os.Readlink(filepath.Join("/etc/netns", e.Name())); err == nil {
			if strings.HasPrefix(tgt, RunDir()+"/") {
				out = append(out, "/etc/netns/"+e.Name()+" -> "+tgt)
			}
			continue
		}
		p := filepath.Join("/etc/netns", e.Name(), "hosts")
		if tgt, err := os.Readlink(p); err == nil && strings.HasPrefix(tgt, RunDir()+"/") {
			out = append(out, p)
		}
		if sub, _ := os.ReadDir(filepath.Join("/etc/netns", e.Name())); len(sub) == 0 && !decoys[e.Name()] {
			out = append(out, "empty dir /etc/netns/"+e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(RunDir(), "."+lab+".lock")); err == nil {
		out = append(out, "lock file")
	}
	return out
}

// decoys names /run/netns files a test made itself, named like a lab's.
var decoys = map[string]bool{"tcw.h99": true, "tcw.h98": true}

func requireGone(t *testing.T, lab string) {
	t.Helper()
	if left := labObjects(lab); len(left) > 0 {
		t.Fatalf("lab %s left objects behind: %v", lab, left)
	}
}

// procRunqueueWait is how long the threads of the lab's process named
// command have waited on a run queue so far (/proc/PID/task/*/schedstat,
// second field), 0 if it is not running.
func procRunqueueWait(st *State, command string) time.Duration {
	for _, p := range st.Procs {
		if p.Command != command {
			continue
		}
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", p.PID))
		var sum time.Duration
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			if fs := strings.Fields(string(b)); len(fs) >= 2 {
				n, _ := strconv.ParseInt(fs[1], 10, 64)
				sum += time.Duration(n)
			}
		}
		return sum
	}
	return 0
}
