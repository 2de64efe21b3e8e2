package kernellab

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Skipf/Fatalf instead of acting.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestRequire(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lab       string
		available bool
		skip      bool
		fail      bool
	}{
		{"available outside", "", true, false, false},
		{"available inside", "1", true, false, false},
		{"missing outside skips", "", false, true, false},
		{"missing inside fails", "1", false, false, true},
		{"other value is outside", "yes", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvVar, tc.lab)
			r := &recorder{TB: t}
			Require(r, "sch_netem", tc.available, "qdisc kind unknown")
			if (r.skipped != "") != tc.skip || (r.failed != "") != tc.fail {
				t.Fatalf("skipped=%q failed=%q, want skip=%v fail=%v", r.skipped, r.failed, tc.skip, tc.fail)
			}
			if tc.skip && (!strings.Contains(r.skipped, Command) || !strings.Contains(r.skipped, "sch_netem")) {
				t.Errorf("skip message %q should name the feature and %q", r.skipped, Command)
			}
			if tc.fail && !strings.Contains(r.failed, "qdisc kind unknown") {
				t.Errorf("failure %q should carry the reason", r.failed)
			}
		})
	}
}

func TestRequireLab(t *testing.T) {
	t.Setenv(EnvVar, "")
	r := &recorder{TB: t}
	RequireLab(r, "creates radios")
	if !strings.Contains(r.skipped, Command) {
		t.Errorf("outside the lab: skip message %q should name %q", r.skipped, Command)
	}
	t.Setenv(EnvVar, "1")
	r = &recorder{TB: t}
	RequireLab(r, "creates radios")
	if r.skipped != "" || r.failed != "" {
		t.Errorf("inside the lab: skipped=%q failed=%q", r.skipped, r.failed)
	}
}
