package emu

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// A lab needs processes that outlive or sit beside the program that built
// it: the exec helper that enters a node, and the lab's supervisor (one per
// lab: it runs the link engines and the Wi-Fi medium and keeps the nodes'
// daemons). emu starts each by re-executing the running binary
// (os.Executable) with a role name as its first argument:
//
//	__emuctl_nsexec    <lab> <node> -- argv...   (exec.go: Command)
//	__emuctl_supervise <lab>                     (supervisor.go)
//	__emuctl_worker    up|teardown|exec <lab> ...  (cluster_worker.go)
//	__emuctl_machine   <machine dir>             (cluster_local.go)
//
// and package traffic serves its own, in its own init (binaries that
// import traffic): __emuctl_traffic, the ends of flows on the machines of
// a lab over several machines (run there through MachineCommand,
// cluster_role.go).
//
// (__emuctl_respawn, a per-daemon keeper, was the third until the
// supervisor took the daemons over; the name is not reused.)
//
// Any binary that imports emu — the emuctl CLI, a user's Go program built on
// package lab, a test binary — serves these roles without calling anything:
// the init below runs the role and exits before the program's own main (or
// TestMain) starts. The names are part of running labs (journals and
// process lists record them), so they never change.
//
// A role returns its exit status; this dispatcher is the only place in emu
// that ends the process, apart from the crash hooks tests use to die like
// kill -9 (crashAt in deploy.go, crashPoint in nsutil.go).

// roles maps a role name to its entry point, which gets the arguments after
// the name and returns the process's exit status.
var roles = map[string]func(args []string) int{
	helperArg:  helperRole,
	superArg:   supervisorRole,
	workerArg:  workerRole,  // a machine of a lab over several machines (cluster_worker.go)
	machineArg: machineRole, // holds a local machine's new mount namespace (cluster_local.go)
}

func init() {
	if len(os.Args) < 2 {
		return
	}
	if role, ok := roles[os.Args[1]]; ok {
		os.Exit(role(os.Args[2:]))
	}
}

// helperRole enters a node and execs the command (runHelper); it returns
// only when that fails: 127 when the command was not found, else 126, as
// a shell does.
func helperRole(args []string) int {
	err := runHelper(args)
	fmt.Fprintf(os.Stderr, "emuctl exec: %v\n", err)
	var ee *exec.Error
	if errors.As(err, &ee) || errors.Is(err, os.ErrNotExist) {
		return 127
	}
	return 126
}

// supervisorRole runs a lab's supervisor until down stops it.
func supervisorRole(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: "+superArg+" <lab>")
		return 2
	}
	if err := runSupervisor(args[0]); err != nil {
		fmt.Fprintf(os.Stderr, "emuctl supervisor: %v\n", err)
		return 1
	}
	return 0
}
