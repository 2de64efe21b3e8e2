// Package netlab builds throwaway test networks for the packages that
// shape links (tc, tc/engine): nodes are unnamed network namespaces held by
// file descriptors, so nothing is created in the root namespace and the
// namespaces (with every veth inside) vanish when the test closes them or
// the test process dies. Interface names carry the test's own prefix. It
// also drives traffic through them: bulk TCP (StartBulk, Goodput against
// Capacity), ICMP echo (Pinger) and stamped UDP (UDPSink, UDPSend).
//
// Tests only: it calls t.Fatal and needs root (see testutil.NeedRoot).
package netlab

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/inet"
	"github.com/emuctl/emuctl/internal/nsutil"
	"github.com/emuctl/emuctl/internal/sockinfo"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/kernellab"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Node is a network namespace with a netlink handle in it.
type Node struct {
	Name string
	NS   netns.NsHandle
	H    *netlink.Handle
}

// NewNode makes a namespace with lo up, IPv6 off and TCP metrics not
// saved; the test's cleanup closes it.
func NewNode(t testing.TB, name string) *Node {
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
	n := &Node{Name: name, NS: r.ns, H: h}
	t.Cleanup(func() { h.Close(); n.NS.Close() })
	lo, err := h.LinkByName("lo")
	if err == nil {
		_ = h.LinkSetUp(lo)
	}
	n.Sysctl(t, "net/ipv6/conf/all/disable_ipv6", "1")
	n.Sysctl(t, "net/ipv6/conf/default/disable_ipv6", "1")
	n.Sysctl(t, "net/ipv4/tcp_no_metrics_save", "1")
	return n
}

// Sysctl writes /proc/sys/key inside the node.
func (n *Node) Sysctl(t testing.TB, key, val string) {
	t.Helper()
	err := nsutil.Do(n.NS, func() error { return os.WriteFile("/proc/sys/"+key, []byte(val), 0o644) })
	if err != nil {
		t.Fatalf("%s: sysctl %s=%s: %v", n.Name, key, val, err)
	}
}

// Link returns the node's interface name.
func (n *Node) Link(t testing.TB, name string) netlink.Link {
	t.Helper()
	l, err := n.H.LinkByName(name)
	if err != nil {
		t.Fatalf("%s: link %s: %v", n.Name, name, err)
	}
	return l
}

// Veth joins a:aName with b:bName, both up.
func Veth(t testing.TB, a *Node, aName string, b *Node, bName string) {
	t.Helper()
	la := netlink.NewLinkAttrs()
	la.Name = aName
	v := &netlink.Veth{LinkAttrs: la, PeerName: bName, PeerNamespace: netlink.NsFd(int(b.NS))}
	if err := a.H.LinkAdd(v); err != nil {
		t.Fatalf("veth %s-%s: %v", aName, bName, err)
	}
	for _, x := range []struct {
		n    *Node
		name string
	}{{a, aName}, {b, bName}} {
		if err := x.n.H.LinkSetUp(x.n.Link(t, x.name)); err != nil {
			t.Fatalf("up %s: %v", x.name, err)
		}
	}
}

// Addr adds cidr to the node's interface ifname.
func (n *Node) Addr(t testing.TB, ifname, cidr string) {
	t.Helper()
	a, err := netlink.ParseAddr(cidr)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.H.AddrAdd(n.Link(t, ifname), a); err != nil {
		t.Fatalf("%s: addr %s on %s: %v", n.Name, cidr, ifname, err)
	}
}

// neigh installs a permanent ARP entry so loss never hits ARP.
func (n *Node) Neigh(t testing.TB, ifname, ip string, mac net.HardwareAddr) {
	t.Helper()
	err := n.H.NeighSet(&netlink.Neigh{LinkIndex: n.Link(t, ifname).Attrs().Index, Family: netlink.FAMILY_V4,
		State: netlink.NUD_PERMANENT, IP: net.ParseIP(ip), HardwareAddr: mac})
	if err != nil {
		t.Fatalf("%s: neigh %s: %v", n.Name, ip, err)
	}
}

// Route adds a route to dst via gw.
func (n *Node) Route(t testing.TB, dst, gw string) {
	t.Helper()
	_, d, err := net.ParseCIDR(dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.H.RouteAdd(&netlink.Route{Dst: d, Gw: net.ParseIP(gw)}); err != nil {
		t.Fatalf("%s: route %s via %s: %v", n.Name, dst, gw, err)
	}
}

// ---- traffic ----

// SetCubic is a net.Dialer Control that sets TCP_CONGESTION cubic.
func SetCubic(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, "cubic")
	})
	if err != nil {
		return err
	}
	return serr
}

// Bulk is a running TCP flow src → dst:port; Received counts payload
// bytes the receiver has read, Stop ends it (the test's cleanup does too).
type Bulk struct {
	Received atomic.Int64
	Stop     func()
	rx       atomic.Pointer[net.TCPConn]
}

