// Package testutil is what emuctl's test packages share, in the style of
// cilium/ebpf's testutils: the root-tier gate, the leak check that ends
// every package's run, and the lab-name filter that keeps one package's
// check from judging another's labs on a shared machine.
//
// Tiers (README, "Tests"): tier 1 runs anywhere without root; tiers 2 and
// 3 build real namespaces and need root. `go test -short` runs tier 1
// only, even as root (make test-unit).
//
// It must not import emu (emu's own tests use it): callers pass
// emu.Leaks.
package testutil

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// NeedRoot skips t unless it runs as root and not in -short mode: it
// builds real kernel objects (tier 2 or 3).
func NeedRoot(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds kernel objects (tier 2/3): not in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root (builds kernel objects, tier 2/3): run `sudo make test`")
	}
}

// Main is a test binary's TestMain after its own set-up: it runs the
// tests and then, as root and unless -short, checks that nothing they made
// remains. leaks lists what is left (emu.Leaks, or Mine of it); anything
// there fails the run.
func Main(m *testing.M, leaks func() []string) {
	code := m.Run()
	if os.Geteuid() == 0 && !testing.Short() && leaks != nil {
		if l := leaks(); len(l) > 0 {
			fmt.Fprintf(os.Stderr, "LEAK CHECK FAILED: %d objects remain:\n  %s\n", len(l), strings.Join(l, "\n  "))
			if code == 0 {
				code = 1
			}
		} else {
			fmt.Println("leak check: nothing the tests made remains")
		}
	}
	os.Exit(code)
}

// Mine keeps the leaks that belong to labs named with one of prefixes
// (the package's test labs): emu.Leaks names objects as "netns
// <lab>.<node>", "<path>/<lab>...", "... emuctl:<lab>".
func Mine(leaks []string, prefixes ...string) []string {
	var out []string
	for _, l := range leaks {
		for _, p := range prefixes {
			if strings.Contains(l, "emuctl:"+p) || strings.Contains(l, "/"+p) || strings.Contains(l, " "+p) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}
