package netcfg_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/nsutil"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/netcfg"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Root tests bring labs named tnc* up with emu, apply netcfg to their
// nodes themselves (emu's netcfg phase is the lead's to add), and tear
// them down. TestMain fails the run when any tnc* object is left.
func TestMain(m *testing.M) {
	testutil.Main(m, func() []string { return testutil.Mine(emu.Leaks(), "tnc") })
}

func needRoot(t *testing.T) {
	t.Helper()
	testutil.NeedRoot(t)
}

// lab is a deployed test lab with open namespaces and handles per node.
type lab struct {
	t    *testing.T
	spec *topo.Spec
	ns   map[string]netns.NsHandle
	h    map[string]*netlink.Handle
}

// up loads yaml, deploys it and registers its teardown.
func up(t *testing.T, file string, yaml string) *lab {
	t.Helper()
	needRoot(t)
	spec, err := topo.Load(file, []byte(yaml))
	if err != nil {
		t.Fatalf("load:\n%v", err)
	}
	return upSpec(t, spec)
}

func upSpec(t *testing.T, spec *topo.Spec) *lab {
	t.Helper()
	needRoot(t)
	emu.Down(spec.Name, nil) // a crashed earlier run
	if _, err := emu.Deploy(context.Background(), bare(t, spec), emu.Options{}); err != nil {
		t.Fatalf("deploy %s: %v", spec.Name, err)
	}
	l := &lab{t: t, spec: spec, ns: map[string]netns.NsHandle{}, h: map[string]*netlink.Handle{}}
	t.Cleanup(func() {
		for _, h := range l.h {
			h.Close()
		}
		for _, ns := range l.ns {
			ns.Close()
		}
		if err := emu.Down(spec.Name, nil); err != nil {
			t.Errorf("down %s: %v", spec.Name, err)
		}
	})
	for _, n := range spec.Nodes {
		ns, err := netns.GetFromPath(filepath.Join(emu.NetnsDir, topo.Namespace(spec.Name, n.Name)))
		if err != nil {
			t.Fatal(err)
		}
		l.ns[n.Name] = ns
		h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
		if err != nil {
			t.Fatal(err)
		}
		l.h[n.Name] = h
	}
	return l
}

// bare is a copy of spec without tcp: and mptcp: settings: labs are
// deployed bare (whether or not emu applies netcfg itself), and each test
// applies the settings with netcfg, including ones preflight would refuse.
func bare(t *testing.T, spec *topo.Spec) *topo.Spec {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var c topo.Spec
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	for i := range c.Nodes {
		c.Nodes[i].TCP, c.Nodes[i].MPTCP = nil, nil
	}
	return &c
}

func (l *lab) node(name string) *topo.Node {
	n := l.spec.Node(name)
	if n == nil {
		l.t.Fatalf("no node %s", name)
	}
	return n
}

// apply runs netcfg.ApplyNode on one node and fails the test on error.
func (l *lab) apply(name string) *netcfg.Applied {
	l.t.Helper()
	a, err := netcfg.ApplyNode(l.ns[name], l.h[name], l.node(name), l.spec)
	if err != nil {
		l.t.Fatalf("apply %s: %v", name, err)
	}
	return a
}

func (l *lab) applyAll() map[string]*netcfg.Applied {
	l.t.Helper()
	out := map[string]*netcfg.Applied{}
	for _, n := range l.spec.Hosts() {
		out[n.Name] = l.apply(n.Name)
	}
	return out
}

// addr is the first address of a node's interface.
func (l *lab) addr(node, iface string) string {
	for _, ifc := range l.node(node).Interfaces {
		if ifc.Name == iface && len(ifc.Addrs) > 0 {
			return ifc.Addrs[0].Addr().String()
		}
	}
	l.t.Fatalf("%s:%s has no address", node, iface)
	return ""
}

// in runs fn on a fresh thread inside ns.
func in(ns netns.NsHandle, fn func() error) error { return nsutil.Do(ns, fn) }

// listen opens a TCP (or MPTCP) listener inside a node.
func (l *lab) listen(node, addr string, mptcp bool, ctl func(string, string, syscall.RawConn) error) net.Listener {
	l.t.Helper()
	var ln net.Listener
	err := in(l.ns[node], func() (err error) {
		lc := net.ListenConfig{Control: ctl}
		lc.SetMultipathTCP(mptcp)
		ln, err = lc.Listen(context.Background(), "tcp", net.JoinHostPort(addr, "0"))
		return err
	})
	if err != nil {
		l.t.Fatalf("listen in %s: %v", node, err)
	}
	l.t.Cleanup(func() { ln.Close() })
	return ln
}

// dial connects from inside a node.
func (l *lab) dial(node, addr string, mptcp bool, ctl func(string, string, syscall.RawConn) error) *net.TCPConn {
	l.t.Helper()
	var c net.Conn
	err := in(l.ns[node], func() (err error) {
		d := net.Dialer{Control: ctl, Timeout: 5 * time.Second}
		d.SetMultipathTCP(mptcp)
		c, err = d.Dial("tcp", addr)
		return err
	})
	if err != nil {
		l.t.Fatalf("dial from %s to %s: %v", node, addr, err)
	}
	l.t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// sysctl reads a sysctl inside a node.
func (l *lab) sysctl(node, key string) string {
	l.t.Helper()
	var v string
	err := in(l.ns[node], func() error {
		b, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(key, ".", "/"))
		v = strings.Join(strings.Fields(string(b)), " ")
		return err
	})
	if err != nil {
		l.t.Fatal(err)
	}
	return v
}

// txBytes is an interface's transmitted byte counter.
func (l *lab) txBytes(node, iface string) uint64 {
	l.t.Helper()
	link, err := l.h[node].LinkByName(iface)
	if err != nil {
		l.t.Fatal(err)
	}
	return link.Attrs().Statistics.TxBytes
}

// shape puts a token bucket of rate bit/s with a queue of limit
// full-size packets on an interface's egress (tests only: shaping is
// package tc's).
func (l *lab) shape(node, iface string, rate uint64, limit uint32) {
	l.t.Helper()
	h := l.h[node]
	link, err := h.LinkByName(iface)
	if err != nil {
		l.t.Fatal(err)
	}
	bps := rate / 8
	tbf := &netlink.Tbf{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: link.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		Rate:       bps, Limit: limit * 1514, Buffer: netlink.Xmittime(bps, 4096),
	}
	if err := h.QdiscReplace(tbf); err != nil {
		l.t.Fatalf("tbf on %s:%s: %v", node, iface, err)
	}
}

// noGSO makes a node's interface send MTU-sized packets, so packet-count
// queues downstream count real packets.
func (l *lab) noGSO(node, iface string) {
	l.t.Helper()
	h := l.h[node]
	link, err := h.LinkByName(iface)
	if err != nil {
		l.t.Fatal(err)
	}
	if err := h.LinkSetGSOMaxSize(link, 1514); err != nil {
		l.t.Fatal(err)
	}
	if err := h.LinkSetGSOMaxSegs(link, 1); err != nil {
		l.t.Fatal(err)
	}
}
