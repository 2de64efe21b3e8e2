package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/emuctl/emuctl/analysis/report"
	"github.com/spf13/cobra"
)

func newReportCmd() *cobra.Command {
	var (
		out, title string
		warmup     time.Duration
		level      float64
		noRunPlots bool
	)
	cmd := &cobra.Command{
		Use:   "report <results-dir>",
		Short: "Markdown and HTML report (tables, plots, conditions) from the result files in a directory",
		Long: `Reads every result file (*.json, format version 1) under the directory and
writes report.md and report.html with per-run and per-flow tables, repetition
statistics with Student-t confidence intervals (runs with the same "scenario"
are repetitions), ratios to the first scenario, bar charts with error bars,
goodput/cwnd/RTT-CDF plots per run, ACK frequency from referenced captures
against the TACK model, and the recorded conditions. Every table is also
written as CSV and JSON under tables/, every plot as SVG and PNG under plots/.`,
		Example: `  emuctl report results/
  emuctl report results/ -o paper/ --warmup 5s --level 0.99`,
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if out == "" {
				out = filepath.Join(dir, "report")
			}
			if level <= 0 || level >= 1 {
				return fmt.Errorf("--level %g: want a confidence level between 0 and 1, e.g. 0.95", level)
			}
			ws := warmup.Seconds()
			if ws == 0 {
				ws = -1 // analysis.Options: negative means no warm-up
			}
			res, err := report.Generate(dir, out, report.Options{Title: title, WarmupS: ws, Level: level, NoRunPlots: noRunPlots})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n%s\n", res.Markdown, res.HTML)
			fmt.Fprintf(cmd.ErrOrStderr(), "%d runs, %d table files, %d plot files in %s\n", res.Runs, len(res.Tables), len(res.Plots), out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "output directory (default <results-dir>/report)")
	f.StringVar(&title, "title", "", "report title")
	f.DurationVar(&warmup, "warmup", 2*time.Second, "start-up period left out of steady-state windows")
	f.Float64Var(&level, "level", 0.95, "confidence level of the intervals")
	f.BoolVar(&noRunPlots, "no-run-plots", false, "skip the per-run goodput/cwnd/RTT plots")
	return cmd
}
