//go:build linux

package tc

import (
	"errors"
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ApplyKernel installs p on the egress of link, which lives in ns, with
// replace semantics: when the installed tree already has p's shape (same
// kinds, handles and parents) every qdisc is changed in place, so applying
// twice gives the same tree and parameters change at run time without
// losing queued packets; otherwise the root qdisc is replaced. An empty
// plan restores the device default. On failure the interface is left with
// its default qdisc and the error says which qdisc failed; a kernel
// without the qdisc kind gives an error wrapping ErrNotSupported.
//
// It takes the namespace rather than a *netlink.Handle because it speaks
// rtnetlink itself (see nlenc.go) and a Handle does not reveal its
// namespace; link.Attrs().Index must be the index inside ns.
func ApplyKernel(ns netns.NsHandle, link netlink.Link, p *KernelPlan) error {
	if p == nil {
		return errors.New("nil plan")
	}
	idx := link.Attrs().Index
	if idx <= 0 {
		return fmt.Errorf("link %q has no index (look it up in its namespace)", link.Attrs().Name)
	}
	c, err := dialTC(ns)
	if err != nil {
		return err
	}
	defer c.close()
	cur, err := c.list(idx)
	if err != nil {
		return err
	}
	if len(p.Qdiscs) == 0 {
		return c.deleteRoot(idx)
	}
	if sameShape(cur, p.Qdiscs) {
		changed := true
		for _, q := range p.Qdiscs {
			if err := c.modify(idx, q, 0); err != nil {
				changed = false // fall back to rebuilding the tree
				break
			}
		}
		if changed {
			return nil
		}
	}
	if err := c.deleteRoot(idx); err != nil {
		return err
	}
	for _, q := range p.Qdiscs {
		if err := c.modify(idx, q, unix.NLM_F_CREATE|unix.NLM_F_REPLACE); err != nil {
			_ = c.deleteRoot(idx)
			return explain(q, err)
		}
	}
	return nil
}

// ReplaceQdisc creates q on the interface ifindex of ns, or replaces the
// qdisc at q's parent (a single qdisc in someone else's tree, such as
// LeafQdisc under an Open vSwitch HTB class). A kernel without q's kind
// gives an error wrapping ErrNotSupported.
func ReplaceQdisc(ns netns.NsHandle, ifindex int, q Qdisc) error {
	c, err := dialTC(ns)
	if err != nil {
		return err
	}
	defer c.close()
	if err := c.modify(ifindex, q, unix.NLM_F_CREATE|unix.NLM_F_REPLACE); err != nil {
		return explain(q, err)
	}
	return nil
}

// explain wraps a failed qdisc creation; an unknown kind is ErrNotSupported.
func explain(q Qdisc, err error) error {
	where := fmt.Sprintf("%s %s parent %s", q.Kind, handleString(q.Handle), handleString(q.Parent))
	if errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("add %s: %w", where, notSupported(q.Kind, "the kernel does not know qdisc kind %q (%v)", q.Kind, err))
	}
	return fmt.Errorf("add %s: %w", where, err)
}

// sameShape reports whether the installed qdiscs (ours: non-zero handle,
// egress side) are exactly the plan's nodes.
func sameShape(cur, plan []Qdisc) bool {
	type key struct {
		kind           string
		handle, parent uint32
	}
	have := map[key]bool{}
	for _, q := range egress(cur) {
		have[key{q.Kind, q.Handle, q.Parent}] = true
	}
	if len(have) != len(plan) {
		return false
	}
	for _, q := range plan {
		if !have[key{q.Kind, q.Handle, q.Parent}] {
			return false
		}
	}
	return true
}

// egress drops the device's default qdiscs (handle 0) and ingress/clsact.
func egress(qs []Qdisc) []Qdisc {
	var out []Qdisc
	for _, q := range qs {
		if q.Handle == 0 || q.Parent == 0xFFFFFFF1 || q.Kind == "ingress" || q.Kind == "clsact" {
			continue
		}
		out = append(out, q)
	}
	return out
}

// tcConn is an rtnetlink socket inside one namespace.
type tcConn struct{ sh *nl.SocketHandle }

func dialTC(ns netns.NsHandle) (*tcConn, error) {
	s, err := nl.GetNetlinkSocketAt(ns, netns.None(), unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("rtnetlink socket: %w", err)
	}
	tv := unix.NsecToTimeval(int64(10 * time.Second))
	_ = s.SetSendTimeout(&tv)
	_ = s.SetReceiveTimeout(&tv)
	_ = s.SetExtAck(true)
	return &tcConn{sh: &nl.SocketHandle{Socket: s}}, nil
}

func (c *tcConn) close() { c.sh.Close() }

func (c *tcConn) do(typ, flags int, body []byte, resType uint16) ([][]byte, error) {
	req := nl.NewNetlinkRequest(typ, flags)
	req.AddRawData(body)
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: c.sh}
	return req.Execute(unix.NETLINK_ROUTE, resType)
}

func (c *tcConn) modify(ifindex int, q Qdisc, flags int) error {
	body, err := qdiscMsg(ifindex, q)
	if err != nil {
		return err
	}
	_, err = c.do(unix.RTM_NEWQDISC, flags|unix.NLM_F_ACK, body, 0)
	return err
}

// deleteRoot removes the root qdisc; a device already at its default is
// fine.
func (c *tcConn) deleteRoot(ifindex int) error {
	_, err := c.do(unix.RTM_DELQDISC, unix.NLM_F_ACK, tcmsg(ifindex, 0, handleRoot), 0)
	if err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("delete root qdisc: %w", err)
	}
	return nil
}

// list dumps the qdiscs of one interface, retrying interrupted dumps.
func (c *tcConn) list(ifindex int) ([]Qdisc, error) {
	var err error
	for try := 0; try < 5; try++ {
		var msgs [][]byte
		msgs, err = c.do(unix.RTM_GETQDISC, unix.NLM_F_DUMP, tcmsg(ifindex, 0, 0), unix.RTM_NEWQDISC)
		if errors.Is(err, nl.ErrDumpInterrupted) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("dump qdiscs: %w", err)
		}
		var out []Qdisc
		for _, m := range msgs {
			idx, q, perr := parseQdisc(m)
			if perr != nil {
				return nil, perr
			}
			if idx == ifindex {
				out = append(out, q)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("dump qdiscs: %w", err)
}
