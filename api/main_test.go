package api

import (
	"testing"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
)

// The labs of this package's tests are named tapi*.
func TestMain(m *testing.M) {
	testutil.Main(m, func() []string { return testutil.Mine(emu.Leaks(), "tapi") })
}
