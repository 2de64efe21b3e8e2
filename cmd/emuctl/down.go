package main

import (
	"fmt"

	"github.com/emuctl/emuctl/emu"
	"github.com/spf13/cobra"
)

func newDownCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "down [lab]",
		Short: "Tear a lab down (idempotent); without a name, the only running lab",
		Example: `  sudo emuctl down
  sudo emuctl down demo
  sudo emuctl down --all`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var labs []string
			switch {
			case all:
				sts, err := emu.Labs()
				if err != nil {
					return err
				}
				for _, s := range sts {
					labs = append(labs, s.Lab)
				}
			case len(args) == 1:
				labs = []string{args[0]}
			default:
				sts, err := emu.Labs()
				if err != nil {
					return err
				}
				if len(sts) == 0 {
					fmt.Println("no lab is running")
					return nil
				}
				st, err := resolveLab("")
				if err != nil {
					return err
				}
				labs = []string{st.Lab}
			}
			for _, lab := range labs {
				if err := emu.Down(lab, logger()); err != nil {
					return err
				}
				fmt.Printf("lab %s down\n", lab)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "tear down every lab")
	return cmd
}
