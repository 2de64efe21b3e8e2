package emu

import (
	"testing"

	"github.com/emuctl/emuctl/internal/testutil"
)

func TestMain(m *testing.M) {
	testutil.Main(m, Leaks)
}
