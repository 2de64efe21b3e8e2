package emu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/internal/proc"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// helperArg is the role (roles.go) that makes any binary importing emu act
// as the in-namespace exec helper behind Command.
const helperArg = "__emuctl_nsexec"

// runHelper: args are <lab> <node> -- argv... The process was started with
// private mount and UTS namespaces; it enters the node's network namespace,
// shows the node's /etc/netns files over /etc (like `ip netns exec`),
// remounts /sys for the namespace, sets the hostname to the node name and
// execs argv without a shell.
func runHelper(args []string) error {
	if len(args) < 4 || args[2] != "--" {
		return errors.New("usage: " + helperArg + " <lab> <node> -- cmd [args...]")
	}
	lab, node, argv := args[0], args[1], args[3:]
	runtime.LockOSThread()
	nsName := topo.Namespace(lab, node)
	h, err := netns.GetFromPath(filepath.Join(NetnsDir, nsName))
	if err != nil {
		return fmt.Errorf("node %s of lab %s: %w", node, lab, err)
	}
	if err := netns.Set(h); err != nil {
		return fmt.Errorf("enter %s: %w", nsName, err)
	}
	h.Close()
	etc := filepath.Join("/etc/netns", nsName)
	if ents, err := os.ReadDir(etc); err == nil {
		for _, e := range ents {
			src, dst := filepath.Join(etc, e.Name()), filepath.Join("/etc", e.Name())
			if err := unix.Mount(src, dst, "none", unix.MS_BIND, ""); err != nil {
				return fmt.Errorf("bind %s on %s: %w", src, dst, err)
			}
		}
	}
	if err := unix.Unmount("/sys", unix.MNT_DETACH); err == nil {
		unix.Mount(nsName, "/sys", "sysfs", 0, "")
	}
	unix.Sethostname([]byte(node))
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, argv, os.Environ())
}

// Command returns a command that runs argv inside a node of a running lab
// (network namespace, hosts file, hostname), with the node's env added.
// argv is passed as is, never through a shell.
func Command(lab, node string, argv []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command given")
	}
	st, err := ReadState(lab)
	if err != nil {
		return nil, err
	}
	n := st.Spec.Node(node)
	if n == nil {
		return nil, fmt.Errorf("lab %s has no node %q (nodes: %s)", lab, node, nodeNames(st.Spec))
	}
	if isController(st) {
		return clusterCommand(st, node, argv) // on its machine (cluster_worker.go)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, append([]string{helperArg, lab, node, "--"}, argv...)...)
	cmd.Env = os.Environ()
	for _, kv := range n.Env {
		cmd.Env = append(cmd.Env, kv.Key+"="+kv.Value)
	}
	for _, kv := range st.NodeEnv[node] { // OVS: OVS_RUNDIR etc. of ovs switches
		cmd.Env = append(cmd.Env, kv.Key+"="+kv.Value)
	}
	cmd.Env = append(cmd.Env, "EMUCTL_LAB="+lab, "EMUCTL_NODE="+node)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS}
	return cmd, nil
}

func nodeNames(s *topo.Spec) string {
	var names []string
	for _, n := range s.Nodes {
		names = append(names, n.Name)
	}
	if len(names) > 20 {
		names = append(names[:20], "...")
	}
	return strings.Join(names, ", ")
}

// startCommands runs every node's start lines with /bin/sh -c in the
// background, logging to the state dir, and fails when one exits non-zero
// within its first 300 ms.
func (d *deployer) startCommands(ctx context.Context) error {
	type started struct {
		node, line, log string
		done            chan error
	}
	var all []started
	for _, n := range d.nodeList() {
		for i, line := range n.spec.Start {
			logPath := filepath.Join(stateDir(d.spec.Name), fmt.Sprintf("%s.start%d.log", n.spec.Name, i))
			f, err := os.Create(logPath)
			if err != nil {
				return err
			}
			cmd, err := Command(d.spec.Name, n.spec.Name, []string{"/bin/sh", "-c", line})
			if err != nil {
				f.Close()
				return err
			}
			cmd.Stdout, cmd.Stderr = f, f
			cmd.SysProcAttr.Setsid = true
			if err := cmd.Start(); err != nil {
				f.Close()
				return fmt.Errorf("node %s: start %q: %w", n.spec.Name, line, err)
			}
			f.Close()
			st, _ := proc.Start(cmd.Process.Pid)
			d.stMu.Lock()
			d.st.Procs = append(d.st.Procs, Proc{Node: n.spec.Name, PID: cmd.Process.Pid, Start: st, Command: line, Log: logPath})
			d.stMu.Unlock()
			d.log.Debug("start command", "node", n.spec.Name, "pid", cmd.Process.Pid, "cmd", line)
			s := started{n.spec.Name, line, logPath, make(chan error, 1)}
			go func() { s.done <- cmd.Wait() }()
			all = append(all, s)
		}
	}
	if len(all) == 0 {
		return nil
	}
	if err := d.save(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(300 * time.Millisecond):
	}
	for _, s := range all {
		select {
		case err := <-s.done:
			if err != nil {
				tail, _ := os.ReadFile(s.log)
				return fmt.Errorf("node %s: start command %q failed: %v; output:\n%s", s.node, s.line, err, lastLines(string(tail), 10))
			}
		default:
		}
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
