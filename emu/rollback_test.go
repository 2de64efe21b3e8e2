package emu

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/proc"
)

// Every phase of Deploy that fails leaves nothing of the lab behind.
func TestRollbackAtEveryPhase(t *testing.T) {
	needRoot(t)
	for _, phase := range []string{"namespaces", "nodes", "links", "externals", "routes", "sysctls", "hosts", "wait", "start", "ready"} {
		t.Run(phase, func(t *testing.T) {
			spec := gen(t, "tree,2,2", "trb")
			spec.Node("h1").Start = []string{"sleep 300"}
			_, err := Deploy(context.Background(), spec, Options{FaultAt: phase})
			if err == nil || !strings.Contains(err.Error(), "injected fault") {
				t.Fatalf("want the injected fault, got %v", err)
			}
			requireGone(t, "trb")
		})
	}
}

// A cancelled context (Ctrl-C during `up`) rolls back too.
func TestRollbackOnCancel(t *testing.T) {
	needRoot(t)
	spec := gen(t, "linear,60", "tcancel")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// cancel as soon as the first namespaces exist
		for i := 0; i < 2000; i++ {
			if ents, _ := listNetns(); len(ents) > 0 {
				for _, e := range ents {
					if strings.HasPrefix(e, "tcancel.") {
						cancel()
						return
					}
				}
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := Deploy(ctx, spec, Options{})
	if err == nil {
		Down("tcancel", nil)
		t.Fatal("deploy finished despite the cancel; make the topology bigger")
	}
	requireGone(t, "tcancel")
}

// A deploy killed outright (no chance to roll back) is found by clean
// through its marker and state dir; a running lab is left alone by clean
// and removed by clean --all.
func TestCleanAfterCrash(t *testing.T) {
	needRoot(t)
	for _, phase := range []string{"links", "ready"} {
		t.Run(phase, func(t *testing.T) { testCleanAfterCrash(t, phase) })
	}
}

func testCleanAfterCrash(t *testing.T, phase string) {
	self, _ := os.Executable()
	cmd := exec.Command(self, "-test.run=^TestCrashHelper$")
	cmd.Env = append(os.Environ(), "EMUCTL_TEST_CRASH="+phase)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 9 {
		t.Fatalf("crash helper: want exit 9, got %v\n%s", err, out)
	}
	if left := labObjects("tcrash"); len(left) == 0 {
		t.Fatal("the crashed deploy left nothing; the test proves nothing")
	}
	var sleeper int
	if phase == "ready" {
		st, err := ReadState("tcrash")
		if err != nil || len(st.Procs) != 1 || !proc.Alive(st.Procs[0].PID, st.Procs[0].Start) {
			t.Fatalf("crashed lab should have a live start process: %v %+v", err, st)
		}
		sleeper = st.Procs[0].PID
	}
	running := up(t, gen(t, "single,2", "trunning"), Options{})
	rep, err := Clean(false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !contains(rep.Removed, "tcrash") {
		t.Errorf("clean did not report tcrash: %+v", rep)
	}
	requireGone(t, "tcrash")
	if sleeper != 0 {
		if _, err := proc.Start(sleeper); err == nil && !isZombie(sleeper) {
			t.Errorf("start process %d of the crashed lab still runs", sleeper)
		}
	}
	if len(labObjects("trunning")) == 0 {
		t.Fatal("clean removed a running lab")
	}
	requirePingAll(t, running)
	// Down, not Clean(true): that would take every running lab on the
	// machine with it, other tests' and users' too
	if err := Down("trunning", nil); err != nil {
		t.Fatal(err)
	}
	requireGone(t, "trunning")
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// TestCrashHelper is run as a subprocess by TestCleanAfterCrash: it deploys
// and exits abruptly in the middle, like kill -9.
func TestCrashHelper(t *testing.T) {
	phase := os.Getenv("EMUCTL_TEST_CRASH")
	if phase == "" {
		t.Skip("subprocess helper")
	}
	spec := gen(t, "linear,3", "tcrash")
	spec.Node("h1").Start = []string{"sleep 300"}
	crashAt = phase
	Deploy(context.Background(), spec, Options{})
	t.Fatal("deploy returned")
}
