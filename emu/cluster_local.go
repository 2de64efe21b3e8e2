package emu

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Local machines (ssh: local): what the controller makes on this host for
// each, all in the lab's state dir or carrying its marker.
//
//	<lab>._u            a namespace with the underlay bridge "underlay"
//	<lab>._m-<machine>  the machine's network namespace: "underlay0"
//	                    (a veth to the bridge, the machine's MTU, its
//	                    underlay address /32, a host route to every other
//	                    machine); the tunnels' UDP sockets live here
//	<state>/machines/   bound on itself, private (a mount namespace file
//	                    can only be bound where mounts do not propagate)
//	  <machine>/mnt     the machine's mount namespace, kept by a bind
//	  <machine>/netns   its /run/netns
//	  <machine>/etc     its /etc/netns
//	  <machine>/run     its /run/emuctl (the worker's state dirs)
//
// Namespaces carry the marker (teardown finds them as any lab namespace);
// the mounts are under the state dir, and teardown unmounts whatever is
// mounted there before removing it (unmountUnder), so a kill at any
// instant leaves nothing `clean` does not find.

// machineArg is the role that holds a new mount namespace while the
// controller binds it (roles.go).
const machineArg = "__emuctl_machine"

func machineNetns(lab, m string) string { return lab + "._m-" + m }
func underlayNetns(lab string) string   { return lab + "._u" }
func machinesDir(lab string) string     { return filepath.Join(stateDir(lab), "machines") }
func machineDir(lab, m string) string   { return filepath.Join(machinesDir(lab), m) }

// machineExists reports whether a local machine's namespaces are there:
// its network namespace mounted and its mount namespace bound.
func machineExists(lab, m string) bool {
	var fs unix.Statfs_t
	if unix.Statfs(filepath.Join(machineDir(lab, m), "mnt"), &fs) != nil || fs.Type != unix.NSFS_MAGIC {
		return false
	}
	return unix.Statfs(filepath.Join(NetnsDir, machineNetns(lab, m)), &fs) == nil && fs.Type == unix.NSFS_MAGIC
}

// localMachines makes the underlay and every local machine (none when
// the machines are reached over SSH: preflight refuses a mix).
func (d *deployer) localMachines(ctx context.Context) error {
	lab := d.spec.Name
	if len(d.spec.Cluster.Machines) == 0 || !d.spec.Cluster.Machines[0].Local() {
		return nil
	}
	if err := ensureNetnsDir(); err != nil {
		return err
	}
	a, err := newNetnsAnchor(lab, fmt.Sprintf("%s%08x", deployTag(d.st.Created), rand.Uint32()), d.j)
	if err != nil {
		return err
	}
	d.anchor = a
	// Each machine's /etc/netns is bound over the host's, which must exist.
	if _, err := os.Stat(etcNetnsDir); errors.Is(err, os.ErrNotExist) {
		if err := d.j.add("hostsdir", etcNetnsDir); err != nil {
			return err
		}
		if err := os.MkdirAll(etcNetnsDir, 0o755); err != nil {
			return err
		}
		d.st.HostsDirs = append(d.st.HostsDirs, etcNetnsDir)
	}
	for _, dir := range []string{RunDir(), "/run/emuctl"} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	md := machinesDir(lab)
	if err := os.MkdirAll(md, 0o755); err != nil {
		return err
	}
	if err := unix.Mount(md, md, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s: %w", md, err)
	}
	crashPoint("cluster-machines-bound")
	if err := unix.Mount("", md, "", unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make %s private: %w", md, err)
	}
	uns, uh, err := d.newMachineNetns(underlayNetns(lab))
	if err != nil {
		return fmt.Errorf("underlay: %w", err)
	}
	uns.Close()
	defer uh.Close()
	la := netlink.NewLinkAttrs()
	la.Name, la.Alias, la.Flags = "underlay", d.marker, net.FlagUp
	off := false
	if err := uh.LinkAdd(&netlink.Bridge{LinkAttrs: la, MulticastSnooping: &off}); err != nil {
		return fmt.Errorf("underlay bridge: %w", err)
	}
	br, err := uh.LinkByName("underlay")
	if err != nil {
		return err
	}
	for i, m := range d.spec.Cluster.Machines {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := d.localMachine(i, m, uh, br.Attrs().Index); err != nil {
			return fmt.Errorf("machine %s: %w", m.Name, err)
		}
	}
	return nil
}

