package emu

import (
	"errors"
	"fmt"
	"time"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// OVS's linux-htb QoS builds, on a port's egress, the qdisc 1: (htb,
// default class 1:1), a root class 1:fffe at the QoS max-rate, and one
// class 1:(q+1) per queue q. It has no setting for the queue length: each
// class gets the kernel's default leaf, a pfifo as long as the device's
// txqueuelen (1000 on a veth). emuctl owns the leaf under each class: a
// pfifo of queue_limit packets with handle (0x100+q):. OVS changes its
// classes in place ("tc class replace") when it reconfigures, which keeps
// their leaves; it rebuilds the tree only when the QoS type changes, and
// EnsureOVSQueues puts the leaves back then.

// leafHandle is the handle of emuctl's FIFO under queue q's class.
func leafHandle(q int) uint32 { return uint32(0x100+q) << 16 }

// queueClass is OVS's HTB class of queue q.
func queueClass(q int) uint32 { return 1<<16 | uint32(q+1) }

// installLeaves puts, under the HTB class of every queue q, the queue
// discipline leaves[q] (codel, fq_codel, ... with its limit) or else a
// pfifo of limits[q] packets (0 keeps the kernel's default), on the
// device dev of the root namespace. OVS creates its classes
// asynchronously after a configuration is applied, so a missing class is
// waited for briefly.
func installLeaves(root *netlink.Handle, dev string, limits []int, leaves []*tc.Dir) error {
	leaf := func(q int) *tc.Dir {
		if q < len(leaves) {
			return leaves[q]
		}
		return nil
	}
	need := false
	for q, l := range limits {
		need = need || l > 0 || leaf(q) != nil
	}
	if !need {
		return nil
	}
	link, err := root.LinkByName(dev)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		classes, err := root.ClassList(link, 0)
		if err != nil {
			return fmt.Errorf("list classes: %w", err)
		}
		have := map[uint32]bool{}
		for _, c := range classes {
			have[c.Attrs().Handle] = true
		}
		missing := -1
		for q, l := range limits {
			if (l > 0 || leaf(q) != nil) && !have[queueClass(q)] {
				missing = q
				break
			}
		}
		if missing < 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("OVS did not create the HTB class 1:%x of queue %d", missing+1, missing)
		}
		time.Sleep(20 * time.Millisecond)
	}
	sh, err := rootTCSocket()
	if err != nil {
		return err
	}
	defer sh.Close()
	for q, l := range limits {
		if d := leaf(q); d != nil {
			qd, err := tc.LeafQdisc(*d, link.Attrs().MTU, queueClass(q), leafHandle(q))
			if err == nil {
				err = tc.ReplaceQdisc(hostNetns, link.Attrs().Index, qd)
			}
			if err != nil {
				return fmt.Errorf("queue %d: %s under class 1:%x: %w", q, d.AQM.Name(), q+1, err)
			}
			continue
		}
		if l <= 0 {
			continue
		}
		if err := replacePfifo(sh, link.Attrs().Index, queueClass(q), leafHandle(q), uint32(l)); err != nil {
			return fmt.Errorf("queue %d: pfifo limit %d under class 1:%x: %w", q, l, q+1, err)
		}
	}
	return nil
}

// ovsLeafDir is queue k's discipline leaf as a tc.Dir (the class rate,
// the limit, the discipline), nil for a plain FIFO.
func ovsLeafDir(q *topo.OVSQoS, k int) *tc.Dir {
	l := q.Leaf(k)
	if l == nil || l.DisciplineName() == topo.QueueDropTail {
		return nil
	}
	rate := q.MaxRate
	if k < len(q.Queues) && q.Queues[k].MaxRate > 0 {
		rate = q.Queues[k].MaxRate
	}
	return &tc.Dir{Rate: rate, QueuePackets: l.Packets, QueueBytes: l.Bytes, AQM: QueueAQM(l, 1500)}
}

func rootTCSocket() (*nl.SocketHandle, error) {
	s, err := nl.GetNetlinkSocketAt(hostNetns, netns.None(), unix.NETLINK_ROUTE)
	if err != nil {
		return nil, err
	}
	tv := unix.NsecToTimeval(int64(5 * time.Second))
	s.SetSendTimeout(&tv)
	s.SetReceiveTimeout(&tv)
	return &nl.SocketHandle{Socket: s}, nil
}

// replacePfifo creates or replaces a pfifo (struct tc_fifo_qopt: one u32
// limit in packets) at parent with handle.
func replacePfifo(sh *nl.SocketHandle, ifindex int, parent, handle, limit uint32) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWQDISC, unix.NLM_F_CREATE|unix.NLM_F_REPLACE|unix.NLM_F_ACK)
	req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(ifindex), Handle: handle, Parent: parent})
	req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated("pfifo")))
	opt := make([]byte, 4)
	nl.NativeEndian().PutUint32(opt, limit)
	req.AddData(nl.NewRtAttr(nl.TCA_OPTIONS, opt))
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: sh}
	_, err := req.Execute(unix.NETLINK_ROUTE, 0)
	return err
}

// ovsQueueStats reads the counters of a port's OVS queues from the kernel.
func ovsQueueStats(root *netlink.Handle, dev string, limits []int) ([]QueueStats, error) {
	link, err := root.LinkByName(dev)
	if err != nil {
		return nil, err
	}
	classes, err := root.ClassList(link, 0)
	if err != nil {
		return nil, err
	}
	qdiscs, err := root.QdiscList(link)
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return nil, err
	}
	var out []QueueStats
	for q := range limits {
		s := QueueStats{Queue: q, Class: fmt.Sprintf("1:%x", q+1), LeafLimit: limits[q]}
		for _, c := range classes {
			if c.Attrs().Handle != queueClass(q) {
				continue
			}
			s.ClassFound = true
			if st := c.Attrs().Statistics; st != nil {
				if st.Basic != nil {
					s.Bytes, s.Packets = st.Basic.Bytes, st.Basic.Packets
				}
				if st.Queue != nil {
					s.Drops, s.Overlimits = st.Queue.Drops, st.Queue.Overlimits
				}
			}
		}
		for _, qd := range qdiscs {
			a := qd.Attrs()
			if a.Parent != queueClass(q) {
				continue
			}
			s.Leaf = qd.Type()
			s.LeafByEmu = a.Handle == leafHandle(q)
			if a.Statistics != nil && a.Statistics.Queue != nil {
				s.Backlog, s.QLen, s.LeafDrops = a.Statistics.Queue.Backlog, a.Statistics.Queue.Qlen, a.Statistics.Queue.Drops
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// checkPolicing verifies that OVS's ingress policer is in place: OVS puts
// it on the port as an ingress qdisc with a policing filter (cls_basic or
// matchall with act_police) and only logs a warning when the kernel lacks
// them, which would leave the port unpoliced.
func checkPolicing(root *netlink.Handle, dev string) error {
	link, err := root.LinkByName(dev)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		fs, err := root.FilterList(link, netlink.HANDLE_MIN_INGRESS)
		if err == nil && len(fs) > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			//lint:ignore ST1005 a proper noun
			return errors.New("Open vSwitch could not install its policer: this kernel lacks the tc police action or its classifier (act_police, cls_basic/cls_matchall); the lab would run unpoliced")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
