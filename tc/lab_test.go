package tc

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Test labs are built from unnamed network namespaces held by file
// descriptors: nothing is ever created in the root namespace, and the
// namespaces (with every veth inside) vanish when the test closes them or
// the test process dies. Interface names carry the "tct" prefix.

type node struct {
	name string
	ns   netns.NsHandle
	h    *netlink.Handle
}

func newNode(t testing.TB, name string) *node {
	t.Helper()
	type res struct {
		ns  netns.NsHandle
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			ch <- res{err: err}
			return
		}
		defer orig.Close()
		ns, err := netns.New()
		if err != nil {
			ch <- res{err: err}
			return
		}
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
		ch <- res{ns: ns}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatalf("new netns %s: %v", name, r.err)
	}
	h, err := netlink.NewHandleAt(r.ns, unix.NETLINK_ROUTE)
	if err != nil {
		r.ns.Close()
		t.Fatalf("handle %s: %v", name, err)
	}
	n := &node{name: name, ns: r.ns, h: h}
	t.Cleanup(func() { h.Close(); n.ns.Close() })
	lo, err := h.LinkByName("lo")
	if err == nil {
		_ = h.LinkSetUp(lo)
	}
	n.sysctl(t, "net/ipv6/conf/all/disable_ipv6", "1")
	n.sysctl(t, "net/ipv6/conf/default/disable_ipv6", "1")
	n.sysctl(t, "net/ipv4/tcp_no_metrics_save", "1")
	return n
}

func (n *node) sysctl(t testing.TB, key, val string) {
	t.Helper()
	err := inNS(n.ns, func() error { return os.WriteFile("/proc/sys/"+key, []byte(val), 0o644) })
	if err != nil {
		t.Fatalf("%s: sysctl %s=%s: %v", n.name, key, val, err)
	}
}

func (n *node) link(t testing.TB, name string) netlink.Link {
	t.Helper()
	l, err := n.h.LinkByName(name)
	if err != nil {
		t.Fatalf("%s: link %s: %v", n.name, name, err)
	}
	return l
}

// veth joins a:aName with b:bName, both up.
func veth(t testing.TB, a *node, aName string, b *node, bName string) {
	t.Helper()
	la := netlink.NewLinkAttrs()
	la.Name = aName
	v := &netlink.Veth{LinkAttrs: la, PeerName: bName, PeerNamespace: netlink.NsFd(int(b.ns))}
	if err := a.h.LinkAdd(v); err != nil {
		t.Fatalf("veth %s-%s: %v", aName, bName, err)
	}
	for _, x := range []struct {
		n    *node
		name string
	}{{a, aName}, {b, bName}} {
		if err := x.n.h.LinkSetUp(x.n.link(t, x.name)); err != nil {
			t.Fatalf("up %s: %v", x.name, err)
		}
	}
}

func (n *node) addr(t testing.TB, ifname, cidr string) {
	t.Helper()
	a, err := netlink.ParseAddr(cidr)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.h.AddrAdd(n.link(t, ifname), a); err != nil {
		t.Fatalf("%s: addr %s on %s: %v", n.name, cidr, ifname, err)
	}
}

// neigh installs a permanent ARP entry so loss never hits ARP.
func (n *node) neigh(t testing.TB, ifname, ip string, mac net.HardwareAddr) {
	t.Helper()
	err := n.h.NeighSet(&netlink.Neigh{LinkIndex: n.link(t, ifname).Attrs().Index, Family: netlink.FAMILY_V4,
		State: netlink.NUD_PERMANENT, IP: net.ParseIP(ip), HardwareAddr: mac})
	if err != nil {
		t.Fatalf("%s: neigh %s: %v", n.name, ip, err)
	}
}

