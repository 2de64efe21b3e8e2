package testutil

import (
	"testing"

	"github.com/vishvananda/netlink"
)

// RemoveNewTaps deletes, when the test ends, the tap devices of the
// caller's network namespace that did not exist when it was called. A
// private ovs-vswitchd (the userspace datapath) makes persistent taps —
// its datapath's "ovs-netdev" and one per internal port — and leaves them
// when it stops with bridges still in its database (a test's decoy
// rows); nothing marks them, so no leak check sees them, and on a fresh
// machine the next user of a userspace datapath would find them. Call it
// before starting the pair (cleanups run last-registered first, so the
// pair has stopped when these go).
func RemoveNewTaps(t testing.TB) {
	t.Helper()
	before := map[string]bool{}
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatalf("list links: %v", err)
	}
	for _, l := range links {
		before[l.Attrs().Name] = true
	}
	t.Cleanup(func() {
		links, err := netlink.LinkList()
		if err != nil {
			t.Errorf("list links: %v", err)
			return
		}
		for _, l := range links {
			if before[l.Attrs().Name] || l.Type() != "tuntap" {
				continue
			}
			if err := netlink.LinkDel(l); err != nil {
				t.Errorf("delete tap %s the test's ovs-vswitchd left: %v", l.Attrs().Name, err)
			}
		}
	})
}
