package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/emuctl/emuctl/analysis/report"
	"github.com/emuctl/emuctl/ui"
	"github.com/spf13/cobra"
)

func newReportCmd() *cobra.Command {
	var (
		out, title string
		warmup     time.Duration
		level      float64
		noRunPlots bool
		serve      bool
		port       int
		listen     string
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
written as CSV and JSON under tables/, every plot as SVG and PNG under plots/.

With --ui it then serves the results directory as a page on 127.0.0.1 (as
emuctl ui does: a free port unless --port, a URL with a random token, every
request without it refused): a suite's report (its verdict, checks and
plots) as the front page, the analysis report one click away, and every
file of the directory, read-only, until Ctrl-C.`,
		Example: `  emuctl report results/
  emuctl report results/ -o paper/ --warmup 5s --level 0.99
  emuctl report results/asym-mptcp/latest --ui`,
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
			if !serve {
				return nil
			}
			addr, err := uiAddr(cmd, port, listen)
			if err != nil {
				return err
			}
			// the directory is served with the report in it; a report
			// written elsewhere (-o) is served on its own
			root, page := dir, filepath.Join(out, "report.html")
			if rel, err := filepath.Rel(dir, page); err == nil && filepath.IsLocal(rel) {
				page = rel
			} else {
				root, page = out, "report.html"
			}
			return serveUI(cmd, ui.Options{Report: root, ReportHTML: page, Listen: addr, Log: logger()},
				"emuctl report: "+root, "reads every file of "+root)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "output directory (default <results-dir>/report)")
	f.StringVar(&title, "title", "", "report title")
	f.DurationVar(&warmup, "warmup", 2*time.Second, "start-up period left out of steady-state windows")
	f.Float64Var(&level, "level", 0.95, "confidence level of the intervals")
	f.BoolVar(&noRunPlots, "no-run-plots", false, "skip the per-run goodput/cwnd/RTT plots")
	f.BoolVar(&serve, "ui", false, "then serve the directory as a page (loopback, behind a token) until Ctrl-C")
	f.IntVar(&port, "port", 0, "with --ui: port on 127.0.0.1 (default: a free one)")
	f.StringVar(&listen, "listen", "", "with --ui: ADDR:PORT to serve on instead of 127.0.0.1 (beyond loopback: with care)")
	return cmd
}
