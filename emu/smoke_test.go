package emu

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/emuctl/emuctl/topo"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: run `sudo make test`")
	}
}

// handLinear builds linear,n by hand (h_i - s_i, s_i - s_i+1).
func handLinear(lab string, n int) *topo.Spec {
	s := &topo.Spec{Name: lab, Routing: "none"}
	for i := 1; i <= n; i++ {
		s.Nodes = append(s.Nodes, topo.Node{Name: fmt.Sprintf("h%d", i), Kind: topo.KindHost})
	}
	for i := 1; i <= n; i++ {
		s.Nodes = append(s.Nodes, topo.Node{Name: fmt.Sprintf("s%d", i), Kind: topo.KindSwitch, SwitchType: topo.SwitchLinuxBridge})
	}
	add := func(a, ai, b, bi string, addr netip.Prefix) {
		s.Links = append(s.Links, topo.Link{A: topo.Endpoint{Node: a, Iface: ai}, B: topo.Endpoint{Node: b, Iface: bi}})
		li := len(s.Links) - 1
		na, nb := s.Node(a), s.Node(b)
		ia := topo.Interface{Name: ai, Link: li, MTU: 1500}
		if addr.IsValid() {
			ia.Addrs = []netip.Prefix{addr}
		}
		na.Interfaces = append(na.Interfaces, ia)
		nb.Interfaces = append(nb.Interfaces, topo.Interface{Name: bi, Link: li, MTU: 1500})
	}
	port := map[string]int{}
	next := func(sw string) string { port[sw]++; return fmt.Sprintf("%s-eth%d", sw, port[sw]) }
	for i := 1; i <= n; i++ {
		h, sw := fmt.Sprintf("h%d", i), fmt.Sprintf("s%d", i)
		add(h, h+"-eth0", sw, next(sw), netip.MustParsePrefix(fmt.Sprintf("10.0.0.%d/24", i)))
	}
	for i := 1; i < n; i++ {
		a, b := fmt.Sprintf("s%d", i), fmt.Sprintf("s%d", i+1)
		add(a, next(a), b, next(b), netip.Prefix{})
	}
	return s
}

func TestSmokeHandLinear(t *testing.T) {
	needRoot(t)
	spec := handLinear("tsmoke", 3)
	st, err := Deploy(context.Background(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Down("tsmoke", nil) })
	res := PingAll(context.Background(), st, 2, time.Second)
	for _, r := range res {
		if !r.OK {
			t.Errorf("%s -> %s (%s) failed", r.From, r.To, r.Addr)
		}
	}
	if err := Down("tsmoke", nil); err != nil {
		t.Fatal(err)
	}
}
