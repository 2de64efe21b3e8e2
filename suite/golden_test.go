package suite

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestBadSuitesGolden loads every testdata/bad/*.yaml and compares the
// positioned errors (file:line:col: path: message) with its .golden file.
func TestBadSuitesGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	if len(files) == 0 {
		t.Fatal("no bad suites")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := LoadFile(f)
			if err == nil {
				t.Fatal("loaded without error")
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(f, ".yaml") + ".golden"
			if *update {
				os.WriteFile(golden, []byte(got), 0o644)
			}
			want, rerr := os.ReadFile(golden)
			if rerr != nil {
				t.Fatalf("%v (run go test -update)", rerr)
			}
			if got != string(want) {
				t.Errorf("errors differ from %s:\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
			for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
				if !strings.HasPrefix(line, f+":") {
					t.Errorf("error without the file name: %q", line)
				}
			}
		})
	}
}
