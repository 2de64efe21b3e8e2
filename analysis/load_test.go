package analysis

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeErrors(t *testing.T) {
	for name, c := range map[string]struct {
		doc  string
		want string
	}{
		"not a result":   {`{"title": "x"}`, "not an emuctl result"},
		"future version": {`{"version": 2, "flows": []}`, "version 2 is not supported"},
		"unknown field":  {`{"version": 1, "flows": [], "flowz": 1}`, `unknown field "flowz"`},
		"bad proto":      {`{"version": 1, "flows": [{"id": "a", "proto": "sctp", "from": "x", "to": "y", "start_s": 0, "end_s": 1}]}`, `proto "sctp"`},
		"duplicate id": {`{"version": 1, "flows": [{"id": "a", "proto": "tcp", "from": "x", "to": "y", "start_s": 0, "end_s": 1},
			{"id": "a", "proto": "tcp", "from": "x", "to": "y", "start_s": 0, "end_s": 1}]}`, "duplicate id"},
		"unordered samples": {`{"version": 1, "flows": [{"id": "a", "proto": "tcp", "from": "x", "to": "y", "start_s": 0, "end_s": 1,
			"samples": [{"t_s": 1, "bytes": 1, "goodput_bps": 8}, {"t_s": 0.5, "bytes": 1, "goodput_bps": 8}]}]}`, "not after"},
		"unknown event flow": {`{"version": 1, "flows": [], "cong_state_events": [{"t_s": 1, "flow": "zz", "state": 3}]}`, `unknown flow "zz"`},
	} {
		_, err := Decode(strings.NewReader(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", name, err, c.want)
		}
	}
	_, err := Decode(strings.NewReader(`{"title": "x"}`))
	if !errors.Is(err, ErrNotResult) {
		t.Errorf("not a result: %v is not ErrNotResult", err)
	}
}

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	write := func(name string, r *Result) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := Encode(f, r); err != nil {
			t.Fatal(err)
		}
	}
	write("b.json", exampleResult())
	write("sub/a.json", exampleResult())
	os.WriteFile(filepath.Join(dir, "table.json"), []byte(`{"rows": []}`), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	got, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || filepath.Base(got[0].Path) != "b.json" || filepath.Base(got[1].Path) != "a.json" {
		t.Fatalf("%v", got)
	}
	// through a symbolic link, as a suite's results/SUITE/latest: the
	// same results, their paths under the link
	link := filepath.Join(t.TempDir(), "latest")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	got, err = LoadDir(link)
	if err != nil || len(got) != 2 || got[0].Path != filepath.Join(link, "b.json") || got[1].Path != filepath.Join(link, "sub", "a.json") {
		t.Fatalf("through a link: %v, %v", got, err)
	}
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"version": 1, "flows": [{"id": ""}]}`), 0o644)
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("broken result: %v", err)
	}
}
