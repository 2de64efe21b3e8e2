package emu

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Every window between "a host object exists" and "it carries the marker
// or a journal line" (journal.go), each hit by a kill -9 exactly there:
// clean removes what was left, and same-named objects emuctl did not make
// (decoys: an empty file under /run/netns and an empty directory under
// /etc/netns, named like the lab's) survive.
func TestCrashWindows(t *testing.T) {
	needRoot(t)
	cases := []struct {
		point string
		left  func(t *testing.T, lab string) // what the crash must have left (the window is real)
	}{
		{"netns-anchor", func(t *testing.T, lab string) {
			if len(labNetnsFiles(lab)) == 0 {
				t.Fatal("no anchor file under /run/netns: the window was not hit")
			}
		}},
		{"netns-linked", func(t *testing.T, lab string) {
			if unmountedNetnsFiles(lab) == 0 {
				t.Fatal("no unmounted namespace file: the window was not hit")
			}
		}},
		{"hostsdir-made", func(t *testing.T, lab string) {
			if sub, err := os.ReadDir("/etc/netns"); err != nil || len(sub) != 0 {
				t.Fatalf("want an empty /etc/netns made by the lab, got %v %v", sub, err)
			}
		}},
		{"supervisor-forked", func(t *testing.T, lab string) {
			// The supervisor was forked but never told to go: it must leave
			// by itself, before any clean.
			deadline := time.Now().Add(5 * time.Second)
			for len(supervisorsOf(lab)) > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if p := supervisorsOf(lab); len(p) > 0 {
				t.Fatalf("orphaned supervisor still running: %v", p)
			}
		}},
		{"teardown-unmounted", func(t *testing.T, lab string) {
			if unmountedNetnsFiles(lab) == 0 {
				t.Fatal("no unmounted namespace file: the window was not hit")
			}
		}},
		{"ovs-rootlink", func(t *testing.T, lab string) {
			// An OVS port end in the root namespace, created, not yet marked.
			unmarked := 0
			for _, name := range readJournal(lab).RootLinks {
				if l, err := netlink.LinkByName(name); err == nil && l.Attrs().Alias == "" {
					unmarked++
				}
			}
			if unmarked == 0 {
				t.Fatal("no unmarked root device: the window was not hit")
			}
		}},
		{"ovs-bridges-unmarked", func(t *testing.T, lab string) {
			// A bridge device ovs-vswitchd made, not yet marked.
			st, err := ReadState(lab)
			if err != nil || st.OVS == nil || len(st.OVS.Bridges) == 0 {
				t.Fatalf("no bridge recorded: %v", err)
			}
			if l, err := netlink.LinkByName(st.OVS.Bridges[0].Name); err != nil || l.Attrs().Alias != "" {
				t.Fatalf("no unmarked bridge device %s: the window was not hit (%v)", st.OVS.Bridges[0].Name, err)
			}
		}},
		{"teardown-statedir", func(t *testing.T, lab string) {
			if _, err := os.Stat(stateDir(lab)); err != nil {
				t.Fatal("state dir gone: the window was not hit")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.point, func(t *testing.T) {
			lab := "tcw"
			yaml := crashLabYAML
			if strings.HasPrefix(c.point, "ovs-") {
				if _, err := exec.LookPath("ovs-vswitchd"); err != nil {
					t.Skip("Open vSwitch is not installed (apt-get install openvswitch-switch)")
				}
				yaml = crashOVSLabYAML
			}
			decoyFile := filepath.Join(NetnsDir, lab+".h99")
			decoyDir := "/etc/netns/" + lab + ".h98"
			if err := os.WriteFile(decoyFile, nil, 0o444); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(decoyFile)
			if c.point == "hostsdir-made" {
				// The window is the making of /etc/netns itself: it must
				// not exist (an empty one is a previous test's).
				if err := os.Remove("/etc/netns"); err != nil && !os.IsNotExist(err) {
					t.Skipf("/etc/netns exists and is not empty (%v): cannot test its making here", err)
				}
				decoyDir = decoyFile // no directory decoy in this case
			} else {
				if err := os.MkdirAll(decoyDir, 0o755); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(decoyDir)
			}

			self, _ := os.Executable()
			cmd := exec.Command(self, "-test.run=^TestCrashWindowHelper$")
			cmd.Env = append(os.Environ(), "EMUCTL_TEST_CRASH="+c.point, "EMUCTL_TEST_CRASH_LAB="+lab, "EMUCTL_TEST_CRASH_YAML="+yaml)
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 9 {
				t.Fatalf("crash helper: want exit 9, got %v\n%s", err, out)
			}
			c.left(t, lab)
			dep, td := LastPhase(lab)
			t.Logf("killed at %s (deploy phase %q, teardown step %q)", c.point, dep, td)
			if _, err := Clean(false, nil); err != nil {
				t.Fatal(err)
			}
			requireGone(t, lab)
			if p := supervisorsOf(lab); len(p) > 0 {
				t.Errorf("supervisor still running after clean: %v", p)
			}
			if _, err := os.Stat(decoyFile); err != nil {
				t.Errorf("clean removed the decoy %s", decoyFile)
			}
			if _, err := os.Stat(decoyDir); err != nil {
				t.Errorf("clean removed the decoy %s", decoyDir)
			}
			// And the lab comes up again under the same name.
			st := up(t, loadYAML(t, lab, yaml), Options{})
			requirePingAll(t, st)
		})
	}
}

// A lab with an engine link, so a supervisor runs.
const crashLabYAML = `name: tcw
nodes: {h1: {}, h2: {}, s1: {kind: switch}}
links:
  - endpoints: [h1, s1]
    link: {delay: 1ms, backend: userspace}
  - endpoints: [s1, h2]
`

// An OVS switch, so link ends live in the root namespace.
const crashOVSLabYAML = `name: tcw
nodes: {h1: {}, h2: {}, s1: {kind: switch, type: ovs}}
links:
  - endpoints: [h1, s1]
  - endpoints: [s1, h2]
`

// TestCrashWindowHelper runs as TestCrashWindows' subprocess: it deploys
// (and for teardown points, tears down) with the crash point set.
func TestCrashWindowHelper(t *testing.T) {
	point := os.Getenv("EMUCTL_TEST_CRASH")
	lab := os.Getenv("EMUCTL_TEST_CRASH_LAB")
	if point == "" || lab == "" {
		t.Skip("subprocess helper")
	}
	spec := loadYAML(t, lab, os.Getenv("EMUCTL_TEST_CRASH_YAML"))
	if !strings.HasPrefix(point, "teardown-") {
		crashAt = point
	}
	if _, err := Deploy(context.Background(), spec, Options{AllowExternal: os.Getenv("EMUCTL_TEST_CRASH_EXTERNAL") != ""}); err != nil {
		t.Fatal(err)
	}
	crashAt = point
	Down(lab, nil)
	t.Fatal("not killed at " + point)
}

// labNetnsFiles lists /run/netns entries named for the lab or its anchor.
func labNetnsFiles(lab string) []string {
	var out []string
	names, _ := listNetns()
	for _, n := range names {
		if strings.HasPrefix(n, lab+".") || strings.HasPrefix(n, ".emuctl-"+lab+"-") {
			out = append(out, n)
		}
	}
	return out
}

// unmountedNetnsFiles counts the lab's /run/netns files that hold no
// namespace (a regular tmpfs file, not nsfs), decoys aside.
func unmountedNetnsFiles(lab string) int {
	n := 0
	for _, name := range labNetnsFiles(lab) {
		if decoys[name] {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(filepath.Join(NetnsDir, name), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			var fs unix.Statfs_t
			if unix.Statfs(filepath.Join(NetnsDir, name), &fs) == nil && fs.Type != unix.NSFS_MAGIC {
				n++
			}
		}
	}
	return n
}

// supervisorsOf finds supervisor processes of a lab by their arguments. A
// test's look-up only: emuctl itself finds them through the journal.
func supervisorsOf(lab string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) == 3 && args[1] == superArg && args[2] == lab && !isZombie(pid) {
			out = append(out, pid)
		}
	}
	return out
}
