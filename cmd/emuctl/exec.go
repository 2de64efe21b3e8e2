package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// runInNode runs argv inside a node with the terminal attached, forwards
// signals, and returns the command's exit code as an exitError.
func runInNode(lab, node string, argv []string, extraEnv []string) error {
	st, err := resolveLab(lab)
	if err != nil {
		return err
	}
	cmd, err := golab.NodeCommandState(st, node, argv)
	if err != nil {
		return err
	}
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// On a terminal the child shares our process group, so the terminal
	// delivers ^C and ^\ to it directly; we ignore those and forward the
	// rest. Without a terminal we forward everything.
	tty := term.IsTerminal(int(os.Stdin.Fd()))
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if tty && (s == syscall.SIGINT || s == syscall.SIGQUIT || s == syscall.SIGWINCH) {
					continue
				}
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return exitError{128 + int(ws.Signal())}
		}
		return exitError{ee.ExitCode()}
	}
	return err
}

// execInNode replaces emuctl with argv inside a node (nothing of emuctl
// stays resident: the exit status, signals and terminal are the
// command's); a node on another machine runs through runInNode.
func execInNode(lab, node string, argv []string, extraEnv []string) error {
	st, err := resolveLab(lab)
	if err != nil {
		return err
	}
	if st.Spec.Cluster != nil {
		return runInNode(st.Lab, node, argv, extraEnv)
	}
	err = golab.ExecInNode(st, node, argv, extraEnv)
	// only a failure returns: as a shell says it (127 not found, 126 else)
	var ee *exec.Error
	if errors.As(err, &ee) || errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "emuctl exec: %v\n", err)
		return exitError{127}
	}
	return err
}

func newExecCmd() *cobra.Command {
	var lab string
	cmd := &cobra.Command{
		Use:   "exec [--lab LAB] <node> -- <command> [args...]",
		Short: "Run a command inside a node (argv as given, no shell; exit code kept)",
		Example: `  sudo emuctl exec h1 -- ping -c3 h2
  sudo emuctl exec --lab demo r1 -- ip route`,
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: completeExec,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return errors.New("usage: emuctl exec <node> -- <command> [args...]")
			}
			return execInNode(lab, args[0], args[1:], nil)
		},
	}
	addLabFlag(cmd, &lab, false)
	return cmd
}
