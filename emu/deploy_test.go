package emu

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/topo"
)

func TestLinearPingAllAndDown(t *testing.T) {
	needRoot(t)
	spec := gen(t, "linear,4", "tlin")
	st := up(t, spec, Options{})
	if st.Status != StatusUp {
		t.Fatalf("status %q", st.Status)
	}
	for _, n := range spec.Nodes {
		p := filepath.Join(NetnsDir, topo.Namespace("tlin", n.Name))
		if _, err := os.Stat(p); err != nil {
			t.Errorf("namespace of %s not visible to ip netns: %v", n.Name, err)
		}
	}
	requirePingAll(t, st)
	if err := Down("tlin", nil); err != nil {
		t.Fatal(err)
	}
	requireGone(t, "tlin")
	if err := Down("tlin", nil); err != nil {
		t.Fatalf("second down must be a no-op: %v", err)
	}
}

func TestTreePingAll(t *testing.T) {
	needRoot(t)
	st := up(t, gen(t, "tree,2,3", "ttree"), Options{})
	requirePingAll(t, st)
}

func TestRoutedAutoRoutingV4V6(t *testing.T) {
	needRoot(t)
	spec, err := topo.LoadFile("../topologies/routed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	topo.Rename(spec, "trouted")
	st := up(t, spec, Options{})
	requirePingAll(t, st)
	// every host reaches every other host's IPv6 address too
	var v6 int
	for _, a := range spec.Hosts() {
		for _, b := range spec.Hosts() {
			if a == b {
				continue
			}
			for _, ifc := range b.Interfaces {
				for _, p := range ifc.Addrs {
					if !p.Addr().Is6() {
						continue
					}
					v6++
					var ok bool
					for try := 0; try < 3 && !ok; try++ {
						_, err := Ping(context.Background(), "trouted", a.Name, p.Addr(), time.Second)
						ok = err == nil
					}
					if !ok {
						t.Errorf("ping6 %s -> %s %s failed", a.Name, b.Name, p.Addr())
					}
				}
			}
		}
	}
	if v6 == 0 {
		t.Fatal("routed.yaml should give hosts IPv6 addresses (pool6)")
	}
	// routers forward, hosts do not
	for _, n := range spec.Nodes {
		v, err := ReadSysctl(topo.Namespace("trouted", n.Name), "net.ipv4.ip_forward")
		if err != nil {
			t.Fatal(err)
		}
		want := "0"
		if n.Kind == topo.KindRouter {
			want = "1"
		}
		if n.Kind != topo.KindSwitch && v != want {
			t.Errorf("%s ip_forward=%s, want %s", n.Name, v, want)
		}
	}
}

func TestTwoLabsSameNodeNames(t *testing.T) {
	needRoot(t)
	a := up(t, gen(t, "single,3", "ttwoa"), Options{})
	b := up(t, gen(t, "single,3", "ttwob"), Options{})
	requirePingAll(t, a)
	requirePingAll(t, b)
}

func TestSysctlsAppliedAndBadOneRollsBack(t *testing.T) {
	needRoot(t)
	spec := gen(t, "single,2", "tsys")
	spec.Node("h1").Sysctls = []topo.KV{{Key: "net.ipv4.tcp_sack", Value: "0"}, {Key: "net.ipv4.tcp_no_metrics_save", Value: "1"}}
	up(t, spec, Options{})
	for k, want := range map[string]string{"net.ipv4.tcp_sack": "0", "net.ipv4.tcp_no_metrics_save": "1"} {
		got, err := ReadSysctl("tsys.h1", k)
		if err != nil || got != want {
			t.Errorf("h1 %s = %q (%v), want %q", k, got, err, want)
		}
	}
	if got, _ := ReadSysctl("tsys.h2", "net.ipv4.tcp_sack"); got != "1" {
		t.Errorf("h2 tcp_sack = %q: a node's sysctl leaked into another", got)
	}

	bad := gen(t, "single,2", "tsysbad")
	bad.Node("h2").Sysctls = []topo.KV{{Key: "net.ipv4.no_such_setting", Value: "1"}}
	_, err := Deploy(context.Background(), bad, Options{})
	if err == nil || !strings.Contains(err.Error(), "no_such_setting") {
		t.Fatalf("want an error naming the sysctl, got %v", err)
	}
	requireGone(t, "tsysbad")
}

func TestExistingLabAndNamespaceRefused(t *testing.T) {
	needRoot(t)
	spec := gen(t, "single,2", "tdup")
	up(t, spec, Options{})
	_, err := Deploy(context.Background(), gen(t, "single,2", "tdup"), Options{})
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second deploy of the same lab: %v", err)
	}
}

func TestAddressesAndMACsAsSpecified(t *testing.T) {
	needRoot(t)
	spec := gen(t, "single,2", "taddr")
	up(t, spec, Options{})
	h, err := nodeHandle("taddr", "h1")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ifc := spec.Node("h1").Interfaces[0]
	l, err := h.LinkByName(ifc.Name)
	if err != nil {
		t.Fatal(err)
	}
	if l.Attrs().HardwareAddr.String() != ifc.MAC {
		t.Errorf("MAC %s, want %s", l.Attrs().HardwareAddr, ifc.MAC)
	}
	if l.Attrs().Alias != Marker("taddr") {
		t.Errorf("alias %q, want marker", l.Attrs().Alias)
	}
	addrs, _ := h.AddrList(l, 0)
	var got []netip.Prefix
	for _, a := range addrs {
		p, _ := netip.ParsePrefix(a.IPNet.String())
		got = append(got, p)
	}
	for _, want := range ifc.Addrs {
		found := false
		for _, g := range got {
			if g == want {
				found = true
			}
		}
		if !found {
			t.Errorf("address %s missing on h1 (have %v)", want, got)
		}
	}
}

// An OVS datapath pin this kernel cannot honour is refused before any
// change (ovs_test.go has the OVS switches that come up).
func TestOVSImpossibleDatapathRefusedBeforeAnyChange(t *testing.T) {
	needRoot(t)
	if kernelDatapath() {
		t.Skip("this kernel has the openvswitch datapath: the pin is possible")
	}
	spec, err := topo.Load("tovs.yaml", []byte("name: tovs\nnodes: {h1: {}, h2: {}, s1: {kind: switch, type: ovs, datapath: kernel}}\nlinks: [{endpoints: [h1, s1]}, {endpoints: [h2, s1]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Deploy(context.Background(), spec, Options{})
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") || !strings.Contains(err.Error(), "datapath: kernel") {
		t.Fatalf("want a preflight refusal of datapath: kernel, got %v", err)
	}
	requireGone(t, "tovs")
}
