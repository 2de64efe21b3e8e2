//go:build linux

package tc

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// DestPlan is the plan for frames leaving an interface towards one MAC
// address (a Wi-Fi access point's egress towards one of its stations).
type DestPlan struct {
	MAC  net.HardwareAddr
	Plan *KernelPlan
}

// perDestRate is the rate of the HTB classes that only sort frames: far
// above anything a plan shapes, so the plan's own qdiscs set the pace.
const perDestRate = 100e9 / 8 // bytes/s

// ApplyPerDestination installs a tree that gives each destination MAC its
// own plan on link's egress: an HTB root whose unclassified traffic is
// sent directly (broadcasts, other peers), one class per destination
// (rate far above the plan's, so it only sorts), a u32 filter on the
// Ethernet destination address, and under each class the plan's qdiscs
// with their handles moved to majors 0x100·(k+1)+n. An empty list
// removes the root qdisc. On error the root is removed again.
func ApplyPerDestination(ns netns.NsHandle, link netlink.Link, dests []DestPlan) error {
	idx := link.Attrs().Index
	if idx <= 0 {
		return fmt.Errorf("link %q has no index (look it up in its namespace)", link.Attrs().Name)
	}
	c, err := dialTC(ns)
	if err != nil {
		return err
	}
	defer c.close()
	if err := c.deleteRoot(idx); err != nil {
		return err
	}
	if len(dests) == 0 {
		return nil
	}
	if len(dests) > 0xff {
		return fmt.Errorf("%d destinations: at most 255", len(dests))
	}
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer h.Close()
	fail := func(err error) error {
		_ = c.deleteRoot(idx)
		return err
	}
	root := netlink.NewHtb(netlink.QdiscAttrs{LinkIndex: idx, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT})
	root.Defcls = 0 // unclassified frames go out directly
	if err := h.QdiscAdd(root); err != nil {
		return fail(explain(Qdisc{Kind: "htb"}, err))
	}
	for k, d := range dests {
		if len(d.MAC) != 6 {
			return fail(fmt.Errorf("destination %d: MAC %q is not an Ethernet address", k, d.MAC))
		}
		classID := netlink.MakeHandle(1, uint16(k+1))
		cls := netlink.NewHtbClass(netlink.ClassAttrs{LinkIndex: idx, Parent: netlink.MakeHandle(1, 0), Handle: classID},
			netlink.HtbClassAttrs{Rate: perDestRate, Ceil: perDestRate, Buffer: 200000, Cbuffer: 200000})
		if err := h.ClassAdd(cls); err != nil {
			return fail(fmt.Errorf("class for %s: %w", d.MAC, err))
		}
		// u32 offsets are relative to the network header: the Ethernet
		// destination is the 6 bytes at -14.
		m := d.MAC
		f := &netlink.U32{
			FilterAttrs: netlink.FilterAttrs{LinkIndex: idx, Parent: netlink.MakeHandle(1, 0), Priority: 1, Protocol: unix.ETH_P_ALL},
			ClassId:     classID,
			Sel: &netlink.TcU32Sel{
				Flags: netlink.TC_U32_TERMINAL,
				Nkeys: 2,
				Keys: []netlink.TcU32Key{
					{Mask: 0xffffffff, Val: uint32(m[0])<<24 | uint32(m[1])<<16 | uint32(m[2])<<8 | uint32(m[3]), Off: -14},
					{Mask: 0xffff0000, Val: uint32(m[4])<<24 | uint32(m[5])<<16, Off: -10},
				},
			},
		}
		if err := h.FilterAdd(f); err != nil {
			return fail(fmt.Errorf("filter for %s: %w", d.MAC, err))
		}
		if d.Plan == nil {
			continue
		}
		for _, q := range d.Plan.Qdiscs {
			q2 := q
			q2.Handle = moveMajor(q.Handle, k)
			if q.Parent == handleRoot {
				q2.Parent = classID
			} else {
				q2.Parent = moveMajor(q.Parent, k)
			}
			if err := c.modify(idx, q2, unix.NLM_F_CREATE|unix.NLM_F_EXCL); err != nil {
				return fail(fmt.Errorf("%s: %w", d.MAC, explain(q, err)))
			}
		}
	}
	return nil
}

// moveMajor puts a plan handle's major into destination k's range.
func moveMajor(h uint32, k int) uint32 {
	major := h >> 16
	return (uint32(0x100*(k+1))+major)<<16 | h&0xffff
}
