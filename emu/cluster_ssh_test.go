package emu

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/capture"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// newSSHMachines makes stand-ins for hosts reached over SSH and returns an
// ssh_config reaching them as root@<name>.test: each a network namespace
// and a mount namespace with its own /run/netns, /etc/netns and
// /run/emuctl (made by the machine role, as a local machine's), joined by
// a veth underlay (MTU 1550, addrs[i]/24), served by Debian's OpenSSH
// sshd in inetd mode, which ssh starts through a ProxyCommand that enters
// both namespaces. Keys are made for the test. The binaries emuctl copies
// go to a directory of the test (remoteBinDir).
func newSSHMachines(t *testing.T, names, addrs []string) (config, binDir string) {
	t.Helper()
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		if sshd, err = exec.LookPath("/usr/sbin/sshd"); err != nil {
			t.Skip("needs OpenSSH's sshd: apt-get install openssh-server (scripts/install-deps.sh)")
		}
	}
	base := t.TempDir()
	// A mount namespace file can only be bound where mounts do not propagate.
	if err := unix.Mount(base, base, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("", base, "", unix.MS_PRIVATE, ""); err != nil {
		unix.Unmount(base, unix.MNT_DETACH)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if errs := unmountUnder(base); len(errs) > 0 {
			t.Errorf("unmount stand-ins: %v", errs)
		}
	})
	if _, err := os.Stat("/run/sshd"); os.IsNotExist(err) { // sshd's privilege separation directory
		os.Mkdir("/run/sshd", 0o755)
		t.Cleanup(func() { os.Remove("/run/sshd") })
	}
	for _, k := range []string{"id", "host"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(base, k)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v %s", err, out)
		}
	}
	pub, _ := os.ReadFile(filepath.Join(base, "id.pub"))
	os.WriteFile(filepath.Join(base, "authorized_keys"), pub, 0o600)
	// The sessions' home is the test's own, empty: bash run by sshd reads
	// ~/.bashrc, and root's on this machine may do anything (one that
	// runs pyenv rehash waits 60 s for a lock a killed shell left behind,
	// and a session this test ends could leave that lock itself).
	home := filepath.Join(base, "home")
	os.Mkdir(home, 0o700)
	sshdConfig := filepath.Join(base, "sshd_config")
	os.WriteFile(sshdConfig, []byte(fmt.Sprintf("HostKey %s/host\nAuthorizedKeysFile %s/authorized_keys\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPidFile none\nSetEnv HOME=%s\n", base, base, home)), 0o600)
	var cfg strings.Builder
	handles := make([]*netlink.Handle, len(names))
	for i, name := range names {
		nsName := "clssh-" + name
		ns := testutil.NewNamedNetns(t, nsName)
		h, err := netlink.NewHandleAt(ns)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(h.Close)
		handles[i] = h
		dir := filepath.Join(base, name)
		for _, sub := range []string{"netns", "etc", "run"} {
			os.MkdirAll(filepath.Join(dir, sub), 0o755)
		}
		mnt := filepath.Join(dir, "mnt")
		os.WriteFile(mnt, nil, 0o444)
		self, _ := os.Executable()
		cmd := exec.Command(self, machineArg, dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		if strings.TrimSpace(line) == "ready" {
			err = unix.Mount(fmt.Sprintf("/proc/%d/ns/mnt", cmd.Process.Pid), mnt, "", unix.MS_BIND, "")
		} else {
			err = fmt.Errorf("machine role: %q", line)
		}
		stdin.Close()
		cmd.Wait()
		if err != nil {
			t.Fatal(err)
		}
		// each connection made is a line of <base>/conns-<name>
		fmt.Fprintf(&cfg, "Host %s.test\n  ProxyCommand sh -c 'echo >> %s/conns-%s; exec nsenter --net=%s --mount=%s -- %s -i -f %s'\n  User root\n  IdentityFile %s/id\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n",
			name, base, name, filepath.Join(NetnsDir, nsName), mnt, sshd, sshdConfig, base)
	}
	// The underlay: one veth between the first two machines.
	la := netlink.NewLinkAttrs()
	la.Name, la.MTU = "underlay0", 1550
	v := netlink.NewVeth(la)
	ns2, _ := standInNetnsFd(t, "clssh-"+names[1])
	v.PeerName, v.PeerMTU, v.PeerNamespace = "underlay0", 1550, netlink.NsFd(ns2)
	if err := handles[0].LinkAdd(v); err != nil {
		t.Fatal(err)
	}
	for i, h := range handles[:2] {
		l, err := h.LinkByName("underlay0")
		if err != nil {
			t.Fatal(err)
		}
		h.AddrAdd(l, &netlink.Addr{IPNet: &net.IPNet{IP: net.ParseIP(addrs[i]), Mask: net.CIDRMask(24, 32)}})
		h.LinkSetUp(l)
	}
	config = filepath.Join(base, "ssh_config")
	os.WriteFile(config, []byte(cfg.String()), 0o600)
	binDir = filepath.Join(base, "bin")
	return config, binDir
}

