//go:build linux

package tc

import (
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil/netlab"
	"github.com/vishvananda/netlink"
)

// Per-destination plans on one egress (a Wi-Fi AP's downlink to each of
// its stations, here a host sending through a bridge to two peers): each
// destination gets its own rate, and traffic the filters do not match
// (ARP broadcasts) goes out unshaped.
func TestApplyPerDestination(t *testing.T) {
	netlab.SkipInLab(t)
	requireRoot(t)
	h1, sw, h2, h3 := netlab.NewNode(t, "h1"), netlab.NewNode(t, "sw"), netlab.NewNode(t, "h2"), netlab.NewNode(t, "h3")
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}
	if err := sw.H.LinkAdd(br); err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		n          *netlab.Node
		name, port string
	}{{h1, "pd1", "sw1"}, {h2, "pd2", "sw2"}, {h3, "pd3", "sw3"}} {
		netlab.Veth(t, x.n, x.name, sw, x.port)
		if err := sw.H.LinkSetMaster(sw.Link(t, x.port), br); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.H.LinkSetUp(sw.Link(t, "br0")); err != nil {
		t.Fatal(err)
	}
	h1.Addr(t, "pd1", "10.61.0.1/24")
	h2.Addr(t, "pd2", "10.61.0.2/24")
	h3.Addr(t, "pd3", "10.61.0.3/24")
	link := h1.Link(t, "pd1")
	if err := SetGSOLimits(h1.H, link); err != nil {
		t.Fatal(err)
	}
	p5 := mustPlan(t)(PlanShaper(Dir{Rate: 5e6, QueuePackets: 50}, 1500))
	p20 := mustPlan(t)(PlanShaper(Dir{Rate: 20e6, QueuePackets: 50}, 1500))
	dests := []DestPlan{{MAC: h2.Link(t, "pd2").Attrs().HardwareAddr, Plan: p5}, {MAC: h3.Link(t, "pd3").Attrs().HardwareAddr, Plan: p20}}
	if err := ApplyPerDestination(h1.NS, link, dests); err != nil {
		t.Fatal(err)
	}
	text, err := ReadBack(h1.NS, link)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("installed:\n%s", text)
	g2 := netlab.Goodput(t, h1, h2, "10.61.0.2", time.Second, 2*time.Second)
	g3 := netlab.Goodput(t, h1, h3, "10.61.0.3", time.Second, 2*time.Second)
	t.Logf("h1 -> h2 (5 Mbit/s plan): %.3f Mbit/s = %.3f x capacity; h1 -> h3 (20 Mbit/s plan): %.3f Mbit/s = %.3f x capacity",
		g2/1e6, g2/netlab.Capacity(5e6), g3/1e6, g3/netlab.Capacity(20e6))
	if r := g2 / netlab.Capacity(5e6); r < 0.93 || r > 1.02 {
		t.Errorf("h1 -> h2: %.3f x the 5 Mbit/s capacity", r)
	}
	if r := g3 / netlab.Capacity(20e6); r < 0.93 || r > 1.02 {
		t.Errorf("h1 -> h3: %.3f x the 20 Mbit/s capacity", r)
	}
	// removed: back to the default, full speed
	if err := ApplyPerDestination(h1.NS, link, nil); err != nil {
		t.Fatal(err)
	}
	if tr, _ := ReadTree(h1.NS, link); len(tr) != 0 {
		t.Errorf("after removal:\n%s", formatTree(tr))
	}
	if g := netlab.Goodput(t, h1, h2, "10.61.0.2", 500*time.Millisecond, time.Second); g < 2*netlab.Capacity(20e6) {
		t.Errorf("after removal h1 -> h2 still shaped: %.1f Mbit/s", g/1e6)
	}
}
