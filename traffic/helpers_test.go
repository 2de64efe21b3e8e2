package traffic

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/topo"
)

func needRoot(t *testing.T) {
	t.Helper()
	testutil.NeedRoot(t)
}

// gen deploys a generated topology as lab name (which must start with
// "ttr") and tears it down at the end of the test.
func gen(t *testing.T, g, name, link string) string {
	t.Helper()
	s, err := topo.Generate(g, topo.GenOptions{Name: name, Link: link})
	if err != nil {
		t.Fatalf("generate %s: %v", g, err)
	}
	return deploy(t, s)
}

// yamlLab deploys a topology given as YAML text.
func yamlLab(t *testing.T, text string) string {
	t.Helper()
	s, err := topo.Load("test.yaml", []byte(text))
	if err != nil {
		t.Fatalf("topology: %v", err)
	}
	return deploy(t, s)
}

func deploy(t *testing.T, s *topo.Spec) string {
	t.Helper()
	if !strings.HasPrefix(s.Name, "ttr") {
		t.Fatalf("test lab %q must be named ttr*", s.Name)
	}
	emu.Down(s.Name, nil) // a previous crashed run
	if _, err := emu.Deploy(context.Background(), s, emu.Options{}); err != nil {
		t.Fatalf("deploy %s: %v", s.Name, err)
	}
	t.Cleanup(func() {
		if err := emu.Down(s.Name, nil); err != nil {
			t.Errorf("down %s: %v", s.Name, err)
		}
	})
	return s.Name
}

func run(t *testing.T, lab string, flows ...Flow) *analysis.Result {
	t.Helper()
	r, err := Run(context.Background(), lab, flows, Options{})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if err := r.Validate(); err != nil {
		t.Fatalf("result does not validate: %v", err)
	}
	return r
}

// openFDs counts this process's open file descriptors.
func openFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

// settle waits for goroutines and fds to come back to a baseline.
func settle(t *testing.T, fds, goroutines int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if openFDs() <= fds && runtime.NumGoroutine() <= goroutines {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := openFDs(); n > fds {
		t.Errorf("%d file descriptors left open (before: %d, after: %d)", n-fds, fds, n)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines left running (before: %d, after: %d)", n-goroutines, goroutines, n)
	}
	if kids := childPIDs(); len(kids) > 0 {
		t.Errorf("child processes left: %v", kids)
	}
}

func goodputOf(r *analysis.Result, id string) float64 {
	f := r.Flow(id)
	if f == nil {
		return 0
	}
	return analysis.Goodput(f, analysis.WholeRun(f))
}

// benchLab deploys two hosts joined by one veth pair for benchmarks.
func benchLab(b *testing.B) string {
	b.Helper()
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	s, err := topo.Load("bench.yaml", []byte("name: ttrbench\nnodes: {h1: {}, h2: {}}\nlinks:\n  - endpoints: [h1, h2]\n"))
	if err != nil {
		b.Fatal(err)
	}
	emu.Down(s.Name, nil)
	if _, err := emu.Deploy(context.Background(), s, emu.Options{}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { emu.Down(s.Name, nil) })
	return s.Name
}
