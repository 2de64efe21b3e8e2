package kernellab

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/nsutil"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Everything the smoke tests create is named with this prefix; the leak
// check in TestMain looks for it.
const prefix = "ekl-"

// testNS is a named network namespace (so `ip netns exec` can start
// processes in it) with a netlink handle bound to it.
type testNS struct {
	Name string
	H    netns.NsHandle
	NL   *netlink.Handle
}

// newNS creates the namespace "ekl-<role>" and removes it when t ends.
func newNS(t *testing.T, role string) *testNS {
	t.Helper()
	name := prefix + role
	ns := &testNS{Name: name, H: testutil.NewNamedNetns(t, name)}
	t.Cleanup(func() {
		if ns.NL != nil {
			ns.NL.Close()
		}
	})
	nl, err := netlink.NewHandleAt(ns.H, unix.NETLINK_ROUTE, unix.NETLINK_INET_DIAG)
	if err != nil {
		t.Fatalf("netlink handle in %s: %v", name, err)
	}
	ns.NL = nl
	lo, err := nl.LinkByName("lo")
	if err == nil {
		err = nl.LinkSetUp(lo)
	}
	if err != nil {
		t.Fatalf("%s: lo up: %v", name, err)
	}
	return ns
}

// Do runs fn on an OS thread switched into the namespace. Sockets opened in
// fn stay in the namespace and may be used anywhere afterwards.
func (ns *testNS) Do(fn func() error) error { return nsutil.Do(ns.H, fn) }

// link looks a link up in the namespace.
func (ns *testNS) link(t *testing.T, name string) netlink.Link {
	t.Helper()
	l, err := ns.NL.LinkByName(name)
	if err != nil {
		t.Fatalf("%s: link %s: %v", ns.Name, name, err)
	}
	return l
}

// addr puts cidr on the link and sets it up.
func (ns *testNS) addr(t *testing.T, ifname, cidr string) {
	t.Helper()
	l := ns.link(t, ifname)
	a, err := netlink.ParseAddr(cidr)
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.NL.AddrAdd(l, a); err != nil {
		t.Fatalf("%s: addr %s on %s: %v", ns.Name, cidr, ifname, err)
	}
	if err := ns.NL.LinkSetUp(l); err != nil {
		t.Fatalf("%s: %s up: %v", ns.Name, ifname, err)
	}
}

// veth joins a (end aIf) and b (end bIf); nil means the root namespace, in
// which case the end is deleted when t ends (namespaced ends die with
// their namespace).
func veth(t *testing.T, a *testNS, aIf string, b *testNS, bIf string) {
	t.Helper()
	la := netlink.NewLinkAttrs()
	la.Name = aIf
	v := &netlink.Veth{LinkAttrs: la, PeerName: bIf}
	if a != nil {
		v.Namespace = netlink.NsFd(int(a.H))
	}
	if b != nil {
		v.PeerNamespace = netlink.NsFd(int(b.H))
	}
	if err := netlink.LinkAdd(v); err != nil {
		t.Fatalf("veth %s-%s: %v", aIf, bIf, err)
	}
	for _, end := range []struct {
		ns   *testNS
		name string
	}{{a, aIf}, {b, bIf}} {
		if end.ns != nil {
			continue
		}
		name := end.name
		t.Cleanup(func() {
			if l, err := netlink.LinkByName(name); err == nil {
				if err := netlink.LinkDel(l); err != nil {
					t.Errorf("delete %s: %v", name, err)
				}
			}
		})
		l, err := netlink.LinkByName(name)
		if err == nil {
			err = netlink.LinkSetUp(l)
		}
		if err != nil {
			t.Fatalf("%s up: %v", name, err)
		}
	}
}

// icmpEcho sends count echo requests from inside ns to dst, one after the
// other gap apart, and returns the round-trip time of each, measured in Go.
// Any request without a reply within timeout is an error.
func icmpEcho(ns *testNS, dst net.IP, count int, gap, timeout time.Duration) ([]time.Duration, error) {
	var conn net.PacketConn
	if err := ns.Do(func() (err error) {
		conn, err = net.ListenPacket("ip4:icmp", "0.0.0.0")
		return err
	}); err != nil {
		return nil, fmt.Errorf("raw ICMP socket in %s: %w", ns.Name, err)
	}
	defer conn.Close()
	id := uint16(os.Getpid()) ^ uint16(time.Now().UnixNano())
	buf := make([]byte, 1500)
	var rtts []time.Duration
	for seq := 1; seq <= count; seq++ {
		start := time.Now()
		if _, err := conn.WriteTo(echoRequest(id, uint16(seq)), &net.IPAddr{IP: dst}); err != nil {
			return rtts, fmt.Errorf("echo %d to %s: %w", seq, dst, err)
		}
		if err := conn.SetReadDeadline(start.Add(timeout)); err != nil {
			return rtts, err
		}
		for {
			n, from, err := conn.ReadFrom(buf) // IPv4 header already stripped
			if err != nil {
				return rtts, fmt.Errorf("echo %d to %s: no reply: %w", seq, dst, err)
			}
			if n >= 8 && buf[0] == 0 && from.(*net.IPAddr).IP.Equal(dst) &&
				uint16(buf[4])<<8|uint16(buf[5]) == id && uint16(buf[6])<<8|uint16(buf[7]) == uint16(seq) {
				rtts = append(rtts, time.Since(start))
				break
			}
		}
		if seq < count {
			time.Sleep(gap)
		}
	}
	return rtts, nil
}

