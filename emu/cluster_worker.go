package emu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/topo"
)

// workerArg is the role of emuctl on one machine of a lab over several
// machines (roles.go), run by the controller through the machine's
// transport (cluster.go):
//
//	__emuctl_worker up <lab>                 deploy the slice read from stdin (a Spec with Cluster.Slice set)
//	__emuctl_worker teardown <lab>           remove the machine's part (Down: by marker and journal)
//	__emuctl_worker exec <lab> <node> -- argv  run a command in a node of this machine
//	__emuctl_worker execint <lab> <node> -- argv  the same, SIGINT when the worker's input ends (cluster_role.go)
//	__emuctl_worker probe <lab> <n> <addr>...  ping other machines' underlay addresses (cluster_underlay.go)
//	__emuctl_worker linkset <lab> <link>     change a link's parameters here (cluster_linkset.go)
//	__emuctl_worker linkstate <lab> <link> up|down  pull or plug this machine's ends of a link
//	__emuctl_worker verify <lab> <node> <iface> tx|rx  one end of a direction's measurement (cluster_verify.go)
//	__emuctl_worker counters <lab> <interval>  this machine's links' counters, a JSON line per interval until stdin closes (counters_cluster.go)
//	__emuctl_worker capture <lab> <node> <iface> <snaplen> <count> <duration> <filter>  pcapng on stdout (cluster_capture.go)
//	__emuctl_worker role <lab> -- <role> args...  this binary's role on this machine (cluster_role.go)
const workerArg = "__emuctl_worker"

