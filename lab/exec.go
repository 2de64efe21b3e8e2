package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/emu"
)

// Command returns a command that runs argv inside node, as `emuctl exec`
// does: the node's network namespace, its hosts file (every node by name),
// its hostname and env; argv is passed as is, never through a shell. The
// program re-executes itself as emu's exec helper to enter the node, which
// every binary importing lab serves without further ado. ctx kills the
// command when done, as exec.CommandContext's does.
func (l *Lab) Command(ctx context.Context, node string, argv ...string) (*exec.Cmd, error) {
	if _, err := l.node(node); err != nil {
		return nil, err
	}
	c, err := NodeCommand(l.name, node, argv)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, c.Path, c.Args[1:]...)
	cmd.Env, cmd.SysProcAttr = c.Env, c.SysProcAttr
	return cmd, nil
}

// NodeCommand returns a command that runs argv inside node of the lab
// called name, as Lab.Command does but without a context and with the
// node's env already in cmd.Env (append to it, do not replace it).
func NodeCommand(name, node string, argv []string) (*exec.Cmd, error) {
	return emu.Command(name, node, argv)
}

// NodeCommandState is NodeCommand with the lab's state already read (a
// large lab's takes tens of ms to read: read it once).
func NodeCommandState(st *State, node string, argv []string) (*exec.Cmd, error) {
	return emu.CommandState(st, node, argv)
}

// ExecInNode replaces the calling program with argv inside node, as
// `emuctl exec` does: nothing of the program stays resident, the exit
// status, signals and terminal are the command's own. extraEnv is added
// to the node's env. It returns only on failure, and refuses a lab over
// several machines (use NodeCommandState).
func ExecInNode(st *State, node string, argv, extraEnv []string) error {
	return emu.ExecInNodeState(st, node, argv, extraEnv)
}

// ExitError is a command in a node that ran and failed.
type ExitError struct {
	Node string
	Argv []string
	// Code is the exit status: 127 when the command was not found, 126
	// when it could not be run, 128+N when killed by signal N.
	Code int
	// Output is what it printed (Exec: stdout and stderr; Output: stderr).
	Output []byte
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("%s: %s: exit status %d", e.Node, strings.Join(e.Argv, " "), e.Code)
	if out := strings.TrimSpace(string(e.Output)); out != "" {
		msg += ": " + lastLine(out)
	}
	return msg
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Exec runs argv inside node and returns what it printed, stdout and
// stderr together. A command that exits non-zero gives an *ExitError
// (with its code and output) along with the output.
func (l *Lab) Exec(ctx context.Context, node string, argv ...string) ([]byte, error) {
	cmd, err := l.Command(ctx, node, argv...)
	if err != nil {
		return nil, err
	}
	out, err := cmd.CombinedOutput()
	return out, exitError(node, argv, err, out)
}

// Output runs argv inside node and returns its standard output. A command
// that exits non-zero gives an *ExitError holding its standard error.
func (l *Lab) Output(ctx context.Context, node string, argv ...string) ([]byte, error) {
	cmd, err := l.Command(ctx, node, argv...)
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	return out, exitError(node, argv, err, stderr.Bytes())
}

func exitError(node string, argv []string, err error, out []byte) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code := ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal()) // killed: the shell's convention
		}
		return &ExitError{Node: node, Argv: argv, Code: code, Output: out}
	}
	if err != nil {
		return fmt.Errorf("%s: %s: %w", node, strings.Join(argv, " "), err)
	}
	return nil
}

// Ping sends one ICMP echo request from node from to to — a node's name
// (its first address) or an IP address — and returns the round-trip time.
// It needs no ping binary. Without a deadline on ctx it waits 2 s for the
// reply.
func (l *Lab) Ping(ctx context.Context, from, to string) (time.Duration, error) {
	if _, err := l.node(from); err != nil {
		return 0, err
	}
	dst, err := l.resolve(to)
	if err != nil {
		return 0, err
	}
	timeout := 2 * time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	rtt, err := PingAddr(ctx, l.name, from, dst, timeout)
	if err != nil {
		return 0, fmt.Errorf("ping %s -> %s (%s): %w", from, to, dst, err)
	}
	return rtt, nil
}

// PingAddr sends one ICMP echo request from node of the lab called name
// to dst and returns the round-trip time (Lab.Ping by names). It opens
// its own raw socket: no ping binary, and many probes may run at once.
func PingAddr(ctx context.Context, name, node string, dst netip.Addr, timeout time.Duration) (time.Duration, error) {
	return emu.Ping(ctx, name, node, dst, timeout)
}

// PingResult is one source/destination probe of PingAll.
type PingResult struct {
	From string        `json:"from"`
	To   string        `json:"to"`
	Addr netip.Addr    `json:"addr"`
	RTT  time.Duration `json:"rtt_ns"`
	OK   bool          `json:"ok"`
}

// resolve reads an IP address, or a node's name as its first address.
func (l *Lab) resolve(to string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(to); err == nil {
		return a, nil
	}
	return l.Addr(to)
}

// PingAll pings every host and router from every other one, in parallel,
// like Mininet's pingall (tries attempts each; the first reply counts).
func (l *Lab) PingAll(ctx context.Context, tries int) ([]PingResult, error) {
	st, err := emu.ReadState(l.name)
	if err != nil {
		return nil, err
	}
	return convert(emu.PingAll(ctx, st, tries, 2*time.Second), func(r emu.PingResult) PingResult { return PingResult(r) }), nil
}