// Arrived is the payload the receiving kernel has taken in so far
// (tcpi_bytes_received: counted as segments arrive, so a reader that
// runs late does not move bytes from one window into the next), or
// Received before the connection is accepted or where TCP_INFO fails.
func (b *Bulk) Arrived() int64 {
	c := b.rx.Load()
	if c == nil {
		return b.Received.Load()
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return b.Received.Load()
	}
	var n int64 = -1
	rc.Control(func(fd uintptr) {
		if ti, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			n = int64(ti.Bytes_received)
		}
	})
	if n < 0 {
		return b.Received.Load()
	}
	return n
}

// StartBulk starts a CUBIC bulk flow src → dstIP:port.
func StartBulk(t testing.TB, src, dst *Node, dstIP string, port int) *Bulk {
	t.Helper()
	var ln net.Listener
	err := nsutil.Do(dst.NS, func() (err error) {
		ln, err = net.Listen("tcp4", net.JoinHostPort(dstIP, fmt.Sprint(port)))
		return err
	})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	b := &Bulk{}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if tc, ok := c.(*net.TCPConn); ok {
			b.rx.Store(tc)
		}
		go func() { <-ctx.Done(); c.Close() }()
		buf := make([]byte, 256<<10)
		for {
			n, err := c.Read(buf)
			b.Received.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	var conn net.Conn
	err = nsutil.Do(src.NS, func() (err error) {
		d := net.Dialer{Timeout: 5 * time.Second, Control: SetCubic}
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
	b.Stop = func() { cancel(); conn.Close(); ln.Close() }
	t.Cleanup(b.Stop)
	return b
}

// Goodput runs a bulk flow for warm+measure and returns the receiver's
// goodput (bit/s) over the measure window.
func Goodput(t testing.TB, src, dst *Node, dstIP string, warm, measure time.Duration) float64 {
	t.Helper()
	b := StartBulk(t, src, dst, dstIP, 5001)
	defer b.Stop()
	time.Sleep(warm)
	b0, t0 := testutil.Timed(b.Arrived)
	time.Sleep(measure)
	b1, t1 := testutil.Timed(b.Arrived)
	return float64(b1-b0) * 8 / t1.Sub(t0).Seconds()
}

// Capacity is the TCP goodput ceiling of a link of rate bps (timestamps
// on): 1448 payload bytes per 1514-byte frame.
func Capacity(bps float64) float64 { return bps * 1448 / 1514 }

// Pinger sends ICMP echo requests from a raw socket inside src; the
// destination's kernel answers, so no userspace hop adds latency there.
type Pinger struct {
	c    *net.IPConn
	id   uint16
	mu   sync.Mutex
	sent map[uint16]time.Time
	rtts []time.Duration
	done chan struct{}
}

// NewPinger opens the raw ICMP socket in src.
func NewPinger(t testing.TB, src *Node) *Pinger {
	t.Helper()
	var pc net.PacketConn
	err := nsutil.Do(src.NS, func() (err error) {
		pc, err = net.ListenPacket("ip4:icmp", "0.0.0.0")
		return err
	})
	if err != nil {
		t.Fatalf("icmp socket: %v", err)
	}
	p := &Pinger{c: pc.(*net.IPConn), id: uint16(os.Getpid()), sent: map[uint16]time.Time{}, done: make(chan struct{})}
	// replies are timed by the kernel: a receiver held off the CPU would
	// add its own delay to the round trip
	if rc, err := p.c.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) })
	}
	go p.receive()
	t.Cleanup(func() { p.c.Close(); <-p.done })
	return p
}

func (p *Pinger) receive() {
	defer close(p.done)
	buf, oob := make([]byte, 1500), make([]byte, sockinfo.RxTimeOOB)
	for {
		n, oobn, _, _, err := p.c.ReadMsgIP(buf, oob)
		now := time.Now()
		if err != nil {
			return
		}
		if ns, ok := sockinfo.RxTime(oob[:oobn]); ok {
			now = time.Unix(0, ns)
		}
		b := buf[:n] // ReadMsgIP keeps the IPv4 header (ReadFrom strips it)
		if len(b) >= 20 && b[0]>>4 == 4 {
			b = b[min(int(b[0]&0x0f)*4, len(b)):]
		}
		if len(b) < 8 || b[0] != 0 || binary.BigEndian.Uint16(b[4:]) != p.id {
			continue
		}
		seq := binary.BigEndian.Uint16(b[6:])
		p.mu.Lock()
		if t0, ok := p.sent[seq]; ok {
			p.rtts = append(p.rtts, now.Sub(t0))
			delete(p.sent, seq)
		}
		p.mu.Unlock()
	}
}

func (p *Pinger) send(dst string, seq uint16) {
	msg := make([]byte, 64)
	msg[0] = 8 // echo request
	binary.BigEndian.PutUint16(msg[4:], p.id)
	binary.BigEndian.PutUint16(msg[6:], seq)
	binary.BigEndian.PutUint16(msg[2:], ^inet.Fold(inet.Sum(0, msg)))
	p.mu.Lock()
	p.sent[seq] = time.Now()
	p.mu.Unlock()
	_, _ = p.c.WriteTo(msg, &net.IPAddr{IP: net.ParseIP(dst)})
}

