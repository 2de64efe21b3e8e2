package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/spf13/cobra"
)

func newDoctorCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "What this kernel and machine can do, and which backend emuctl uses for each concern",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r := golab.Doctor()
			if asJSON {
				return writeJSON(os.Stdout, r)
			}
			mark := func(ok bool) string {
				if ok {
					return "yes"
				}
				return "no"
			}
			fmt.Printf("kernel %s\n\n", r.Kernel)
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CAPABILITY\tOK\tDETAIL")
			for _, c := range r.Capabilities {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, mark(c.OK), c.Detail)
			}
			tw.Flush()
			fmt.Println()
			tw = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOOL\tFOUND\tDETAIL")
			for _, c := range r.Tools {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, mark(c.OK), c.Detail)
			}
			tw.Flush()
			fmt.Println()
			tw = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CONCERN\tBACKEND\tWHY")
			for _, b := range r.Backends {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", b.Concern, b.Uses, b.Why)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