func workerRole(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: "+workerArg+" up|teardown|exec <lab> ...")
		return 2
	}
	var err error
	switch op, lab := args[0], args[1]; op {
	case "up":
		err = workerUp(lab)
	case "teardown":
		err = workerTeardown(lab)
	case "linkset":
		if len(args) != 3 {
			fmt.Fprintln(os.Stderr, "usage: "+workerArg+" linkset <lab> <link> (parameters on stdin)")
			return 2
		}
		err = workerLinkSet(lab, args[2])
	case "linkstate":
		if len(args) != 4 || args[3] != "up" && args[3] != "down" {
			fmt.Fprintln(os.Stderr, "usage: "+workerArg+" linkstate <lab> <link> up|down")
			return 2
		}
		var li int
		if _, err = fmt.Sscan(args[2], &li); err == nil {
			err = SetLinkState(lab, li, args[3] == "up")
		}
	case "probe":
		n := 0
		if len(args) > 2 {
			n, _ = strconv.Atoi(args[2])
		}
		if n <= 0 || len(args) < 4 {
			fmt.Fprintln(os.Stderr, "usage: "+workerArg+" probe <lab> <count> <address>...")
			return 2
		}
		err = workerProbe(n, args[3:])
	case "verify":
		if len(args) != 5 {
			fmt.Fprintln(os.Stderr, "usage: "+workerArg+" verify <lab> <node> <iface> tx|rx (the job on stdin)")
			return 2
		}
		err = workerVerify(lab, args[2], args[3], args[4])
	case "counters":
		if len(args) != 3 {
			fmt.Fprintln(os.Stderr, "usage: "+workerArg+" counters <lab> <interval> (0: one read)")
			return 2
		}
		err = workerCounters(lab, args[2])
	case "capture":
		if len(args) != 8 {
			fmt.Fprintln(os.Stderr, "usage: "+workerArg+" capture <lab> <node> <iface> <snaplen> <count> <duration> <filter>")
			return 2
		}
		err = workerCapture(lab, args[2], args[3], args[4:])
	case "role":
		if len(args) < 4 || args[2] != "--" {
			fmt.Fprintln(os.Stderr, "usage: "+workerArg+" role <lab> -- <role> [args...]")
			return 2
		}
		return workerRunRole(args[3:])
	case "exec", "execint":
		if len(args) < 5 || args[3] != "--" {
			fmt.Fprintln(os.Stderr, "usage: "+workerArg+" exec|execint <lab> <node> -- cmd [args...]")
			return 2
		}
		return workerExec(lab, args[2], args[4:], op == "execint")
	default:
		err = fmt.Errorf("unknown operation %q (valid: up, teardown, exec, execint, role, probe, linkset, linkstate, capture, counters, verify)", op)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// workerTeardown removes this machine's part of the lab. It waits for the
// lab's lock: a worker whose controller died may still be rolling back.
func workerTeardown(lab string) error {
	unlock, err := flockRun("."+lab+".lock", 0)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := ReadState(lab)
	if errors.Is(err, ErrNoLab) {
		st = &State{Lab: lab}
	} else if err != nil {
		st = &State{Lab: lab} // a corrupt state: teardown by marker and journal
	}
	if err := teardown(st, slog.New(slog.DiscardHandler)); err != nil {
		return err
	}
	removeLockFile(lab)
	return nil
}

// workerUp deploys this machine's slice; SIGTERM (the controller
// interrupted) rolls it back as Ctrl-C does a lone up.
func workerUp(lab string) error {
	var spec topo.Spec
	if err := json.NewDecoder(os.Stdin).Decode(&spec); err != nil {
		return fmt.Errorf("worker: reading the lab's spec: %w", err)
	}
	if spec.Name != lab || spec.Cluster == nil || spec.Cluster.Slice == "" {
		return errors.New("worker: the spec is not a machine's slice of this lab")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	st, err := Deploy(ctx, &spec, Options{})
	if err != nil {
		return err
	}
	fmt.Printf("machine %s: %d namespaces\n", spec.Cluster.Slice, len(st.Namespaces))
	return nil
}

// workerExec runs argv in a node of this machine with the caller's stdio
// and returns its exit status. SIGINT, SIGTERM and SIGHUP sent to the
// worker reach the command (iperf3 prints its results on SIGINT), and the
// command dies with the worker. With intOnEOF the command's input is
// empty and the end of the worker's input is its SIGINT: over SSH, where
// no signal reaches the far side, the controller interrupts it by
// closing the session's input.
func workerExec(lab, node string, argv []string, intOnEOF bool) int {
	cmd, err := Command(lab, node, argv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if intOnEOF {
		return runInterruptible(cmd)
	}
	return runAttached(cmd)
}

// runInterruptible is runAttached with an empty input for the command,
// which gets SIGINT when this process's input ends.
func runInterruptible(cmd *exec.Cmd) int {
	cmd.Stdin = nil
	started := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		<-started
		cmd.Process.Signal(syscall.SIGINT)
	}()
	return runAttachedWith(cmd, started)
}

// runAttached runs cmd with this process's stdio and returns its exit
// status. SIGINT, SIGTERM and SIGHUP sent to this process reach the
// command, and the command dies with it.
func runAttached(cmd *exec.Cmd) int {
	cmd.Stdin = os.Stdin
	return runAttachedWith(cmd, nil)
}

// runAttachedWith is runAttached with cmd.Stdin as set; started, if
// any, is closed once the command runs.
func runAttachedWith(cmd *exec.Cmd, started chan struct{}) int {
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	runtime.LockOSThread() // Pdeathsig follows the forking thread
	defer runtime.UnlockOSThread()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	err := cmd.Start()
	if err == nil && started != nil {
		close(started)
	}
	if err == nil {
		go func() {
			for sig := range sigs {
				cmd.Process.Signal(sig)
			}
		}()
		err = cmd.Wait()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintln(os.Stderr, err)
	return 126
}

// clusterNodeErr says why a node of a lab over several machines cannot
// be entered from this process (nil for other labs): it lives in its
// machine's namespaces, which only the worker's exec reaches.
func clusterNodeErr(lab, node string) error {
	st, err := ReadState(lab)
	if err != nil || !isController(st) {
		return nil
	}
	return fmt.Errorf("node %s of lab %s runs on machine %s (a lab over several machines): this version reaches such nodes with exec, shell, capture, verify, traffic, test and cli's ping and pingall", node, lab, st.Spec.Cluster.Nodes[node])
}

// clusterPing is Ping for a node of a lab over several machines: ping(8)
// in the node, on its machine, its reported round trip.
func clusterPing(ctx context.Context, lab, node string, dst netip.Addr, timeout time.Duration) (time.Duration, error) {
	w := max(1, int(math.Ceil(timeout.Seconds())))
	cmd, err := Command(lab, node, []string{"ping", "-n", "-c", "1", "-W", strconv.Itoa(w), dst.String()})
	if err != nil {
		return 0, err
	}
	stop := context.AfterFunc(ctx, func() {
		if cmd.Process != nil {
			cmd.Process.Signal(syscall.SIGTERM)
		}
	})
	defer stop()
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("node %s: ping %s: no reply", node, dst)
	}
	m := pingTime.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("node %s: ping %s: no time in its output", node, dst)
	}
	ms, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		return 0, err
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

var pingTime = regexp.MustCompile(`time=([0-9.]+) ms`)

// clusterCommand is Command for a node of a lab over several machines:
// the worker's exec on the node's machine.
func clusterCommand(st *State, node string, argv []string) (*exec.Cmd, error) {
	m := st.Spec.Cluster.Machine(st.Spec.Cluster.Nodes[node])
	if m == nil {
		return nil, fmt.Errorf("lab %s: node %s is on no machine", st.Lab, node)
	}
	if m.Local() && !machineExists(st.Lab, m.Name) {
		return nil, fmt.Errorf("node %s is on machine %s, which does not exist (any more): is lab %s up?", node, m.Name, st.Lab)
	}
	return workerCommand(context.Background(), st.Lab, *m, append([]string{"exec", st.Lab, node, "--"}, argv...)...)
}
