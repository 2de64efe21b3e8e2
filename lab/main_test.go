package lab_test

import (
	"testing"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
)

// The labs of this package's tests are named tlab*, those of the programs
// in examples/ (TestExamples) quickstart and sweep. The supervisor and exec
// helper the tests' labs need re-execute this test binary, which serves
// them through emu's init: nothing to call here.
func TestMain(m *testing.M) {
	testutil.Main(m, func() []string { return testutil.Mine(emu.Leaks(), "tlab", "quickstart", "sweep") })
}
