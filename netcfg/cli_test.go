package netcfg_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/topo"
)

// TestCLIMPTCPCheck runs `emuctl mptcp check` against the two-path lab:
// it passes with the derived expectation and fails (exit 1) when more
// subflows are demanded than the path managers set up.
func TestCLIMPTCPCheck(t *testing.T) {
	needRoot(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build emuctl")
	}
	bin := filepath.Join(t.TempDir(), "emuctl")
	if out, err := exec.Command(goBin, "build", "-o", bin, "../cmd/emuctl").CombinedOutput(); err != nil {
		t.Fatalf("build emuctl: %v\n%s", err, out)
	}
	spec, err := topo.LoadFile("testdata/twopath.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec.Name = "tnccli"
	l := upSpec(t, spec)
	l.applyAll()
	out, err := exec.Command(bin, "mptcp", "check", "--lab", "tnccli", "--duration", "1s", "c", "s").CombinedOutput()
	t.Logf("emuctl mptcp check c s:\n%s", out)
	if err != nil || !strings.Contains(string(out), "2 of 2 expected subflows established") ||
		!strings.Contains(string(out), "c-eth0") || !strings.Contains(string(out), "c-eth1") {
		t.Errorf("check failed: %v", err)
	}
	out, err = exec.Command(bin, "mptcp", "check", "--lab", "tnccli", "--duration", "500ms", "--expect", "3", "c", "s").CombinedOutput()
	t.Logf("emuctl mptcp check --expect 3 c s:\n%s", out)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "2 of 3 expected subflows came up") {
		t.Errorf("want exit 1 naming the missing subflow, got %v", err)
	}
}
