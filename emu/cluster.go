package emu

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// A lab over several machines (topo.Cluster) is deployed by a controller
// — the emuctl that runs `up` — and one worker per machine:
//
//   - the controller resolves the Spec once, records it in its own state
//     dir (the lab's, on this host), makes the machines it owns (ssh:
//     local: cluster_local.go), then starts a worker on every machine at
//     once with the Spec and the machine's name (Spec.SliceFor);
//   - a worker (cluster_worker.go, the role __emuctl_worker) is emuctl's
//     ordinary Deploy on that machine, building only the nodes placed
//     there; a link cut between two machines becomes a VXLAN tunnel end
//     (link_vxlan.go), shaped on its sending side before encapsulation;
//   - if any worker fails, the controller tears every machine down
//     (teardown's first step runs each worker's teardown), then its own
//     objects: a failed up leaves nothing on any machine.
//
// A local machine is a network namespace on this host (its "root"
// namespace: the underlay address and the tunnels' sockets live there)
// with a mount namespace of its own whose /run/netns, /etc/netns and
// /run/emuctl are directories in the controller's state dir — so each
// machine has its own namespaces, hosts files and state, exactly as a
// separate host would, and its worker's clean or teardown never sees
// another machine's objects, although every machine marks them alike
// (emuctl:<lab>). Machines reached over SSH (cluster_ssh.go) are real
// hosts: the worker runs there as the controller's own binary, copied
// when the machine lacks it.

// workerStarted, set by tests only, is told each worker's pid as it starts.
var workerStarted func(machine string, pid int)

// isController reports whether st is a controller's record of a lab over
// several machines.
func isController(st *State) bool {
	return st != nil && st.Spec != nil && st.Spec.Cluster != nil && st.Spec.Cluster.Slice == ""
}

