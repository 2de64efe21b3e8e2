package main

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/spf13/cobra"
)

func newScheduleCmd() *cobra.Command {
	var lab string
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Timed link changes of a running lab: start, stop, show (schedules: in the topology)",
	}
	addLabFlag(cmd, &lab, true)
	cmd.AddCommand(
		&cobra.Command{
			Use:   "start NAME",
			Short: "Start a schedule now (t0: manual ones, or any to start over)",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				st, err := resolveLab(lab)
				if err != nil {
					return err
				}
				if err := golab.StartSchedule(st.Lab, args[0]); err != nil {
					return err
				}
				fmt.Printf("schedule %s started\n", args[0])
				return nil
			},
		},
		&cobra.Command{
			Use:   "stop [NAME]",
			Short: "Stop a schedule (all without NAME); the links keep their current parameters",
			Args:  cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				st, err := resolveLab(lab)
				if err != nil {
					return err
				}
				name := ""
				if len(args) == 1 {
					name = args[0]
				}
				return golab.StopSchedule(st.Lab, name)
			},
		},
		newScheduleShowCmd(&lab),
	)
	return cmd
}

func newScheduleShowCmd(lab *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Each schedule (running or not) and the step log: planned time, how late each step took effect",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := resolveLab(*lab)
			if err != nil {
				return err
			}
			scheds, err := golab.Schedules(st.Lab)
			if err != nil {
				return err
			}
			steps, err := golab.ScheduleLog(st.Lab)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(os.Stdout, struct {
					Schedules []golab.ScheduleStatus `json:"schedules"`
					Steps     []golab.StepLog        `json:"steps"`
				}{scheds, steps})
			}
			if len(scheds) == 0 {
				fmt.Printf("lab %s has no schedules\n", st.Lab)
				return nil
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SCHEDULE\tT0\tSTATE\tSTARTED\tSTEPS APPLIED\tREPEAT")
			for _, s := range scheds {
				state, started := "stopped", "-"
				if s.Running {
					state = "running"
				}
				if !s.Started.IsZero() {
					started = s.Started.Format("15:04:05.000")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d (of %d per run)\t%s\n", s.Name, s.T0, state, started, s.Applied, s.Steps, s.Repeat)
			}
			tw.Flush()
			if len(steps) == 0 {
				return nil
			}
			fmt.Println()
			tw = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "APPLIED\tSCHEDULE\tREP\tPLANNED\tLATE\tSTEP\tRESULT")
			for _, s := range steps {
				res := "ok"
				if s.Error != "" {
					res = "FAILED: " + s.Error
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%v\t%.1f ms\t%s\t%s\n", s.Applied.Format("15:04:05.000"), s.Schedule, s.Rep, s.Planned, float64(s.Late)/float64(time.Millisecond), s.What, res)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
