package emu

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"time"
)

// A package built on emu can run a part of its own work on a machine of
// a lab over several machines: it serves a role of its own (a role name
// its init recognises, as emu's roles.go does) and runs it there with
// MachineCommand, which reaches the machine as every worker does and
// runs this binary with the role's arguments in the machine's own
// namespaces — not inside a node: the role enters the nodes it needs.
// Package traffic's split engine (one end of a flow on each machine) is
// the first such role.

// rolePrefix is what every role name starts with: the worker runs no
// other program.
const rolePrefix = "__emuctl_"

// workerRunRole runs this binary with args (args[0] the role) with the
// worker's stdio; the role dies with the worker.
func workerRunRole(args []string) int {
	if !strings.HasPrefix(args[0], rolePrefix) {
		fmt.Fprintf(os.Stderr, "role %q: a role's name starts with %s\n", args[0], rolePrefix)
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return runAttached(exec.Command(self, args...))
}

// MachineCommand is the command that runs this binary's role (args[0],
// a name starting with "__emuctl_") on the machine of node, in a lab over
// several machines, through that machine's worker; it returns the
// machine's name too. The role's stdio is the command's, and signals
// sent to the command reach it.
func MachineCommand(lab, node string, args ...string) (*exec.Cmd, string, error) {
	if len(args) == 0 || !strings.HasPrefix(args[0], rolePrefix) {
		return nil, "", fmt.Errorf("machine command: a role's name starts with %s", rolePrefix)
	}
	st, err := ReadState(lab)
	if err != nil {
		return nil, "", err
	}
	if !isController(st) {
		return nil, "", fmt.Errorf("lab %s is on one machine", lab)
	}
	name := st.Spec.Cluster.Nodes[node]
	m := st.Spec.Cluster.Machine(name)
	if m == nil {
		return nil, "", fmt.Errorf("lab %s: node %s is on no machine", lab, node)
	}
	if m.Local() && !machineExists(lab, m.Name) {
		return nil, "", fmt.Errorf("node %s is on machine %s, which does not exist (any more): is lab %s up?", node, m.Name, lab)
	}
	cmd, err := workerCommand(context.Background(), lab, *m, append([]string{"role", lab, "--"}, args...)...)
	return cmd, m.Name, err
}

// ServeClock answers clock requests (the exchange cluster_clock.go
// describes) on this machine's underlay until stop is called.
func ServeClock() (stop func(), err error) {
	r, err := startClockResponder()
	if err != nil {
		return nil, err
	}
	return r.stop, nil
}

// MeasureClock is the clock of the machine whose underlay address is
// peer, minus this machine's, now: the exchange with the shortest of
// clockProbes round trips, against the peer's ServeClock.
func MeasureClock(peer netip.Addr) (time.Duration, error) {
	off, _, err := clockOffset(peer, clockProbes)
	return off, err
}

// ClockOffsetAtUp is machine to's clock minus machine from's as measured
// at up (0 for one machine, or when it was not measured).
func ClockOffsetAtUp(st *State, from, to string) time.Duration {
	return clockOffsetOf(st, from, to)
}

// CommandInterruptible is Command for a command the caller may have to
// interrupt (SIGINT: iperf3 then prints what it measured). On a lab over
// several machines it runs through the worker's execint, which gives the
// command an empty input and SIGINT when the worker's input ends — over
// SSH no signal reaches the far side, but the end of the session's input
// does: interruptible is true, and the caller interrupts it by closing
// the command's input (a pipe it made). On one machine it is Command and
// interruptible false: signal the process.
func CommandInterruptible(lab, node string, argv []string) (cmd *exec.Cmd, interruptible bool, err error) {
	st, err := ReadState(lab)
	if err != nil {
		return nil, false, err
	}
	if !isController(st) {
		cmd, err := Command(lab, node, argv)
		return cmd, false, err
	}
	m := st.Spec.Cluster.Machine(st.Spec.Cluster.Nodes[node])
	if m == nil {
		return nil, false, fmt.Errorf("lab %s: node %s is on no machine", lab, node)
	}
	if m.Local() && !machineExists(lab, m.Name) {
		return nil, false, fmt.Errorf("node %s is on machine %s, which does not exist (any more): is lab %s up?", node, m.Name, lab)
	}
	cmd, err = workerCommand(context.Background(), lab, *m, append([]string{"execint", lab, node, "--"}, argv...)...)
	return cmd, err == nil, err
}
