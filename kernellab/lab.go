package kernellab

import (
	"os"
	"testing"
)

// EnvVar is set to "1" inside the kernel lab VM by scripts/kernel-lab.
const EnvVar = "EMUCTL_KERNEL_LAB"

// Command runs the kernel-lab tests; skip messages name it.
const Command = "make test-kernel"

// InLab reports whether this process runs inside the kernel lab VM.
func InLab() bool { return os.Getenv(EnvVar) == "1" }

// Require lets a test go on when feature is available. Otherwise it skips
// the test outside the kernel lab, naming the command that runs it there,
// and fails it inside the lab, where every lab feature must be present.
// reason says why the feature is missing (a probe's error text).
func Require(t testing.TB, feature string, available bool, reason string) {
	t.Helper()
	if available {
		return
	}
	if InLab() {
		t.Fatalf("kernel lab: %s must be available in the lab but is not: %s", feature, reason)
		return
	}
	t.Skipf("needs %s, not available here (%s); runs in the kernel lab VM: `%s`", feature, reason, Command)
}

// RequireLab skips the test outside the kernel lab. For tests that change
// machine-wide state (kernel datapaths, radios) and must not run on a
// developer's machine even when it has the feature. why says what they do.
func RequireLab(t testing.TB, why string) {
	t.Helper()
	if !InLab() {
		t.Skipf("kernel-lab only (%s); runs in the kernel lab VM: `%s`", why, Command)
	}
}
