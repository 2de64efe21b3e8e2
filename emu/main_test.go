package emu

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	MaybeRunHelper()
	code := m.Run()
	if os.Geteuid() == 0 {
		if leaks := Leaks(); len(leaks) > 0 {
			fmt.Fprintf(os.Stderr, "LEAK CHECK FAILED: %d emuctl objects remain:\n", len(leaks))
			for _, l := range leaks {
				fmt.Fprintln(os.Stderr, "  "+l)
			}
			code = 1
		} else {
			fmt.Println("leak check: no emuctl namespace, interface, state dir or process remains")
		}
	}
	os.Exit(code)
}
