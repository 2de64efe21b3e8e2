package main

import (
	"errors"
	"fmt"
	"os"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/spf13/cobra"
)

func newDownCmd() *cobra.Command {
	var (
		all bool
		lab string
	)
	cmd := &cobra.Command{
		Use:               "down [--lab LAB | LAB | --all]",
		ValidArgsFunction: completeLabArg,
		Short:             "Tear a lab down (idempotent); without a name, the only running lab",
		Example: `  sudo emuctl down
  sudo emuctl down --lab demo
  sudo emuctl down demo
  sudo emuctl down --all`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := labArg(lab, args)
			if err != nil {
				return err
			}
			var labs []string
			switch {
			case all && name != "":
				return errors.New("give a lab or --all, not both")
			case all:
				sts, err := golab.Labs()
				if err != nil {
					return err
				}
				labs = labNames(sts)
			case name != "":
				// Idempotent: a lab that is not running is already down,
				// and down still removes whatever a crash left of it. A
				// mistyped name is said, with the labs that do run.
				if _, err := resolveLab(name); err != nil {
					fmt.Fprintf(os.Stderr, "note: %v; removing whatever is left of it\n", err)
				}
				labs = []string{name}
			default:
				st, err := resolveLab("")
				if errors.Is(err, errNoLabRunning) {
					fmt.Println("no lab is running")
					return nil
				}
				if err != nil {
					return err
				}
				labs = []string{st.Lab}
			}
			for _, lab := range labs {
				if err := golab.Down(lab, logger()); err != nil {
					return err
				}
				fmt.Printf("lab %s down\n", lab)
			}
			return nil
		},
	}
	addLabFlag(cmd, &lab, false)
	cmd.Flags().BoolVar(&all, "all", false, "tear down every lab")
	return cmd
}
