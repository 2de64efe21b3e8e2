package ui_test

import (
	"testing"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
)

// The labs of this package's tests are named tui*. The supervisor and
// exec helper their labs need re-execute this test binary (emu's init).
func TestMain(m *testing.M) {
	testutil.Main(m, func() []string { return testutil.Mine(emu.Leaks(), "tui") })
}
