package lab_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/internal/testutil"
)

// runExample builds a program of examples/ and runs it, timed: a run
// that lacked CPU (testutil.RetryStarved) is made once more, and one that
// lacked it twice is not judged. It returns the program's output.
func runExample(t *testing.T, name string, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, "../examples/"+name).CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, out)
	}
	return testutil.RetryStarved(t, name, true, func() string {
		out, err := exec.Command(bin, args...).CombinedOutput()
		t.Logf("%s %s:\n%s", name, strings.Join(args, " "), out)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return string(out)
	})
}

// The examples run, and measure what their links say.
func TestExamples(t *testing.T) {
	testutil.NeedRoot(t)
	t.Run("quickstart", func(t *testing.T) {
		out := runExample(t, "quickstart")
		m := regexp.MustCompile(`ping h1 -> h2: ([0-9.]+)ms`).FindStringSubmatch(out)
		if m == nil {
			t.Fatal("no ping line")
		}
		if ms, _ := strconv.ParseFloat(m[1], 64); ms < 10 || ms > 12 {
			t.Errorf("ping %.3f ms, want in [10, 12] (2 × 5 ms of link delay)", ms)
		}
		m = regexp.MustCompile(`: ([0-9.]+) %`).FindStringSubmatch(out)
		if m == nil {
			t.Fatal("no goodput line")
		}
		if pct, _ := strconv.ParseFloat(m[1], 64); pct < 95 || pct > 102 {
			t.Errorf("goodput %.1f %% of capacity, want [95, 102]", pct)
		}
	})
	t.Run("sweep", func(t *testing.T) {
		out := runExample(t, "sweep", "-rates", "5mbit,20mbit", "-time", "4s")
		rows := regexp.MustCompile(`(?m)^\s*(\d+mbit)\s.*Mbit/s\s+([0-9.]+)\s`).FindAllStringSubmatch(out, -1)
		if len(rows) != 2 {
			t.Fatalf("%d rows, want 2", len(rows))
		}
		for _, r := range rows {
			if f, _ := strconv.ParseFloat(r[2], 64); f < 0.95 || f > 1.02 {
				t.Errorf("%s: goodput %.3f × capacity, want [0.95, 1.02]", r[1], f)
			}
		}
	})
}
