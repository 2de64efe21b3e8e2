package emu

import (
	"testing"

	"github.com/emuctl/emuctl/internal/testutil"
)

func TestMain(m *testing.M) {
	MaybeRunHelper()
	testutil.Main(m, Leaks)
}