// Run sends n echoes every interval and returns the RTTs received (lost
// ones are missing), waiting up to wait for the last answers.
func (p *Pinger) Run(dst string, n int, interval, wait time.Duration) []time.Duration {
	p.mu.Lock()
	p.rtts = nil
	p.mu.Unlock()
	for i := 0; i < n; i++ {
		p.send(dst, uint16(i))
		time.Sleep(interval)
	}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		left := len(p.sent)
		p.mu.Unlock()
		if left == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.sent)
	return slices.Clone(p.rtts)
}

// Percentile returns the p-th percentile (nearest rank) of ds.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// RTTStats summarises RTT samples.
type RTTStats struct {
	N                   int
	Min, P50, Mean, Max time.Duration
	P95                 time.Duration
}

// Summarize returns the count, min, median, mean, p95 and max of rtts.
func Summarize(rtts []time.Duration) RTTStats {
	if len(rtts) == 0 {
		return RTTStats{}
	}
	s := slices.Clone(rtts)
	slices.Sort(s)
	var sum time.Duration
	for _, r := range s {
		sum += r
	}
	return RTTStats{N: len(s), Min: s[0], P50: s[len(s)/2], P95: s[len(s)*95/100], Max: s[len(s)-1], Mean: sum / time.Duration(len(s))}
}

func (s RTTStats) String() string {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return fmt.Sprintf("n=%d min %.3f p50 %.3f mean %.3f p95 %.3f max %.3f ms", s.N, ms(s.Min), ms(s.P50), ms(s.Mean), ms(s.P95), ms(s.Max))
}

// UDPSink counts datagrams arriving at dst:port and records one-way delays
// (senders stamp the process's monotonic clock).
type UDPSink struct {
	c         *net.UDPConn
	mu        sync.Mutex
	n         int
	delay     []time.Duration
	maxSeq    int64
	reordered int // datagrams that arrived after one with a higher sequence number
	done      chan struct{}
}

var clockBase = time.Now()

// NewUDPSink listens on ip:port inside dst.
func NewUDPSink(t testing.TB, dst *Node, ip string, port int) *UDPSink {
	t.Helper()
	var c *net.UDPConn
	err := nsutil.Do(dst.NS, func() (err error) {
		c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(ip), Port: port})
		return err
	})
	if err != nil {
		t.Fatalf("udp listen: %v", err)
	}
	_ = c.SetReadBuffer(8 << 20)
	s := &UDPSink{c: c, done: make(chan struct{}), maxSeq: -1}
	go func() {
		defer close(s.done)
		buf := make([]byte, 2048)
		for {
			n, err := c.Read(buf)
			now := time.Since(clockBase)
			if err != nil {
				return
			}
			s.mu.Lock()
			s.n++
			if n >= 16 {
				s.delay = append(s.delay, now-time.Duration(binary.BigEndian.Uint64(buf)))
				seq := int64(binary.BigEndian.Uint64(buf[8:]))
				if seq < s.maxSeq {
					s.reordered++
				}
				s.maxSeq = max(s.maxSeq, seq)
			}
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { c.Close(); <-s.done })
	return s
}

// Count is the number of datagrams received.
func (s *UDPSink) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// Reorders counts datagrams that arrived after a later-sent one.
func (s *UDPSink) Reorders() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reordered
}

// Delays are the one-way delays of the stamped datagrams.
func (s *UDPSink) Delays() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delay...)
}

// UDPSend sends n datagrams of size bytes from src to ip:port, burst at a
// time with a pause in between.
func UDPSend(t testing.TB, src *Node, ip string, port, n, size, burst int, pause time.Duration) {
	t.Helper()
	var c *net.UDPConn
	err := nsutil.Do(src.NS, func() (err error) {
		c, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.ParseIP(ip), Port: port})
		return err
	})
	if err != nil {
		t.Fatalf("udp dial: %v", err)
	}
	defer c.Close()
	buf := make([]byte, size)
	for i := 0; i < n; i++ {
		binary.BigEndian.PutUint64(buf, uint64(time.Since(clockBase)))
		binary.BigEndian.PutUint64(buf[8:], uint64(i))
		if _, err := c.Write(buf); err != nil {
			t.Fatalf("udp write: %v", err)
		}
		if (i+1)%burst == 0 {
			time.Sleep(pause)
		}
	}
}

// LabSlack widens timing tolerances inside the kernel lab (QEMU TCG).
func LabSlack() time.Duration {
	if kernellab.InLab() {
		return 5 * time.Millisecond
	}
	return 0
}

// SkipInLab skips timing and throughput tests in the kernel lab: under
// software emulation (QEMU TCG) they measure the emulator, and they do not
// need anything this machine lacks.
func SkipInLab(t testing.TB) {
	t.Helper()
	if kernellab.InLab() {
		t.Skip("timing/throughput test: runs on the host, not under QEMU TCG")
	}
}
