package emu

import (
	"context"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
)

// extFixture makes a veth pair: extA stays in the root namespace with an
// address, alias and MTU of its own (the "real adapter"); extB lives in a
// test namespace with peerAddr, standing for whatever the adapter reaches.
func extFixture(t *testing.T, peerAddr string) {
	t.Helper()
	sh(t, "ip", "netns", "add", "textpeer")
	t.Cleanup(func() { exec.Command("ip", "netns", "del", "textpeer").Run() })
	sh(t, "ip", "link", "add", "extA", "type", "veth", "peer", "name", "extB")
	t.Cleanup(func() { exec.Command("ip", "link", "del", "extA").Run() })
	sh(t, "ip", "link", "set", "extB", "netns", "textpeer")
	sh(t, "ip", "-n", "textpeer", "addr", "add", peerAddr, "dev", "extB")
	sh(t, "ip", "-n", "textpeer", "link", "set", "extB", "up")
	sh(t, "ip", "addr", "add", "10.66.0.1/24", "dev", "extA")
	sh(t, "ip", "link", "set", "extA", "mtu", "1400", "alias", "user-alias", "up")
}

func requireExtRestored(t *testing.T) {
	t.Helper()
	l, err := netlink.LinkByName("extA")
	if err != nil {
		t.Fatalf("extA not back in the root namespace: %v", err)
	}
	a := l.Attrs()
	if a.MTU != 1400 || a.Alias != "user-alias" || a.Flags&1 == 0 {
		t.Errorf("extA not restored: mtu %d alias %q flags %v", a.MTU, a.Alias, a.Flags)
	}
	addrs, _ := netlink.AddrList(l, netlink.FAMILY_V4)
	if len(addrs) != 1 || addrs[0].IPNet.String() != "10.66.0.1/24" {
		t.Errorf("extA addresses not restored: %v", addrs)
	}
}

func TestExternalIntoHost(t *testing.T) {
	needRoot(t)
	extFixture(t, "10.77.0.2/24")
	spec := gen(t, "single,2", "text")
	h1 := spec.Node("h1")
	h1.Interfaces = append(h1.Interfaces, topo.Interface{Name: "eth9", Link: -1,
		Addrs: []netip.Prefix{netip.MustParsePrefix("10.77.0.1/24")}, External: &topo.External{HostName: "extA"}})

	_, err := Deploy(context.Background(), spec, Options{})
	if err == nil || !strings.Contains(err.Error(), "--allow-external") {
		t.Fatalf("want refusal without opt-in, got %v", err)
	}
	requireGone(t, "text")
	requireExtRestored(t)

	up(t, spec, Options{AllowExternal: true})
	if _, err := netlink.LinkByName("extA"); err == nil {
		t.Error("extA still in the root namespace")
	}
	ok := false
	for i := 0; i < 3 && !ok; i++ {
		_, err := Ping(context.Background(), "text", "h1", netip.MustParseAddr("10.77.0.2"), time.Second)
		ok = err == nil
	}
	if !ok {
		t.Fatal("h1 cannot reach the far side of its real adapter")
	}
	if err := Down("text", nil); err != nil {
		t.Fatal(err)
	}
	requireGone(t, "text")
	requireExtRestored(t)
}

func TestExternalOnSwitch(t *testing.T) {
	needRoot(t)
	spec := gen(t, "single,2", "textsw")
	addr, _ := PrimaryAddr(spec.Node("h1"))
	var bits int
	for _, p := range spec.Node("h1").Interfaces[0].Addrs {
		if p.Addr() == addr {
			bits = p.Bits()
		}
	}
	peer := netip.PrefixFrom(netip.MustParseAddr("10.0.0.200"), bits)
	extFixture(t, peer.String())
	s1 := spec.Node("s1")
	s1.Interfaces = append(s1.Interfaces, topo.Interface{Name: "s1-ext", Link: -1, External: &topo.External{HostName: "extA"}})
	up(t, spec, Options{AllowExternal: true})
	ok := false
	for i := 0; i < 3 && !ok; i++ {
		_, err := Ping(context.Background(), "textsw", "h2", peer.Addr(), time.Second)
		ok = err == nil
	}
	if !ok {
		t.Fatal("h2 cannot reach a host behind the switch's real adapter")
	}
	if err := Down("textsw", nil); err != nil {
		t.Fatal(err)
	}
	requireExtRestored(t)
}

func TestExternalDefaultRouteRefused(t *testing.T) {
	needRoot(t)
	routes, _ := netlink.RouteList(nil, netlink.FAMILY_V4)
	var dev string
	for _, r := range routes {
		if r.Dst == nil || isDefault(r.Dst) {
			if l, err := netlink.LinkByIndex(r.LinkIndex); err == nil {
				dev = l.Attrs().Name
			}
		}
	}
	if dev == "" {
		t.Skip("this machine has no default route")
	}
	spec := gen(t, "single,2", "textdef")
	h1 := spec.Node("h1")
	h1.Interfaces = append(h1.Interfaces, topo.Interface{Name: "eth9", Link: -1, External: &topo.External{HostName: dev}})
	_, err := Deploy(context.Background(), spec, Options{AllowExternal: true})
	if err == nil || !strings.Contains(err.Error(), "default route") {
		t.Fatalf("want refusal for %s, got %v", dev, err)
	}
	requireGone(t, "textdef")
	if _, err := netlink.LinkByName(dev); err != nil {
		t.Fatalf("%s disappeared: %v", dev, err)
	}
}