// echoRequest builds an ICMP echo request with a 56-byte payload.
func echoRequest(id, seq uint16) []byte {
	p := make([]byte, 8+56)
	p[0] = 8 // echo request
	p[4], p[5] = byte(id>>8), byte(id)
	p[6], p[7] = byte(seq>>8), byte(seq)
	copy(p[8:], "emuctl kernel lab")
	var sum uint32
	for i := 0; i < len(p); i += 2 {
		sum += uint32(p[i])<<8 | uint32(p[i+1])
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	cs := ^uint16(sum)
	p[2], p[3] = byte(cs>>8), byte(cs)
	return p
}

// tcpTransfer sends size bytes over TCP from a to addr (listening in b) and
// returns how many the receiver got.
func tcpTransfer(t *testing.T, a, b *testNS, addr string, size int64) int64 {
	t.Helper()
	var ln net.Listener
	if err := b.Do(func() (err error) {
		ln, err = net.Listen("tcp", addr)
		return err
	}); err != nil {
		t.Fatalf("listen %s in %s: %v", addr, b.Name, err)
	}
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		n, _ := io.Copy(io.Discard, c)
		got <- n
	}()
	var c net.Conn
	if err := a.Do(func() (err error) {
		c, err = net.DialTimeout("tcp", addr, 10*time.Second)
		return err
	}); err != nil {
		t.Fatalf("dial %s from %s: %v", addr, a.Name, err)
	}
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	sent, err := io.CopyN(c, zeroReader{}, size)
	c.Close()
	if err != nil {
		t.Fatalf("send to %s: %v (sent %d)", addr, err, sent)
	}
	select {
	case n := <-got:
		return n
	case <-time.After(60 * time.Second):
		t.Fatalf("receiver in %s did not finish", b.Name)
		return 0
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// proc is a process started by startProc.
type proc struct {
	Pid  int
	done chan struct{} // closed once the process has exited and been reaped
}

// wait waits up to d for the process to exit by itself.
func (p *proc) wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// startProc starts argv in ns (nil: the root namespace), with env added to
// the environment and its output in logPath, and stops it by pid when t
// ends: SIGTERM, then SIGKILL after 5 s. Processes in a namespace go through
// `ip netns exec`, which also gives them a /sys of that namespace (hostapd
// and wpa_supplicant read /sys/class/net); it execs the command, so the pid
// is the command's own.
func startProc(t *testing.T, ns *testNS, env []string, logPath string, argv ...string) *proc {
	t.Helper()
	if ns != nil {
		argv = append([]string{"ip", "netns", "exec", ns.Name}, argv...)
	}
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %v: %v", argv, err)
	}
	p := &proc{Pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(p.done) }()
	t.Cleanup(func() {
		if p.wait(0) {
			return
		}
		_ = syscall.Kill(p.Pid, syscall.SIGTERM)
		if !p.wait(5 * time.Second) {
			_ = syscall.Kill(p.Pid, syscall.SIGKILL)
			<-p.done
		}
	})
	return p
}

// waitFor polls cond every 100 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) time.Duration {
	t.Helper()
	start := time.Now()
	var last error
	for time.Since(start) < timeout {
		ok, err := cond()
		if ok {
			return time.Since(start)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %v waiting for %s (last error: %v)", timeout, what, last)
	return 0
}

// requireTools fails (lab) or skips (elsewhere) unless every tool is on PATH.
func requireTools(t *testing.T, pkg string, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		_, err := exec.LookPath(tool)
		Require(t, tool, err == nil, fmt.Sprintf("%v; Debian package %s", err, pkg))
	}
}

// dumpOnFailure prints log files when t has failed, to explain daemons.
func dumpOnFailure(t *testing.T, paths ...string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("--- %s (tail):\n%s", filepath.Base(p), b)
		}
	})
}