func standInNetnsFd(t *testing.T, name string) (int, error) {
	fd, err := unix.Open(filepath.Join(NetnsDir, name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd, nil
}

// A lab over two machines reached over SSH (a real OpenSSH server on
// each): the controller copies its binary once, each worker builds its
// machine's part, a shaped link is cut between them; every host pings
// every other, a 1472-byte DF ping crosses the tunnel, exec, capture,
// counters (one session per machine) and verify run over SSH, and down
// leaves nothing on either machine.
func TestClusterOverSSH(t *testing.T) {
	needRoot(t)
	config, bin := newSSHMachines(t, []string{"m1", "m2"}, []string{"192.168.252.1", "192.168.252.2"})
	t.Setenv("EMUCTL_SSH_CONFIG", config)
	saved := remoteBinDir
	remoteBinDir = bin
	defer func() { remoteBinDir = saved }()
	spec := clusterLab(t, "clh", `name: clh
machines:
  m1: {ssh: root@m1.test, underlay: 192.168.252.1, mtu: 1550}
  m2: {ssh: "root@m2.test:22", underlay: 192.168.252.2, mtu: 1550}
nodes:
  h1: {machine: m1}
  s1: {kind: switch, machine: m1}
  h2: {machine: m2}
  s2: {kind: switch, machine: m2}
links:
  - endpoints: [h1, s1]
  - endpoints: [s1, s2]
    link: {rate: 10mbit, delay: 2ms}
  - endpoints: [s2, h2]
`)
	st, err := Deploy(t.Context(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("up over SSH: %s", st.Status)
	defer func() {
		if err := Down("clh", nil); err != nil {
			t.Errorf("down: %v", err)
		}
		requireClusterGone(t, "clh")
		if ents, _ := os.ReadDir(sshMuxDir()); len(ents) > 0 {
			t.Errorf("shared SSH connections outlived the lab: %v in %s", ents, sshMuxDir())
		}
		for _, m := range []string{"m1", "m2"} {
			for _, sub := range []string{"netns", "run"} {
				ents, _ := os.ReadDir(filepath.Join(filepath.Dir(config), m, sub))
				for _, e := range ents {
					t.Errorf("machine %s: %s/%s left behind", m, sub, e.Name())
				}
			}
		}
	}()
	// One SSH connection per machine for everything this process does
	// there (cluster_sshmux.go): counted at the end, once every command
	// below has run as a session on it.
	defer func() {
		for _, m := range []string{"m1", "m2"} {
			b, _ := os.ReadFile(filepath.Join(filepath.Dir(config), "conns-"+m))
			n := strings.Count(string(b), "\n")
			t.Logf("machine %s: %d SSH connection(s) for the deploy, pings, exec, capture, counters and verify", m, n)
			if n != 1 {
				t.Errorf("machine %s: %d SSH connections, want one shared by every command", m, n)
			}
		}
	}()
	pingAllHosts(t, spec)
	dfPingCuts(t, spec)
	out, err := clusterExec("clh", "h2", "sh", "-c", "echo \"$EMUCTL_NODE on $(hostname)\"; exit 3")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || strings.TrimSpace(out) != "h2 on h2" {
		t.Errorf("exec over SSH: %q, %v (want \"h2 on h2\", exit 3)", out, err)
	}
	// a command interrupted over SSH (no signal crosses it): the end of
	// the session's input is its SIGINT (sleep dies of it: 128 + 2)
	icmd, interruptible, err := CommandInterruptible("clh", "h2", []string{"sh", "-c", "echo started; exec sleep 30"})
	if err != nil || !interruptible {
		t.Fatalf("interruptible command over SSH: %v (interruptible %v)", err, interruptible)
	}
	iin, _ := icmd.StdinPipe()
	iout, _ := icmd.StdoutPipe()
	if err := icmd.Start(); err != nil {
		t.Fatal(err)
	}
	ir := bufio.NewReader(iout)
	if line, _ := ir.ReadString('\n'); strings.TrimSpace(line) != "started" {
		t.Errorf("interruptible command: first line %q", line)
	}
	t0 := time.Now()
	iin.Close()
	rest, _ := io.ReadAll(ir)
	ierr := icmd.Wait()
	if ee, ok := ierr.(*exec.ExitError); !ok || ee.ExitCode() != 130 || time.Since(t0) > 10*time.Second {
		t.Errorf("interrupted over SSH by closing its input: %q, %v after %v (want exit 130, SIGINT)", rest, ierr, time.Since(t0))
	} else {
		t.Logf("interrupted over SSH by closing its input: exit 130 (SIGINT) %v after the input closed", time.Since(t0).Round(time.Millisecond))
	}
	// capture over SSH: the pcapng streams back through the session, and
	// ending the capture early (the caller's context) closes it cleanly
	h2, _ := PrimaryAddr(spec.Node("h2"))
	ctx, cancel := context.WithCancel(t.Context())
	ready, done := make(chan struct{}), make(chan error, 1)
	var pcap bytes.Buffer
	go func() {
		_, err := CaptureNode(ctx, st, "h2", "h2-eth0", capture.Options{Ready: func() { close(ready) }}, &pcap)
		done <- err
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("capture over SSH: %v", err)
	}
	if out, err := clusterExec("clh", "h1", "ping", "-n", "-c", "3", "-i", "0.2", "-W", "2", h2.String()); err != nil {
		t.Errorf("ping: %v %s", err, out)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("capture over SSH: %v", err)
	}
	if all, icmp := icmpPackets(t, pcap.Bytes()); icmp != 6 {
		t.Errorf("capture over SSH: %d packets, %d ICMP (want 3 echoes and 3 replies)", all, icmp)
	} else {
		t.Logf("capture over SSH: %d packets, %d ICMP", all, icmp)
	}
	// counters over SSH: one session per machine streams its links'
	// counters; every link is read, the cut link's bytes grow under a
	// ping, and Close ends the sessions
	r := NewCounterReader()
	defer r.Close()
	var c0 LinkCounters
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, cs, err := r.Read("clh")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(cs, func(c LinkCounters) bool { return c.StateA != "up" }) {
			c0 = cs[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("counters over SSH: links not read after 20 s: %+v (warnings %q)", cs, r.Warnings())
		}
	}
	if out, err := clusterExec("clh", "h1", "ping", "-n", "-c", "3", "-i", "0.2", "-s", "1000", "-W", "2", h2.String()); err != nil {
		t.Errorf("ping: %v %s", err, out)
	}
	time.Sleep(300 * time.Millisecond)
	_, cs, err := r.Read("clh")
	if err != nil {
		t.Fatal(err)
	}
	_, once, err := Counters("clh")
	if err != nil {
		t.Fatal(err)
	}
	sessions := []int{}
	for _, ms := range r.machines {
		sessions = append(sessions, ms.stream.cmd.Process.Pid)
	}
	r.Close()
	t.Logf("counters over SSH: link 1 a->b %d -> %d bytes in %v (the one-shot read: %d, %s); warnings %q", c0.AtoB.Bytes, cs[1].AtoB.Bytes, cs[1].At.Sub(c0.At).Round(time.Millisecond), once[1].AtoB.Bytes, once[1].StateA, r.Warnings())
	if cs[1].AtoB.Bytes < c0.AtoB.Bytes+3000 || cs[1].StateA != "up" || !cs[1].At.After(c0.At) {
		t.Errorf("counters over SSH: link 1 %+v then %+v: want 3 pings of 1000 bytes more, read later, up", c0, cs[1])
	}
	if once[1].StateA != "up" || once[1].AtoB.Bytes < cs[1].AtoB.Bytes {
		t.Errorf("one-shot counters over SSH: link 1 %+v", once[1])
	}
	for _, pid := range sessions {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("a counters session (ssh pid %d) runs after Close: %v", pid, err)
		}
	}
	// verify over SSH: both workers of each direction of the shaped cut
	// link run through sessions, the arrivals come back as JSON lines
	res := testutil.RetryStarved(t, "verify over SSH", true, func() []DirResult {
		res, err := Verify(t.Context(), "clh", VerifyOptions{LossProbes: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return res
	})
	for _, r := range res {
		t.Logf("verify over SSH: link %d %s: delay min %v, rate %s, loss %.2f %%, clock offset %v (at up %v%s), problems %v", r.Link, r.Dir, r.MinDelay, r.Rate.TC(), float64(r.Loss), r.ClockOffset, r.ClockOffsetUp, r.ClockNote, r.Problems)
		if !r.OK() {
			t.Errorf("verify over SSH: link %d %s: %v", r.Link, r.Dir, r.Problems)
		}
		if r.ClockNote != "" || r.ClockOffset.Abs() > time.Millisecond {
			t.Errorf("verify over SSH: link %d %s: clock offset %v measured again (note %q): want one within 1 ms of one shared clock", r.Link, r.Dir, r.ClockOffset, r.ClockNote)
		}
	}
	if len(res) != 2 {
		t.Errorf("verify over SSH measured %d directions, want the cut link's 2", len(res))
	}
	ents, _ := os.ReadDir(bin)
	if len(ents) != 1 {
		t.Errorf("copied binaries: %d files in %s, want 1", len(ents), bin)
	}
}
