package emu

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/capture"
	"github.com/emuctl/emuctl/capture/packet"
)

// CaptureNode records packets on a node's interface to w as pcapng
// (capture.Capture), wherever the node runs: in this process for a lab on
// this host; for a lab over several machines, by the worker on the node's
// machine (`__emuctl_worker capture`), whose pcapng comes back on its
// stdout — through nsenter for a local machine, through the SSH session
// for a remote one. Ending ctx ends the capture (the worker sees its
// stdin close), and the file is complete either way.
func CaptureNode(ctx context.Context, st *State, node, iface string, o capture.Options, w io.Writer) (capture.Stats, error) {
	if !isController(st) {
		// an ovs switch's port lives in the root namespace under emuctl's port name
		nsPath, ifname := EndpointNetns(st, node, iface)
		return capture.Capture(ctx, nsPath, ifname, o, w)
	}
	c := st.Spec.Cluster
	m := c.Machine(c.Nodes[node])
	if m == nil {
		return capture.Stats{}, fmt.Errorf("lab %s: node %s is on no machine", st.Lab, node)
	}
	if m.Local() && !machineExists(st.Lab, m.Name) {
		return capture.Stats{}, fmt.Errorf("node %s is on machine %s, which does not exist (any more): is lab %s up?", node, m.Name, st.Lab)
	}
	runtime.LockOSThread() // Pdeathsig follows the forking thread (runWorker)
	defer runtime.UnlockOSThread()
	cmd, err := workerCommand(context.Background(), st.Lab, *m, "capture", st.Lab, node, iface,
		strconv.Itoa(o.Snaplen), strconv.Itoa(o.Count), o.Duration.String(), o.Filter.String())
	if err != nil {
		return capture.Stats{}, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return capture.Stats{}, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return capture.Stats{}, err
	}
	cmd.Stdout = w
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return capture.Stats{}, fmt.Errorf("machine %s: %w", m.Name, err)
	}
	stop := context.AfterFunc(ctx, func() { stdin.Close() })
	defer stop()
	var stats capture.Stats
	var msgs []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == captureReadyLine:
			if o.Ready != nil {
				o.Ready()
			}
		case strings.HasPrefix(line, captureStatsPrefix):
			fmt.Sscan(strings.TrimPrefix(line, captureStatsPrefix), &stats.Written, &stats.Filtered, &stats.KernelDrops, &stats.LinkType)
		default:
			msgs = append(msgs, line)
		}
	}
	err = cmd.Wait()
	stdin.Close()
	if err != nil {
		why := strings.Join(msgs, "; ")
		if why == "" {
			why = err.Error()
		}
		return stats, fmt.Errorf("machine %s: %s", m.Name, why)
	}
	return stats, nil
}

// What the capture worker tells its controller on stderr.
const (
	captureReadyLine   = "emuctl-capture: ready"
	captureStatsPrefix = "emuctl-capture: stats "
)

// workerCapture captures on a node of this machine to stdout until the
// options' count or duration, SIGTERM, or stdin closing (the controller
// stopped), then says what it wrote on stderr.
func workerCapture(lab, node, iface string, args []string) error {
	if len(args) != 4 {
		return errors.New("capture: want <snaplen> <count> <duration> <filter>")
	}
	var o capture.Options
	var err error
	if o.Snaplen, err = strconv.Atoi(args[0]); err != nil {
		return fmt.Errorf("capture: snaplen %q: %w", args[0], err)
	}
	if o.Count, err = strconv.Atoi(args[1]); err != nil {
		return fmt.Errorf("capture: count %q: %w", args[1], err)
	}
	if o.Duration, err = time.ParseDuration(args[2]); err != nil {
		return fmt.Errorf("capture: duration %q: %w", args[2], err)
	}
	if o.Filter, err = packet.ParseFilter(args[3]); err != nil {
		return err
	}
	st, err := ReadState(lab)
	if err != nil {
		return err
	}
	if st.Spec.Node(node) == nil || !st.Spec.Here(node) {
		return fmt.Errorf("lab %s has no node %s on this machine", lab, node)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	o.Ready = func() { fmt.Fprintln(os.Stderr, captureReadyLine) }
	nsPath, ifname := EndpointNetns(st, node, iface)
	stats, err := capture.Capture(ctx, nsPath, ifname, o, os.Stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s%d %d %d %d\n", captureStatsPrefix, stats.Written, stats.Filtered, stats.KernelDrops, stats.LinkType)
	return nil
}
