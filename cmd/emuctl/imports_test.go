package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoEmuImport pins the thin CLI: cmd/emuctl reaches the runtime only
// through package lab (design.md: "Clients go through lab; nothing above
// it reaches into the runtime"). Tests may still import emu.
func TestNoEmuImport(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == "github.com/emuctl/emuctl/emu" {
				t.Errorf("%s imports %s: use package lab (add what is missing there)", f, path)
			}
		}
	}
}
