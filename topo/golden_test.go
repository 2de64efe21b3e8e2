package topo

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/bad/*.golden")

// TestBadFiles loads every testdata/bad/*.yaml and compares the complete
// error text (every problem, with file:line:col) with its .golden file.
// Run "go test ./topo -run TestBadFiles -update" after a deliberate change.
func TestBadFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			spec, err := LoadFile(file)
			if err == nil {
				t.Fatalf("loaded without error: %+v", spec)
			}
			if spec != nil {
				t.Errorf("got a Spec along with the error")
			}
			if _, ok := err.(Errors); !ok {
				t.Errorf("error is %T, want topo.Errors", err)
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("errors differ from %s\n--- got:\n%s--- want:\n%s", golden, got, want)
			}
		})
	}
}
