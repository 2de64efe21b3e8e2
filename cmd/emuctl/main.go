// Command emuctl builds network emulation labs from YAML topologies with
// real kernel objects. Each subcommand lives in its own file and calls one
// library entry point; results go to stdout, logs to stderr.
//
// The binary's hidden roles (exec helper, lab supervisor, daemon keeper:
// emuctl re-executed by itself) are served by package emu's init before
// main runs; see emu/roles.go.
package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

// exitError carries a process exit code (exec propagates the command's).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

var logLevel = new(slog.LevelVar)

func logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel}))
}

func newRoot() *cobra.Command {
	var verbose bool
	root := &cobra.Command{
		Use:           "emuctl",
		Short:         "Network emulation labs from YAML topologies, on real kernel networking",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			logLevel.Set(slog.LevelWarn)
			if verbose {
				logLevel.Set(slog.LevelDebug)
			}
		},
	}
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "log every host change to stderr")
	setVersion(root) // --version (version.go)
	// Every command, in one list, in the order of the README's table (and
	// of `emuctl help`): a new command is added here and nowhere else.
	cobra.EnableCommandSorting = false
	root.AddCommand(
		newValidateCmd(),
		newUpCmd(),
		newDownCmd(),
		newLsCmd(),
		newWiFiCmd(),
		newInspectCmd(),
		newExecCmd(),
		newShellCmd(),
		newCLICmd(),
		newMnCmd(),
		newMininetCmd(),
		newCleanCmd(),
		newDoctorCmd(),
		newVerifyCmd(),
		newNodeCmd(),
		newLinkCmd(),
		newScheduleCmd(),
		newMPTCPCmd(),
		newTrafficCmd(),
		newCaptureCmd(),
		newModelCmd(),
		newReportCmd(),
		newTestCmd(),
		newAPICmd(),
		newUICmd(),
		newBenchCmd(),
		newVersionCmd(),
	)
	noFileArgs(root) // completion.go
	return root
}

func main() {
	err := newRoot().Execute()
	if err == nil {
		return
	}
	var ee exitError
	if errors.As(err, &ee) {
		os.Exit(ee.code)
	}
	fmt.Fprintln(os.Stderr, "emuctl: "+err.Error())
	os.Exit(1)
}
