package lab_test

import (
	"reflect"
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
