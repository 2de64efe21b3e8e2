package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/emuctl/emuctl/internal/suggest"
	golab "github.com/emuctl/emuctl/lab"
	"github.com/spf13/cobra"
)

// The lab-selection rule, the same for every command that acts on a
// running lab (README, "Commands"):
//
//   - --lab/-l LAB names the lab;
//   - without it, the command acts on the only running lab, and when none
//     or several run it says so and names them;
//   - ls, inspect, down, verify and cli have always taken the lab as their
//     one positional argument too: that form stays, as an alias of --lab.
//
// Every lab-taking command gets its flag from addLabFlag and its lab from
// resolveLab, so the flag, its completion and the errors cannot drift.

// addLabFlag gives cmd --lab/-l with lab-name completion. A parent whose
// subcommands all act on a lab (link, wifi) passes persistent.
func addLabFlag(cmd *cobra.Command, lab *string, persistent bool) {
	fs := cmd.Flags()
	if persistent {
		fs = cmd.PersistentFlags()
	}
	fs.StringVarP(lab, "lab", "l", "", "lab to act on (default: the only running lab)")
	completeFlag(cmd, "lab", completeLabs)
}

// labArg merges the positional alias (ls, inspect, down, verify, cli) with
// --lab: either may name the lab; both must agree.
func labArg(lab string, args []string) (string, error) {
	if len(args) == 0 {
		return lab, nil
	}
	if lab != "" && lab != args[0] {
		return "", fmt.Errorf("two labs given: %q and --lab %q (give one)", args[0], lab)
	}
	return args[0], nil
}

// resolveLab picks the lab a command acts on: the one named, or the only
// one running.
func resolveLab(name string) (*golab.State, error) {
	if name != "" {
		st, err := golab.ReadState(name)
		if errors.Is(err, golab.ErrNoLab) {
			return nil, unknownLab(name)
		}
		return st, err
	}
	labs, err := golab.Labs()
	if err != nil {
		return nil, err
	}
	switch len(labs) {
	case 0:
		return nil, errNoLabRunning
	case 1:
		return labs[0], nil
	}
	return nil, fmt.Errorf("%d labs are running (%s): choose one with --lab/-l LAB", len(labs), strings.Join(labNames(labs), ", "))
}

var errNoLabRunning = errors.New("no lab is running (start one with `emuctl up <topology.yaml>`)")

// unknownLab is the error for a lab name that names no running lab.
func unknownLab(name string) error {
	labs, _ := golab.Labs()
	if len(labs) == 0 {
		return fmt.Errorf("no lab %q is running (none is; start one with `emuctl up <topology.yaml>`)", name)
	}
	names := labNames(labs)
	return fmt.Errorf("no lab %q is running (running: %s%s)", name, strings.Join(names, ", "), suggest.DidYouMean(name, names))
}

func labNames(labs []*golab.State) []string {
	var names []string
	for _, l := range labs {
		names = append(names, l.Lab)
	}
	return names
}
