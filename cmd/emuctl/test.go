package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/emuctl/emuctl/suite"
	"github.com/emuctl/emuctl/ui"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

type testFlags struct {
	quick, paper, list, json bool
	reps                     int
	out                      string
	seed                     uint64
	reference                string
	only                     []string
	ui                       bool
	port                     int
	listen                   string
}

func newTestCmd() *cobra.Command {
	var tf testFlags
	cmd := &cobra.Command{
		Use:   "test <suite | suite.yaml>",
		Short: "Run an experiment suite: build the network, run every scenario, say which checks hold",
		Long: `Runs an experiment suite — a built-in one (emuctl test --list) or a suite
file — and judges its checks. Every repetition of every scenario gets a fresh
lab, in random order; Ctrl-C stops cleanly, tears the lab down and keeps the
runs made so far. Results go to results/<suite>/<timestamp>/ (report.md,
runs.csv, checks.csv, outcome.json, raw results in runs/, plots/).

Checks have a class: physics (any correct emulator passes), fidelity (judges
a run: a failure makes it invalid and it is made again once), behaviour (what
the study is about) and reference (the study's numbers beside ours, never
gating). Exit status: 0 pass, 1 a physics or behaviour check failed (or a run
could not be made), 2 inconclusive (a gating check had no valid run), 130
interrupted.

--reference ns3 runs the scenarios a suite's reference: block covers in
emuctl's own ns-3 program after the labs (built once with g++ against
libns3-dev); the report shows ns-3's values beside Linux's and the paper's
and says what differs. Without ns-3 the column says how to install it.

--ui serves a live page of the suite on 127.0.0.1 (as emuctl ui does, behind
the printed URL's token): the run being made, its lab live (topology, link
rates, queues, drops, events), the runs made, every check judged on the
runs so far (final once its scenarios have all run) and the time left; when
the suite ends its report opens in the page, which stays up until Ctrl-C.
The page is read-only: a change would alter what the runs measure.`,
		Example: `  sudo emuctl test asym-mptcp --quick
  sudo emuctl test sack-reno --reps 5 --out /tmp/results
  sudo emuctl test sack-reno --quick --reference ns3
  sudo emuctl test bufferbloat --quick --ui
  sudo emuctl test my-suite.yaml --json > outcome.json
  emuctl test --list`,
		ValidArgsFunction: completeSuites,
		Args: func(cmd *cobra.Command, args []string) error {
			if tf.list {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if tf.list {
				return listSuites(cmd.OutOrStdout(), tf.json)
			}
			return runTest(cmd, args[0], tf)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&tf.quick, "quick", false, "the quick profile (short flows, one repetition; what CI runs)")
	f.BoolVar(&tf.paper, "paper", false, "the paper profile (the study's own durations and repetitions)")
	f.IntVar(&tf.reps, "reps", 0, "repetitions per scenario (overrides the profile)")
	f.StringVarP(&tf.out, "out", "o", "results", "base directory: results go to <out>/<suite>/<timestamp>/")
	f.BoolVar(&tf.list, "list", false, "list the built-in suites with their run counts and estimated times")
	f.BoolVar(&tf.json, "json", false, "print the outcome (every check and run) as JSON on stdout")
	f.Uint64Var(&tf.seed, "seed", 0, "seed of the random run order (default: random, recorded in the report)")
	f.StringArrayVar(&tf.only, "only", nil, "run only the scenarios with these labels of a parameter: PARAM=LABEL[,LABEL...] (repeatable), as a profile's params: does")
	f.BoolVar(&tf.ui, "ui", false, "serve a live page of the suite (its lab, progress, checks so far, then its report) on loopback until Ctrl-C")
	f.IntVar(&tf.port, "port", 0, "with --ui: port on 127.0.0.1 (default: a free one)")
	f.StringVar(&tf.listen, "listen", "", "with --ui: ADDR:PORT to serve on instead of 127.0.0.1 (beyond loopback: with care)")
	f.StringVar(&tf.reference, "reference", "", "also run the suite's scenarios in a simulator after the labs, for a third column beside Linux and the paper: ns3 (emuctl's own ns-3 programs, validate/ns3; needs libns3-dev and g++)")
	return cmd
}

func profileOf(tf testFlags) (string, error) {
	switch {
	case tf.quick && tf.paper:
		return "", fmt.Errorf("give --quick or --paper, not both")
	case tf.quick:
		return "quick", nil
	case tf.paper:
		return "paper", nil
	}
	return "default", nil
}

func runTest(cmd *cobra.Command, arg string, tf testFlags) error {
	profile, err := profileOf(tf)
	if err != nil {
		return err
	}
	if tf.reps < 0 {
		return fmt.Errorf("--reps %d: want a positive number", tf.reps)
	}
	if !tf.ui && (cmd.Flags().Changed("port") || tf.listen != "") {
		return fmt.Errorf("--port and --listen serve the suite's page: give them with --ui")
	}
	s, err := suite.Open(arg)
	if err != nil {
		return err
	}
	only, err := suite.ParseOnly(tf.only)
	if err != nil {
		return err
	}
	plan, err := s.Plan(profile, suite.PlanOptions{Reps: tf.reps, Only: only})
	if err != nil {
		return err
	}
	dir := filepath.Join(tf.out, s.Name, time.Now().Format("20060102-150405"))
	errw := cmd.ErrOrStderr()
	// what carries the scenarios here (real multi-link or its wired
	// stand-in, say): the counts below are of what will run
	_, media := plan.ChooseMedia()
	for _, m := range media {
		if m.Ran {
			fmt.Fprintf(errw, "%s=%s: %s\n", m.Param, m.Label, m.Medium)
		}
	}
	// and what this machine cannot run at all (a congestion control or
	// queue discipline its kernel lacks), said so
	for _, n := range plan.LeaveOutUnavailable() {
		fmt.Fprintln(errw, n)
	}
	fmt.Fprintf(errw, "%s (%s): %d scenarios × %d repetition(s) = %d runs, about %s; results in %s\n",
		s.Name, profile, len(plan.Scenarios), plan.Profile.Reps, plan.Runs(), roundDur(plan.Estimate()), dir)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var ran atomic.Bool // the suite has ended: a signal now stops the page
	go func() {
		for range sigs {
			if ran.Load() {
				cancel()
				continue
			}
			if ctx.Err() == nil {
				fmt.Fprintln(errw, "\nstopping: the running flows end now, the lab is torn down, the runs made so far are kept")
				cancel()
			} else {
				fmt.Fprintln(errw, "still cleaning up; wait a moment")
			}
		}
	}()
	opt := suite.Options{Dir: dir, Seed: tf.seed, Lab: fmt.Sprintf("%s-%d", s.Name, os.Getpid()), Log: logger(), Reference: tf.reference}
	if tf.ui {
		page, err := startSuiteUI(cmd, tf, opt)
		if err != nil {
			return err
		}
		defer page.stop()
		opt.Watch = func(st suite.Status) { page.feed.Set(st) }
	}
	opt.Progress, opt.TTY = errw, term.IsTerminal(int(os.Stderr.Fd()))
	out, err := suite.Run(ctx, plan, opt)
	ran.Store(true)
	if out == nil {
		return err
	}
	latest := filepath.Join(tf.out, s.Name, "latest")
	os.Remove(latest)
	os.Symlink(filepath.Base(dir), latest)
	if tf.json {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		enc.Encode(out)
	} else {
		printOutcome(cmd.OutOrStdout(), out)
	}
	if err != nil {
		fmt.Fprintln(errw, "emuctl: writing results: "+err.Error())
	}
	if tf.ui && ctx.Err() == nil {
		fmt.Fprintln(errw, "the page shows the report; Ctrl-C to stop it")
		<-ctx.Done()
	}
	if code := out.ExitCode(); code != 0 {
		return exitError{code}
	}
	return err
}

// suitePage is the page of a suite being run (emuctl test --ui).
type suitePage struct {
	feed *ui.SuiteFeed
	stop func()
}

// startSuiteUI serves the suite's page (read-only) and prints its URL on
// stderr (stdout may carry --json).
func startSuiteUI(cmd *cobra.Command, tf testFlags, opt suite.Options) (*suitePage, error) {
	addr, err := uiAddr(cmd, tf.port, tf.listen)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, err
	}
	feed := &ui.SuiteFeed{}
	srv, err := ui.New(ui.Options{Lab: opt.Lab, Listen: addr, Report: opt.Dir, Suite: feed, Log: logger()})
	if err != nil {
		return nil, err
	}
	errw := cmd.ErrOrStderr()
	if !srv.Loopback() {
		fmt.Fprintf(errw, "\033[1;31mwarning: serving on %s, beyond loopback: anyone who reaches it with the URL sees the suite and its labs\033[0m\n", srv.Addr())
	}
	fmt.Fprintf(errw, "emuctl test --ui: the suite's page (read-only)\n    %s\n", srv.URL())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx); err != nil {
			fmt.Fprintln(errw, "emuctl test --ui: "+err.Error())
		}
	}()
	return &suitePage{feed: feed, stop: func() { cancel(); <-done }}, nil
}

