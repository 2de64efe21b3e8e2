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
	runtime.LockOSThread()
	return enterAndExec(args[0], args[1], args[3:], os.Environ())
}

// enterAndExec, on a locked thread with private mount and UTS namespaces,
// enters the node's network namespace, shows the node's /etc/netns files
// over /etc, remounts /sys, sets the hostname and execs argv: it returns
// only on failure.
func enterAndExec(lab, node string, argv, env []string) error {
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
	return syscall.Exec(path, argv, env)
}

// ExecInNode replaces this process with argv run inside a node, as
// Command's helper does, so that nothing of emuctl stays resident beside
// the command (`emuctl exec`, `emuctl shell`): its exit status, signals
// and terminal are the command's own. It returns only on failure, and
// refuses a lab over several machines (use Command).
func ExecInNode(lab, node string, argv, extraEnv []string) error {
	st, err := ReadState(lab)
	if err != nil {
		return err
	}
	return ExecInNodeState(st, node, argv, extraEnv)
}

// ExecInNodeState is ExecInNode with the lab's state already read (a
// large lab's takes tens of ms to read: read it once).
func ExecInNodeState(st *State, node string, argv, extraEnv []string) error {
	lab := st.Lab
	cmd, err := CommandState(st, node, argv)
	if err != nil {
		return err
	}
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.Unshareflags == 0 {
		return errors.New("exec in place: the node is on another machine")
	}
	runtime.LockOSThread() // never unlocked: the process becomes argv
	if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_NEWUTS); err != nil {
		return fmt.Errorf("private mount namespace: %w", err)
	}
	// as os/exec does after CLONE_NEWNS: nothing mounted here reaches the host
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private mounts: %w", err)
	}
	return enterAndExec(lab, node, argv, dedupEnv(append(cmd.Env, extraEnv...)))
}

// dedupEnv keeps the last of each variable, as os/exec does for a child.
func dedupEnv(env []string) []string {
	at := map[string]int{}
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := at[k]; ok {
			out[i] = kv
			continue
		}
		at[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// Command returns a command that runs argv inside a node of a running lab
// (network namespace, hosts file, hostname), with the node's env added.
// argv is passed as is, never through a shell.
func Command(lab, node string, argv []string) (*exec.Cmd, error) {
	st, err := ReadState(lab)
	if err != nil {
		return nil, err
	}
	return CommandState(st, node, argv)
}

// CommandState is Command with the lab's state already read.
func CommandState(st *State, node string, argv []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command given")
	}
	lab := st.Lab
	n := st.Spec.Node(node)
	if n == nil {
		return nil, fmt.Errorf("lab %s has no node %q (nodes: %s)", lab, node, nodeNames(st.Spec))
	}
	if n.Kind == topo.KindRoot {
		return nil, fmt.Errorf("node %s of lab %s is of kind root, the machine's own namespace: run the command on the machine itself (its link ends are there: %s)", node, lab, ifaceNames(n))
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

func ifaceNames(n *topo.Node) string {
	var names []string
	for _, ifc := range n.Interfaces {
		names = append(names, ifc.Name)
	}
	return strings.Join(names, ", ")
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
