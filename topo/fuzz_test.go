package topo

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzLoad: Load never panics, returns either a Spec or Errors (never
// both), every error has a message, and Specs are deterministic and
// consistent. Seeds: every YAML file under testdata and topologies.
func FuzzLoad(f *testing.F) {
	for _, pattern := range []string{"testdata/good/*.yaml", "testdata/bad/*.yaml", "../topologies/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("nodes: {h1: {}, h2: {}}\nlinks: [{endpoints: [h1, h2]}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := Load("fuzz.yaml", data)
		if err != nil {
			if spec != nil {
				t.Fatalf("both a Spec and an error")
			}
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %T is not non-empty Errors: %v", err, err)
			}
			for _, e := range es {
				if e.Msg == "" || e.File != "fuzz.yaml" {
					t.Fatalf("bad error %+v", e)
				}
			}
			return
		}
		checkSpec(t, spec)
		again, err := Load("fuzz.yaml", data)
		if err != nil || !reflect.DeepEqual(spec, again) {
			t.Fatalf("second load differs (err %v)", err)
		}
	})
}