func (n *node) route(t testing.TB, dst, gw string) {
	t.Helper()
	_, d, err := net.ParseCIDR(dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.h.RouteAdd(&netlink.Route{Dst: d, Gw: net.ParseIP(gw)}); err != nil {
		t.Fatalf("%s: route %s via %s: %v", n.name, dst, gw, err)
	}
}

// engineLab is h1 (tct1, 10.9.0.1) <-> [tcta engine tctb] <-> h2 (tct2, 10.9.0.2).
type engineLab struct {
	h1, e, h2 *node
	eng       *Engine
	done      chan error
}

const ip1, ip2 = "10.9.0.1", "10.9.0.2"

func newEngineLab(t testing.TB, ab, ba Dir, seed uint64) *engineLab {
	t.Helper()
	requireRoot(t)
	skipInLab(t)
	l := &engineLab{h1: newNode(t, "h1"), e: newNode(t, "eng"), h2: newNode(t, "h2")}
	veth(t, l.h1, "tct1", l.e, "tcta")
	veth(t, l.e, "tctb", l.h2, "tct2")
	l.h1.addr(t, "tct1", ip1+"/24")
	l.h2.addr(t, "tct2", ip2+"/24")
	l.h1.neigh(t, "tct1", ip2, l.h2.link(t, "tct2").Attrs().HardwareAddr)
	l.h2.neigh(t, "tct2", ip1, l.h1.link(t, "tct1").Attrs().HardwareAddr)
	eng, err := NewEngine(l.e.ns, "tcta", "tctb", ab, ba, seed)
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	l.eng = eng
	ctx, cancel := context.WithCancel(context.Background())
	l.done = make(chan error, 1)
	go func() { l.done <- eng.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-l.done:
			if err != nil {
				t.Errorf("engine Run: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("engine did not stop within 5 s")
		}
	})
	return l
}

// ---- traffic ----

func setCubic(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, "cubic")
	})
	if err != nil {
		return err
	}
	return serr
}

// bulk is a running TCP flow src → dst:port; received counts payload bytes.
type bulk struct {
	received atomic.Int64
	stop     func()
}

func startBulk(t testing.TB, src, dst *node, dstIP string, port int) *bulk {
	t.Helper()
	var ln net.Listener
	err := inNS(dst.ns, func() (err error) {
		ln, err = net.Listen("tcp4", net.JoinHostPort(dstIP, fmt.Sprint(port)))
		return err
	})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	b := &bulk{}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		go func() { <-ctx.Done(); c.Close() }()
		buf := make([]byte, 256<<10)
		for {
			n, err := c.Read(buf)
			b.received.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	var conn net.Conn
	err = inNS(src.ns, func() (err error) {
		d := net.Dialer{Timeout: 5 * time.Second, Control: setCubic}
		conn, err = d.Dial("tcp4", net.JoinHostPort(dstIP, fmt.Sprint(port)))
		return err
	})
	if err != nil {
		cancel()
		ln.Close()
		t.Fatalf("dial: %v", err)
	}
	go func() {
		buf := make([]byte, 128<<10)
		for ctx.Err() == nil {
			if _, err := conn.Write(buf); err != nil {
				return
			}
		}
	}()
	b.stop = func() { cancel(); conn.Close(); ln.Close() }
	t.Cleanup(b.stop)
	return b
}

// goodput runs a bulk flow for warm+measure and returns the receiver's
// goodput (bit/s) over the measure window.
func goodput(t testing.TB, src, dst *node, dstIP string, warm, measure time.Duration) float64 {
	t.Helper()
	b := startBulk(t, src, dst, dstIP, 5001)
	defer b.stop()
	time.Sleep(warm)
	b0, t0 := b.received.Load(), time.Now()
	time.Sleep(measure)
	b1, t1 := b.received.Load(), time.Now()
	return float64(b1-b0) * 8 / t1.Sub(t0).Seconds()
}

// capacity is the TCP goodput ceiling of a link of rate bps (timestamps
// on): 1448 payload bytes per 1514-byte frame.
func capacity(bps float64) float64 { return bps * 1448 / 1514 }
