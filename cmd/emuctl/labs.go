package main

import (
	"fmt"
	"strings"

	"github.com/emuctl/emuctl/emu"
)

// resolveLab picks the lab a command acts on: the one named, or the only
// one running.
func resolveLab(name string) (*emu.State, error) {
	if name != "" {
		return emu.ReadState(name)
	}
	labs, err := emu.Labs()
	if err != nil {
		return nil, err
	}
	switch len(labs) {
	case 0:
		return nil, fmt.Errorf("no lab is running (start one with `emuctl up <topology.yaml>`)")
	case 1:
		return labs[0], nil
	}
	var names []string
	for _, l := range labs {
		names = append(names, l.Lab)
	}
	return nil, fmt.Errorf("%d labs are running (%s): name one with --lab", len(labs), strings.Join(names, ", "))
}
