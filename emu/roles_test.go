package emu

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The role names are recorded by running labs (journals, process lists):
// they must never change.
func TestRoleNamesFixed(t *testing.T) {
	want := []string{"__emuctl_nsexec", "__emuctl_supervise", "__emuctl_worker", "__emuctl_machine"}
	if len(roles) != len(want) {
		t.Fatalf("%d roles, want %d", len(roles), len(want))
	}
	for _, name := range want {
		if roles[name] == nil {
			t.Errorf("role %s is not registered", name)
		}
	}
}

// This test binary's TestMain calls nothing of emu's, yet re-executed with
// a role name it runs that role (emu's init) and exits with the role's
// status before any test runs.
func TestRolesServedByInit(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{superArg}, 2, "usage: __emuctl_supervise <lab>"},
		{[]string{helperArg, "lab"}, 126, "emuctl exec: usage: __emuctl_nsexec"},
		{[]string{workerArg}, 2, "usage: __emuctl_worker up|teardown|exec"},
		{[]string{machineArg}, 2, "usage: __emuctl_machine <machine dir>"},
	} {
		cmd := exec.Command(self, c.args...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != c.code {
			t.Errorf("%v: %v, want exit status %d; output:\n%s", c.args, err, c.code, out)
			continue
		}
		if !strings.Contains(string(out), c.msg) {
			t.Errorf("%v: output %q, want it to contain %q", c.args, out, c.msg)
		}
		if strings.Contains(string(out), "PASS") || strings.Contains(string(out), "testing:") {
			t.Errorf("%v: the tests ran instead of the role:\n%s", c.args, out)
		}
	}
}
