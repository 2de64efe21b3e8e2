package lab_test

import (
	"testing"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
)

// The labs of this package's tests and examples are named tlab*; the
// supervisor and exec helper they need re-execute this test binary, which
// serves them through emu's init: nothing to call here.
func TestMain(m *testing.M) {
	testutil.Main(m, func() []string { return testutil.Mine(emu.Leaks(), "tlab") })
}
