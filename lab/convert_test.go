package lab_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/lab"
)

// TestOwnTypesMatchEmu: each of lab's copies of an emu result type has
// emu's fields, in emu's order, with emu's types and JSON tags, so the
// JSON the CLI and the API print is the runtime's (a conversion between
// them compiles whatever the tags say).
func TestOwnTypesMatchEmu(t *testing.T) {
	for _, p := range [][2]any{
		{lab.VerifyOptions{}, emu.VerifyOptions{}},
		{lab.PingResult{}, emu.PingResult{}},
		{lab.CleanReport{}, emu.CleanReport{}},
		{lab.ScheduleStatus{}, emu.ScheduleStatus{}},
		{lab.StepLog{}, emu.StepLog{}},
		{lab.MobilityStatus{}, emu.MobilityStatus{}},
		{lab.DirResult{}, emu.DirResult{}},
		{lab.Capability{}, emu.Capability{}},
		{lab.BackendChoice{}, emu.Backend{}},
		{lab.IfaceBuilt{}, emu.IfaceBuilt{}},
	} {
		sameFields(t, reflect.TypeOf(p[0]), reflect.TypeOf(p[1]), true)
	}
	// built field by field, of the copies above: names and tags
	sameFields(t, reflect.TypeFor[lab.DoctorReport](), reflect.TypeFor[emu.Report](), false)
	sameFields(t, reflect.TypeFor[lab.NodeBuilt](), reflect.TypeFor[emu.NodeBuilt](), false)
}

func sameFields(t *testing.T, ours, theirs reflect.Type, sameTypes bool) {
	t.Helper()
	if ours.NumField() != theirs.NumField() {
		t.Errorf("lab.%s has %d fields, emu.%s %d", ours.Name(), ours.NumField(), theirs.Name(), theirs.NumField())
		return
	}
	for i := range ours.NumField() {
		a, b := ours.Field(i), theirs.Field(i)
		if a.Name != b.Name || (sameTypes && a.Type != b.Type) || a.Tag != b.Tag {
			t.Errorf("lab.%s field %d is %s %s `%s`, emu's %s %s `%s`", ours.Name(), i, a.Name, a.Type, a.Tag, b.Name, b.Type, b.Tag)
		}
	}
}

// TestOwnTypesNoEmu: no exported name of package lab reaches a type
// defined in package emu, the runtime: not an exported type (an alias
// included), nor a field, element, parameter or result of one, nor of
// an exported func, method or var, followed through the types they name
// (labstate's State and what it nests among them). It reads the
// compiled package's export data, as `go list -export` gives it.
func TestOwnTypesNoEmu(t *testing.T) {
	const labPath, emuPath = "github.com/emuctl/emuctl/lab", "github.com/emuctl/emuctl/emu"
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to find the export data with")
	}
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", labPath).Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		if f, ok := exports[path]; ok {
			return os.Open(f)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	})
	pkg, err := imp.Import(labPath)
	if err != nil {
		t.Fatal(err)
	}
	w := emuWalker{emu: emuPath, seen: map[*types.TypeName]bool{}}
	for _, name := range pkg.Scope().Names() {
		obj := pkg.Scope().Lookup(name)
		if !obj.Exported() {
			continue
		}
		w.walk("lab."+name, obj.Type())
	}
	for _, b := range w.found {
		t.Errorf("%s: use a type of lab's or labstate's", b)
	}
	if len(w.seen) < 20 {
		t.Errorf("walked %d named types from lab's exported names: expected State and what it nests", len(w.seen))
	}

	// the walk finds an emu type where there is one (emu's Options, a
	// type of its own)
	if emuPkg, err := imp.Import(emuPath); err != nil {
		t.Fatal(err)
	} else {
		w := emuWalker{emu: emuPath, seen: map[*types.TypeName]bool{}}
		w.walk("emu.Options", emuPkg.Scope().Lookup("Options").Type())
		if len(w.found) != 1 {
			t.Errorf("walk of emu.Options found %q, want itself", w.found)
		}
	}
}

// emuWalker follows a type through what an importer of lab can reach of
// it, noting every type of package emu it comes to.
type emuWalker struct {
	emu   string
	seen  map[*types.TypeName]bool
	found []string
}

func (w *emuWalker) walk(at string, t types.Type) {
	switch t := t.(type) {
	case *types.Alias:
		w.walk(at, types.Unalias(t))
	case *types.Named:
		obj := t.Origin().Obj()
		if obj.Pkg() != nil && obj.Pkg().Path() == w.emu {
			w.found = append(w.found, fmt.Sprintf("%s is emu.%s", at, obj.Name()))
			return
		}
		for a := range t.TypeArgs().Types() {
			w.walk(at+"[type argument]", a)
		}
		if w.seen[obj] {
			return
		}
		w.seen[obj] = true
		name := obj.Name()
		if obj.Pkg() != nil {
			name = obj.Pkg().Name() + "." + name
		}
		w.walk(name, t.Underlying())
		for m := range t.Methods() {
			if m.Exported() {
				w.walk(name+"."+m.Name(), m.Type())
			}
		}
	case *types.Pointer:
		w.walk(at, t.Elem())
	case *types.Slice:
		w.walk(at+"[]", t.Elem())
	case *types.Array:
		w.walk(at+"[]", t.Elem())
	case *types.Chan:
		w.walk(at+"<-", t.Elem())
	case *types.Map:
		w.walk(at+"[key]", t.Key())
		w.walk(at+"[]", t.Elem())
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() || f.Embedded() {
				w.walk(at+"."+f.Name(), f.Type())
			}
		}
	case *types.Signature:
		for p := range t.Params().Variables() {
			w.walk(at+"(param)", p.Type())
		}
		for r := range t.Results().Variables() {
			w.walk(at+"(result)", r.Type())
		}
	case *types.Interface:
		for m := range t.Methods() {
			if m.Exported() {
				w.walk(at+"."+m.Name(), m.Type())
			}
		}
	}
}
