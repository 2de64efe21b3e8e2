package netcfg_test

import (
	"errors"
	"io"
	"net"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/netcfg"
	"github.com/emuctl/emuctl/topo"
)

const profileLab = `name: tncprof
nodes:
  h1:
    tcp:
      congestion_control: reno
      sack: false
      timestamps: false
      window_scaling: false
      ecn: 1
      rmem: [4096, 65536, 1048576]
      wmem: [4096, 32768, 2097152]
      recovery: 0
      early_retrans: 2
      backlog_ack_defer: false
      sysctls: {net.ipv4.tcp_fastopen: 3, net.ipv4.tcp_slow_start_after_idle: 0}
  h2: {}
links:
  - endpoints: [h1, h2]
`

// TestTCPProfileApplied: every profile key is written inside the node and
// read back; a node without tcp: still gets no_metrics_save; applying
// twice changes nothing; sockets opened in the node use the default CC.
func TestTCPProfileApplied(t *testing.T) {
	l := up(t, "tncprof.yaml", profileLab)
	a := l.applyAll()
	got := a["h1"].TCP
	want := &netcfg.TCPState{
		CongestionControl: "reno", SACK: false, Timestamps: 0, WindowScaling: false, ECN: 1, NoMetricsSave: true,
		Rmem: [3]int{4096, 65536, 1048576}, Wmem: [3]int{4096, 32768, 2097152}, Recovery: 0, EarlyRetrans: 2,
		Sysctls: []topo.KV{{Key: "net.ipv4.tcp_fastopen", Value: "3"}, {Key: "net.ipv4.tcp_slow_start_after_idle", Value: "0"}},
	}
	if _, err := os.Stat("/proc/sys/net/ipv4/tcp_backlog_ack_defer"); err == nil {
		want.BacklogACKDefer = new(bool) // Linux >= 6.7: written and read back; older kernels never defer
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("h1 read back\n got %+v\nwant %+v", got, want)
	}
	if v := l.sysctl("h1", "net.ipv4.tcp_sack"); v != "0" {
		t.Errorf("h1 tcp_sack = %s", v)
	}
	h2 := a["h2"].TCP
	if !h2.NoMetricsSave || l.sysctl("h2", "net.ipv4.tcp_no_metrics_save") != "1" {
		t.Errorf("h2 (no tcp: block) must get tcp_no_metrics_save=1, read back %+v", h2)
	}
	if !h2.SACK || h2.CongestionControl == "" {
		t.Errorf("h2 keeps kernel defaults, read back %+v", h2)
	}
	again := l.apply("h1")
	if !reflect.DeepEqual(again.TCP, got) {
		t.Errorf("second apply differs: %+v", again.TCP)
	}
	ns := l.ns["h1"]
	read, err := netcfg.ReadTCP(ns)
	if err != nil {
		t.Fatal(err)
	}
	read.Sysctls = got.Sysctls // ReadTCP knows only the profile's own keys
	if !reflect.DeepEqual(read, got) {
		t.Errorf("ReadTCP %+v != applied %+v", read, got)
	}
	// A socket opened in h1 takes the namespace default.
	ln := l.listen("h2", l.addr("h2", "h2-eth0"), false, nil)
	c := l.dial("h1", ln.Addr().String(), false, nil)
	if cc, err := netcfg.ConnCC(c); err != nil || cc != "reno" {
		t.Errorf("socket in h1: congestion control %q (%v), want reno", cc, err)
	}
}

