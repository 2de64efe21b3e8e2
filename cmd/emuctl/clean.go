package main

import (
	"fmt"
	"os"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/spf13/cobra"
)

func newCleanCmd() *cobra.Command {
	var all, asJSON, check bool
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove leftovers of crashed labs: only objects carrying emuctl's marker",
		Long: `clean finds namespaces, interfaces, hosts files, processes and state dirs that
carry emuctl's ownership marker and belong to a lab that is not running (a
crashed or killed 'up' or 'down'), and removes them. Running labs are left
alone unless --all is given. Nothing without the marker is ever touched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if check {
				leaks := golab.Leaks()
				if asJSON {
					if err := writeJSON(os.Stdout, struct {
						Objects []string `json:"objects"`
					}{append([]string{}, leaks...)}); err != nil {
						return err
					}
				} else {
					for _, l := range leaks {
						fmt.Println(l)
					}
				}
				if len(leaks) > 0 {
					return exitError{1}
				}
				return nil
			}
			rep, err := golab.Clean(all, logger())
			if rep != nil {
				if asJSON {
					if err := writeJSON(os.Stdout, rep); err != nil {
						return err
					}
				} else {
					for _, r := range rep.Removed {
						fmt.Println("removed " + r)
					}
					for _, s := range rep.Skipped {
						fmt.Println("left alone " + s)
					}
					if len(rep.Removed) == 0 && len(rep.Errors) == 0 {
						fmt.Println("nothing to clean")
					}
				}
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also tear down running labs")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: what was removed and left alone, or with --check the objects found")
	cmd.Flags().BoolVar(&check, "check", false, "only list emuctl objects present on this machine; exit 1 if any")
	return cmd
}