// deployCluster is Deploy for a lab over several machines, on the
// controller.
func deployCluster(ctx context.Context, spec *topo.Spec, opt Options) (*State, error) {
	log := opt.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("lab", spec.Name)
	unlock, err := lockLab(spec.Name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := clusterPreflight(spec); err != nil {
		if _, serr := os.Stat(stateDir(spec.Name)); serr != nil {
			removeLockFile(spec.Name)
		}
		return nil, err
	}
	d, err := newDeployer(spec, opt, log, nil)
	if err != nil {
		return nil, err
	}
	if d.j, err = openJournal(spec.Name); err == nil {
		err = d.runCluster(ctx)
	}
	d.pool.closeAll(d.allNodes())
	d.anchor.remove()
	d.j.close()
	if err != nil {
		log.Debug("deploy failed, rolling back every machine", "err", err)
		if rerr := teardown(d.st, log); rerr != nil {
			return nil, fmt.Errorf("%w (rollback also failed: %v; run `emuctl clean`)", err, rerr)
		}
		removeLockFile(spec.Name)
		return nil, err
	}
	return d.st, nil
}

// clusterPreflight refuses what this version cannot do before anything is
// made.
func clusterPreflight(spec *topo.Spec) error {
	if os.Geteuid() != 0 {
		return errors.New("emuctl needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to create namespaces: run it with sudo")
	}
	if _, err := os.Stat(stateDir(spec.Name)); err == nil {
		return fmt.Errorf("lab %q already exists: run `emuctl down %s` first, or `emuctl clean` if it crashed: %w", spec.Name, spec.Name, ErrExists)
	}
	var errs []string
	local, remote := "", ""
	for _, m := range spec.Cluster.Machines {
		if !m.Local() {
			remote = m.Name
			continue
		}
		local = m.Name
		if _, err := os.Lstat(filepath.Join(NetnsDir, machineNetns(spec.Name, m.Name))); err == nil {
			errs = append(errs, fmt.Sprintf("network namespace %q already exists and is not part of a known lab; emuctl will not touch it", machineNetns(spec.Name, m.Name)))
		}
	}
	errs = append(errs, controllerIsMachine(spec)...)
	if local != "" && remote != "" {
		errs = append(errs, fmt.Sprintf("machine %s is local and machine %s is reached over SSH: a lab's machines are either all local (namespaces on this host, on their own underlay) or all reached over SSH", local, remote))
	}
	tool, why := "nsenter", "local machines are entered with nsenter (util-linux)"
	if remote != "" {
		tool, why = "ssh", "machines are reached with OpenSSH's ssh"
	}
	if _, err := exec.LookPath(tool); err != nil {
		errs = append(errs, why+", which is not installed: "+err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("lab %q cannot be deployed; nothing was changed:\n  %s", spec.Name, strings.Join(errs, "\n  "))
	}
	return nil
}

func (d *deployer) runCluster(ctx context.Context) error {
	for _, p := range []struct {
		name string
		fn   func(context.Context) error
	}{{"machines", d.localMachines}, {"underlay", d.measureUnderlay}, {"workers", d.startWorkers}} {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted before %s: %w", p.name, err)
		}
		if d.opt.FaultAt == p.name {
			return fmt.Errorf("injected fault at phase %q", p.name)
		}
		if err := d.j.add("phase", p.name); err != nil {
			return err
		}
		if crashAt == p.name {
			os.Exit(9) // tests: die like kill -9, with no rollback
		}
		if err := p.fn(ctx); err != nil {
			return err
		}
		if err := d.save(); err != nil {
			return err
		}
	}
	crashPoint("cluster-up") // every machine up, the controller's record not yet
	d.st.Status = StatusUp
	d.st.Ready = time.Now().UTC()
	return d.save()
}

// startWorkers deploys every machine's slice at once and waits for all:
// any failure fails the deploy (and the caller tears every machine down).
func (d *deployer) startWorkers(ctx context.Context) error {
	machines := d.spec.Cluster.Machines
	links, err := compensated(d.spec, d.st.Underlay) // cluster_underlay.go
	if err != nil {
		return err
	}
	return parallel(ctx, len(machines), machines, func(m topo.Machine) error {
		slice := d.spec.SliceFor(m.Name)
		slice.Links = links
		in, err := json.Marshal(slice)
		if err != nil {
			return err
		}
		out, err := runWorker(ctx, d.spec.Name, m, in, "up", d.spec.Name)
		if err != nil {
			return fmt.Errorf("machine %s: %w", m.Name, err)
		}
		d.log.Debug("machine up", "machine", m.Name, "worker", strings.TrimSpace(out))
		return nil
	})
}

// workerCommand is the command that runs the worker role with args on a
// machine of the lab: nsenter into a local machine's mount and network
// namespaces (nsenter execs, so the command's pid is the worker's), or
// ssh to the machine (cluster_ssh.go).
func workerCommand(ctx context.Context, lab string, m topo.Machine, args ...string) (*exec.Cmd, error) {
	if !m.Local() {
		return sshWorkerCommand(ctx, lab, m, args...)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir := machineDir(lab, m.Name)
	argv := append([]string{"--mount=" + filepath.Join(dir, "mnt"), "--net=" + filepath.Join(NetnsDir, machineNetns(lab, m.Name)), "--", self, workerArg}, args...)
	cmd := exec.Command("nsenter", argv...)
	// A worker outlives no controller: it rolls its machine back on
	// SIGTERM (nsenter execs it, so the setting reaches the worker).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	// The machine's run dir is its /run/emuctl: never the controller's.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "EMUCTL_RUN_DIR=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return cmd, nil
}

// runWorker runs the worker role on a machine with stdin, returning its
// stdout; its stderr's last lines make the error.
func runWorker(ctx context.Context, lab string, m topo.Machine, stdin []byte, args ...string) (string, error) {
	// Pdeathsig follows the thread that forked: keep it until the worker
	// ends, so no other goroutine's exit can end it first.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd, err := workerCommand(ctx, lab, m, args...)
	if err != nil {
		return "", err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(stdin), &stdout, &stderr
	// A process the worker leaves running (its lab's supervisor) must not
	// hold the output open.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return "", err
	}
	if workerStarted != nil {
		workerStarted(m.Name, cmd.Process.Pid)
	}
	crashPoint("cluster-worker-started")
	// Interrupted, a worker rolls its machine back itself (SIGTERM).
	stop := context.AfterFunc(ctx, func() { cmd.Process.Signal(syscall.SIGTERM) })
	err = cmd.Wait()
	stop()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ProcessState != nil {
			if ws, ok := ee.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				msg = fmt.Sprintf("its worker (pid %d) was killed by signal %d (%s)", cmd.Process.Pid, int(ws.Signal()), ws.Signal())
				if s := strings.TrimSpace(stderr.String()); s != "" {
					msg += ": " + s
				}
			}
		}
		return stdout.String(), errors.New(msg)
	}
	return stdout.String(), nil
}

