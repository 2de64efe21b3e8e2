package main

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/spf13/cobra"
)

func newWiFiMobilityCmd(lab *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "mobility [start|stop [node]]",
		Short: "The lab's moving nodes (mobility: in the topology): where each is, how often it is placed; start (over) or stop a node's path",
		Example: `  sudo emuctl wifi mobility              # every moving node
  sudo emuctl wifi mobility start sta1   # sta1's path from its beginning
  sudo emuctl wifi mobility stop         # every node stays where it is`,
		Args:      cobra.MaximumNArgs(2),
		ValidArgs: []string{"start", "stop"},
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := resolveLab(*lab)
			if err != nil {
				return err
			}
			node := ""
			if len(args) == 2 {
				node = args[1]
			}
			switch {
			case len(args) == 0:
			case args[0] == "start":
				if node == "" {
					return fmt.Errorf("start needs the node whose path to start (emuctl wifi mobility start sta1)")
				}
				if err := golab.StartMobility(st.Lab, node); err != nil {
					return err
				}
			case args[0] == "stop":
				if err := golab.StopMobility(st.Lab, node); err != nil {
					return err
				}
			default:
				return fmt.Errorf("%q: want start or stop (or nothing, to show the moving nodes)", args[0])
			}
			mob, err := golab.Mobility(st.Lab)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(os.Stdout, map[string]any{"lab": st.Lab, "mobility": mob})
			}
			printMobility(mob)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// printMobility prints each moving node: its path, state, position and
// how often the supervisor placed it.
func printMobility(ms []golab.MobilityStatus) {
	if len(ms) == 0 {
		return
	}
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MOBILITY\tPATH\tSTATE\tPOSITION\tPLACED")
	for _, m := range ms {
		state := "waiting for t0 " + m.T0
		switch {
		case m.Running:
			state = fmt.Sprintf("moving for %v", time.Since(m.Started).Round(100*time.Millisecond))
		case m.Finished:
			state = "at its last waypoint"
		case !m.Started.IsZero():
			state = "stopped"
		}
		if m.Error != "" {
			state += " (" + m.Error + ")"
		}
		placed := ""
		if m.Moves > 0 {
			placed = fmt.Sprintf("%d× at %.1f Hz (longest gap %v)", m.Moves, m.RateHz, m.MaxGap.Round(time.Millisecond))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Node, m.Model, state, posString(m.Pos), placed)
	}
	tw.Flush()
}