// newMachineNetns creates a marked, named namespace of the controller's
// lab and returns a netlink handle in it.
func (d *deployer) newMachineNetns(name string) (netns.NsHandle, *netlink.Handle, error) {
	ns, h, err := createNamedNetns(name, d.marker, d.anchor)
	if err != nil {
		return -1, nil, err
	}
	d.st.Namespaces = append(d.st.Namespaces, name)
	return ns, h, nil
}

// localMachine makes machine m: its network namespace on the underlay,
// then its mount namespace.
func (d *deployer) localMachine(i int, m topo.Machine, uh *netlink.Handle, bridge int) error {
	lab := d.spec.Name
	ns, h, err := d.newMachineNetns(machineNetns(lab, m.Name))
	if err != nil {
		return err
	}
	defer ns.Close()
	defer h.Close()
	la := netlink.NewLinkAttrs()
	la.Name, la.Alias, la.MTU, la.MasterIndex, la.Flags = fmt.Sprintf("m%d", i), d.marker, m.MTU, bridge, net.FlagUp
	v := netlink.NewVeth(la)
	v.PeerName, v.PeerMTU, v.PeerNamespace = "underlay0", uint32(m.MTU), netlink.NsFd(int(ns))
	if err := uh.LinkAdd(v); err != nil {
		return fmt.Errorf("underlay veth: %w", err)
	}
	u0, err := h.LinkByName("underlay0")
	if err != nil {
		return err
	}
	if err := h.LinkSetAlias(u0, d.marker); err != nil {
		return err
	}
	if err := h.AddrAdd(u0, &netlink.Addr{IPNet: &net.IPNet{IP: m.Underlay.AsSlice(), Mask: net.CIDRMask(32, 32)}}); err != nil {
		return fmt.Errorf("underlay address %s: %w", m.Underlay, err)
	}
	if err := h.LinkSetUp(u0); err != nil {
		return err
	}
	for _, o := range d.spec.Cluster.Machines {
		if o.Name == m.Name {
			continue
		}
		rt := &netlink.Route{LinkIndex: u0.Attrs().Index, Scope: netlink.SCOPE_LINK, Dst: &net.IPNet{IP: o.Underlay.AsSlice(), Mask: net.CIDRMask(32, 32)}}
		if err := h.RouteAdd(rt); err != nil {
			return fmt.Errorf("route to machine %s: %w", o.Name, err)
		}
	}
	return d.machineMountNS(m.Name)
}

// machineMountNS makes machine m's mount namespace: a child (the machine
// role) unshares one, binds the machine's directories over /run/netns,
// /etc/netns and /run/emuctl in it and waits; the controller binds the
// child's namespace to <machine>/mnt, which keeps it after the child
// exits. The child exits when its stdin closes, so it never outlives a
// controller that dies.
func (d *deployer) machineMountNS(m string) error {
	dir := machineDir(d.spec.Name, m)
	for _, sub := range []string{"netns", "etc", "run"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	target := filepath.Join(dir, "mnt")
	if err := os.WriteFile(target, nil, 0o444); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, machineArg, dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Wait()
	defer stdin.Close()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		stdin.Close()
		cmd.Wait()
		return fmt.Errorf("mount namespace: %s", strings.TrimSpace(stderr.String()))
	}
	src := fmt.Sprintf("/proc/%d/ns/mnt", cmd.Process.Pid)
	if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("keep mount namespace: %w", err)
	}
	crashPoint("cluster-mntns")
	d.log.Debug("local machine made", "machine", m, "dir", dir)
	return nil
}

// machineRole runs in a fresh mount namespace (made private by the Go
// runtime): bind the machine's directories, say "ready", wait for stdin
// to close.
func machineRole(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: "+machineArg+" <machine dir>")
		return 2
	}
	dir := args[0]
	for _, b := range []struct{ src, dst string }{
		{filepath.Join(dir, "netns"), NetnsDir},
		{filepath.Join(dir, "etc"), etcNetnsDir},
		{filepath.Join(dir, "run"), "/run/emuctl"},
	} {
		if err := os.MkdirAll(b.dst, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := unix.Mount(b.src, b.dst, "", unix.MS_BIND, ""); err != nil {
			fmt.Fprintf(os.Stderr, "bind %s on %s: %v\n", b.src, b.dst, err)
			return 1
		}
	}
	fmt.Println("ready")
	buf := make([]byte, 1)
	for {
		if _, err := os.Stdin.Read(buf); err != nil {
			return 0
		}
	}
}