// teardownMachines runs the worker's teardown on every machine of a
// controller's lab and returns what failed: the local machines that still
// exist (found on the file system, so a lost state is no obstacle) and
// those the state names that are reached over SSH. Each worker removes its
// machine's part by its marker and journal, as a lone lab's teardown does.
func teardownMachines(st *State, log *slog.Logger) []string {
	lab := st.Lab
	var ms []topo.Machine
	if ents, err := os.ReadDir(machinesDir(lab)); err == nil {
		for _, e := range ents {
			if e.IsDir() && machineExists(lab, e.Name()) {
				ms = append(ms, topo.Machine{Name: e.Name(), SSH: topo.SSHLocal})
			}
		}
	}
	if isController(st) {
		for _, m := range st.Spec.Cluster.Machines {
			if !m.Local() {
				ms = append(ms, m)
			}
		}
	}
	var errs []string
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	perr := parallel(ctx, max(1, len(ms)), ms, func(m topo.Machine) error {
		if _, err := runWorker(ctx, lab, m, nil, "teardown", lab); err != nil {
			return fmt.Errorf("machine %s: %w", m.Name, err)
		}
		log.Debug("machine torn down", "machine", m.Name)
		return nil
	})
	if perr != nil {
		errs = append(errs, perr.Error())
	}
	return errs
}

// unmountUnder unmounts every mount below dir, deepest first (a local
// machine's mount namespace file, the private bind of its directory).
func unmountUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return []string{err.Error()}
	}
	defer f.Close()
	var mounts []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 4 && (fs[4] == dir || strings.HasPrefix(fs[4], dir+"/")) {
			mounts = append(mounts, unescapeMount(fs[4]))
		}
	}
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	var errs []string
	for _, m := range mounts {
		if err := unix.Unmount(m, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Sprintf("unmount %s: %v", m, err))
		}
	}
	return errs
}

// removeStateDir removes a lab's state dir. A mount point in it that
// mountinfo did not show (unmountUnder) is unmounted and the removal tried
// again: everything mounted there is the lab's (a local machine's mount
// namespace or its directory).
func removeStateDir(lab string) error {
	var err error
	for range 4 {
		if err = os.RemoveAll(stateDir(lab)); err == nil {
			return nil
		}
		var pe *os.PathError
		if !errors.As(err, &pe) || !errors.Is(err, unix.EBUSY) || !strings.HasPrefix(pe.Path, stateDir(lab)+"/") {
			return err
		}
		if uerr := unix.Unmount(pe.Path, unix.MNT_DETACH); uerr != nil {
			return fmt.Errorf("%w (unmount: %v)", err, uerr)
		}
	}
	return err
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%3o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountLeaks lists the mounts below dir (a local machine's mount
// namespace or directory left mounted in a lab's state dir).
func mountLeaks(dir string) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		fs := strings.Fields(line)
		if len(fs) > 4 && strings.HasPrefix(fs[4], dir+"/") {
			out = append(out, "mount "+unescapeMount(fs[4]))
		}
	}
	return out
}

// controllerIsMachine refuses SSH machines that are this host (by their
// underlay or SSH address): the controller's record and lock of the lab
// would be that machine's worker's too (both in this host's run
// directory), so the worker could not build its part. Run up from
// another host.
func controllerIsMachine(spec *topo.Spec) []string {
	here := map[netip.Addr]bool{}
	if h, err := netlink.NewHandleAt(hostNetns); err == nil {
		addrs, _ := h.AddrList(nil, netlink.FAMILY_ALL)
		for _, a := range addrs {
			if ip, ok := netip.AddrFromSlice(a.IP); ok {
				here[ip.Unmap()] = true
			}
		}
		h.Close()
	}
	var errs []string
	for _, m := range spec.Cluster.Machines {
		if m.Local() {
			continue
		}
		ssh, _ := netip.ParseAddr(m.Host)
		if here[m.Underlay] || ssh.IsValid() && here[ssh.Unmap()] && !ssh.IsLoopback() {
			errs = append(errs, fmt.Sprintf("machine %s (%s@%s, underlay %s) is this host: the host that runs `emuctl up` (the lab's controller) cannot also be one of its SSH machines — the machine's worker would share the controller's record and lock of the lab; run emuctl from another host that reaches the machines over SSH", m.Name, m.User, m.Host, m.Underlay))
		}
	}
	return errs
}