// TestDefaultCCNotAllowed: a node default outside the root namespace's
// allowed list fails, naming the list and the ways out, at preflight (with
// file:line:col) and when applied.
func TestDefaultCCNotAllowed(t *testing.T) {
	host, err := netcfg.ReadHost()
	if err != nil {
		t.Fatal(err)
	}
	var cc string
	for _, a := range host.AvailableCC {
		if !slices.Contains(host.AllowedCC, a) {
			cc = a
		}
	}
	if cc == "" {
		t.Skipf("every available algorithm (%v) is allowed here", host.AvailableCC)
	}
	yaml := "name: tncnotallowed\nnodes:\n  h1:\n    tcp: {congestion_control: " + cc + "}\n  h2: {}\nlinks:\n  - endpoints: [h1, h2]\n"
	spec, err := topo.Load("na.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	perr := netcfg.Preflight(spec, netcfg.PreflightOptions{})
	if perr == nil || !strings.HasPrefix(perr.Error(), "na.yaml:4:31: nodes.h1.tcp.congestion_control: ") ||
		!strings.Contains(perr.Error(), strings.Join(host.AllowedCC, " ")) || !strings.Contains(perr.Error(), "--extend-allowed-cc") {
		t.Errorf("preflight: %v", perr)
	}
	if err := netcfg.Preflight(spec, netcfg.PreflightOptions{ExtendAllowedCC: true}); err != nil {
		t.Errorf("preflight with the opt-in: %v", err)
	}
	l := upSpec(t, spec)
	_, err = netcfg.ApplyTCP(l.ns["h1"], l.h["h1"], l.node("h1"))
	if !errors.Is(err, netcfg.ErrCCNotAllowed) || !strings.Contains(err.Error(), "--extend-allowed-cc") {
		t.Fatalf("apply %s: %v", cc, err)
	}
	t.Logf("refused as expected: %v", err)
}

// TestExtendAllowedCC: the opt-in appends the algorithm to the root's
// allowed list, the node default can then be set, and restoring removes
// exactly what was added.
func TestExtendAllowedCC(t *testing.T) {
	needRoot(t)
	host, err := netcfg.ReadHost()
	if err != nil {
		t.Fatal(err)
	}
	var cc string
	for _, a := range host.AvailableCC {
		if !slices.Contains(host.AllowedCC, a) {
			cc = a
		}
	}
	if cc == "" {
		t.Skip("every available algorithm is allowed here")
	}
	spec, err := topo.Load("ext.yaml", []byte("name: tncextend\nnodes:\n  h1:\n    tcp: {congestion_control: "+cc+"}\n  h2: {}\nlinks:\n  - endpoints: [h1, h2]\n"))
	if err != nil {
		t.Fatal(err)
	}
	need := netcfg.NeedsAllowedCC(spec, host.AllowedCC)
	if !reflect.DeepEqual(need, []string{cc}) {
		t.Fatalf("NeedsAllowedCC = %v", need)
	}
	added, err := netcfg.ExtendAllowedCC(need)
	t.Cleanup(func() {
		if err := netcfg.RestoreAllowedCC(added); err != nil {
			t.Errorf("restore: %v", err)
		}
		after, _ := netcfg.ReadHost()
		if !reflect.DeepEqual(after.AllowedCC, host.AllowedCC) {
			t.Errorf("allowed list after restore %v, before %v", after.AllowedCC, host.AllowedCC)
		}
	})
	if err != nil || !reflect.DeepEqual(added, []string{cc}) {
		t.Fatalf("ExtendAllowedCC: %v %v", added, err)
	}
	l := upSpec(t, spec)
	st, err := netcfg.ApplyTCP(l.ns["h1"], l.h["h1"], l.node("h1"))
	if err != nil || st.CongestionControl != cc {
		t.Fatalf("apply with the opt-in: %+v %v", st, err)
	}
}

// TestSocketCC: per socket, a root process may use any available
// algorithm whatever the namespace default and allowed list; accepted
// sockets inherit the listener's; unknown names are refused.
func TestSocketCC(t *testing.T) {
	l := up(t, "tncsock.yaml", "name: tncsock\nnodes: {h1: {tcp: {congestion_control: bbr}}, h2: {tcp: {congestion_control: reno}}}\nlinks: [{endpoints: [h1, h2]}]\n")
	l.applyAll()
	host, _ := netcfg.ReadHost()
	for _, cc := range host.AvailableCC {
		ln := l.listen("h2", l.addr("h2", "h2-eth0"), false, netcfg.CCControl(cc))
		acc := make(chan string, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				acc <- err.Error()
				return
			}
			defer c.Close()
			name, _ := netcfg.ConnCC(c.(*net.TCPConn))
			acc <- name
			io.Copy(io.Discard, c)
		}()
		c := l.dial("h1", ln.Addr().String(), false, netcfg.CCControl(cc))
		if got, err := netcfg.ConnCC(c); err != nil || got != cc {
			t.Errorf("client socket: %q %v, want %s", got, err, cc)
		}
		if got := <-acc; got != cc {
			t.Errorf("accepted socket: %q, want %s", got, cc)
		}
		c.Close()
	}
	c := l.dial("h1", l.listen("h2", l.addr("h2", "h2-eth0"), false, nil).Addr().String(), false, nil)
	raw, _ := c.SyscallConn()
	var serr error
	raw.Control(func(fd uintptr) { serr = netcfg.SetSocketCC(int(fd), "nosuchcc") })
	if !errors.Is(serr, netcfg.ErrCCNotAvailable) {
		t.Errorf("unknown algorithm: %v", serr)
	}
}

// TestGoodFileApplies deploys topo's tcp_mptcp example and applies it:
// defaults' tcp.routes entries apply where the route exists, the escape
// hatch sysctls are read back, endpoints: auto announces s's second
// address.
func TestGoodFileApplies(t *testing.T) {
	needRoot(t)
	spec, err := topo.LoadFile("../topo/testdata/good/tcp_mptcp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec.Name = "tncgood"
	l := upSpec(t, spec)
	a := l.applyAll()
	c := a["c"].TCP
	if c.CongestionControl != "reno" || len(c.Sysctls) != 2 || c.Sysctls[0] != (topo.KV{Key: "net.ipv4.tcp_fastopen", Value: "3"}) {
		t.Errorf("c: %+v", c)
	}
	var def, sub bool
	for _, r := range c.Routes {
		t.Logf("c route table %d %s dev %s: %s", r.Table, r.Dst, r.Dev, r)
		switch r.Dst {
		case "default":
			def = r.Quickack && r.InitCwnd == 20 && r.InitRwnd == 20
		case "10.9.2.0/24":
			sub = r.Congctl == "cubic" && r.InitCwnd == 20
		}
	}
	if !def || !sub {
		t.Errorf("c routes %+v", c.Routes)
	}
	if r := a["r1"].TCP.Routes; len(r) != 0 {
		t.Errorf("r1 has no default route; the optional entry must not apply: %+v", r)
	}
	if s := a["s"].MPTCP; len(s.Endpoints) != 1 || s.Endpoints[0].Addr.String() != "10.9.3.2" || len(s.Policy) != 0 {
		t.Errorf("s: %+v", s)
	}
}