func roundDur(d time.Duration) time.Duration {
	if d > time.Minute {
		return d.Round(time.Minute / 6)
	}
	return d.Round(time.Second)
}

var statusWord = map[string]string{"pass": "PASS", "fail": "FAIL", "skip": "skip", "n/a": "n/a", "info": "ref", "invalid": "INVALID"}

// printOutcome prints the verdict and the check table.
func printOutcome(w io.Writer, o *suite.Outcome) {
	fmt.Fprintf(w, "%s — %s\n", o.Suite, o.Title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range o.Checks {
		st := statusWord[c.Status]
		if c.Holds != nil {
			st = map[bool]string{true: "ref+", false: "ref-"}[*c.Holds]
			if !*c.Holds && c.HoldsIn > 0 {
				st = fmt.Sprintf("ref%d/%d", c.HoldsIn, c.Judged)
			}
		}
		line := c.Measured
		if c.Status == "skip" || c.Status == "n/a" {
			line = c.Reason
		}
		if c.Reference != nil && o.Reference != nil {
			line += "   [" + suite.EngineName(o.Reference.Engine) + ": " + c.Reference.Measured + "]"
		}
		if c.Paper != "" {
			line += "   [paper: " + c.Paper + "]"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", st, c.ID, c.Class, clip(c.Title, 60), clip(line, 90))
	}
	tw.Flush()
	invalid := 0
	for _, r := range o.Runs {
		if r.Status() == "invalid" {
			invalid++
		}
	}
	fmt.Fprintf(w, "verdict: %s (%d runs, %d invalid, %s)  (ref+/ref-/refK/N: the study's claim holds / does not / in K of N cases here; never gating)\n",
		upper(o.Verdict), len(o.Runs), invalid, o.Finished.Sub(o.Started).Round(time.Second))
	fmt.Fprintf(w, "report: %s\n", filepath.Join(o.Dir, "report.md"))
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

// listSuites prints every built-in suite with its size per profile.
func listSuites(w io.Writer, asJSON bool) error {
	type row struct {
		Name    string         `json:"name"`
		Title   string         `json:"title"`
		Runs    map[string]int `json:"runs"`
		Seconds map[string]int `json:"estimated_seconds"`
		// Reference lists the engines --reference can run for the suite.
		Reference []string `json:"reference,omitempty"`
	}
	var rows []row
	for _, name := range suite.Builtins() {
		s, err := suite.LoadBuiltin(name)
		if err != nil {
			return err
		}
		r := row{Name: name, Title: s.Title, Runs: map[string]int{}, Seconds: map[string]int{}}
		for _, e := range suite.Engines {
			if s.Reference[e] != nil {
				r.Reference = append(r.Reference, e)
			}
		}
		for _, p := range suite.ProfileNames {
			if plan, err := s.Plan(p, suite.PlanOptions{}); err == nil {
				r.Runs[p], r.Seconds[p] = plan.Runs(), int(plan.Estimate().Seconds())
			}
		}
		rows = append(rows, r)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SUITE\tQUICK\tDEFAULT\tPAPER\tREFERENCE\tTITLE")
	for _, r := range rows {
		cell := func(p string) string {
			return fmt.Sprintf("%d runs ~%s", r.Runs[p], roundDur(time.Duration(r.Seconds[p])*time.Second))
		}
		ref := strings.Join(r.Reference, ",")
		if ref == "" {
			ref = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, cell("quick"), cell("default"), cell("paper"), ref, r.Title)
	}
	return tw.Flush()
}
