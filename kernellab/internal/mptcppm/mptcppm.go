// Package mptcppm is a small client for the in-kernel MPTCP path manager
// (generic netlink family "mptcp_pm", what `ip mptcp` uses), enough for the
// kernel lab's MPTCP smoke test: limits and endpoints of one namespace.
// Constants from include/uapi/linux/mptcp_pm.h. It will move to emuctl's
// MPTCP support once that exists.
package mptcppm

import (
	"fmt"
	"net"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

const (
	family = "mptcp_pm"

	cmdAddAddr     = 1
	cmdFlushAddrs  = 4
	cmdSetLimits   = 5
	cmdGetLimits   = 6
	attrAddr       = 1 // nested; strict validation needs NLA_F_NESTED
	attrRcvAddAddr = 2 // u32 "add_addr_accepted"
	attrSubflows   = 3 // u32
	addrFamily     = 1 // u16
	addrID         = 2 // u8, 0 is the initial subflow's
	addrAddr4      = 3 // 4 bytes, network order
	addrAddr6      = 4 // 16 bytes
	addrFlags      = 6 // u32
	addrIfIndex    = 7 // s32
)

// Endpoint flags (MPTCP_PM_ADDR_FLAG_*).
const (
	FlagSignal  = 1 << 0 // announce the address to the peer (server side)
	FlagSubflow = 1 << 1 // open a subflow from the address (client side)
	FlagBackup  = 1 << 2
)

// Endpoint is `ip mptcp endpoint add ADDR [id ID] [dev IF] FLAGS`.
type Endpoint struct {
	ID      uint8
	Addr    net.IP
	Flags   uint32
	IfIndex int32
}

// Client is an mptcp_pm socket bound to one network namespace; endpoints
// and limits are per namespace.
type Client struct {
	c   *genetlink.Conn
	fam genetlink.Family
}

// Dial opens mptcp_pm in the namespace netnsFd (0: the calling thread's).
func Dial(netnsFd int) (*Client, error) {
	c, err := genetlink.Dial(&netlink.Config{NetNS: netnsFd, Strict: true})
	if err != nil {
		return nil, err
	}
	fam, err := c.GetFamily(family)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("generic netlink family %s (kernel without MPTCP?): %w", family, err)
	}
	return &Client{c: c, fam: fam}, nil
}

// Close closes the socket; endpoints and limits stay with the namespace.
func (cl *Client) Close() error { return cl.c.Close() }

func (cl *Client) do(cmd uint8, ae *netlink.AttributeEncoder) ([]genetlink.Message, error) {
	var b []byte
	if ae != nil {
		var err error
		if b, err = ae.Encode(); err != nil {
			return nil, err
		}
	}
	flags := netlink.Request
	if cmd != cmdGetLimits {
		flags |= netlink.Acknowledge
	}
	return cl.c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: cl.fam.Version},
		Data:   b,
	}, cl.fam.ID, flags)
}

// SetLimits is `ip mptcp limits set subflows N add_addr_accepted M` (each <= 8).
func (cl *Client) SetLimits(subflows, addAddrAccepted uint32) error {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(attrRcvAddAddr, addAddrAccepted)
	ae.Uint32(attrSubflows, subflows)
	_, err := cl.do(cmdSetLimits, ae)
	return err
}

// Limits is `ip mptcp limits show`.
func (cl *Client) Limits() (subflows, addAddrAccepted uint32, err error) {
	msgs, err := cl.do(cmdGetLimits, nil)
	if err != nil {
		return 0, 0, err
	}
	for _, m := range msgs {
		ad, err := netlink.NewAttributeDecoder(m.Data)
		if err != nil {
			return 0, 0, err
		}
		for ad.Next() {
			switch ad.Type() {
			case attrSubflows:
				subflows = ad.Uint32()
			case attrRcvAddAddr:
				addAddrAccepted = ad.Uint32()
			}
		}
		if err := ad.Err(); err != nil {
			return 0, 0, err
		}
	}
	return subflows, addAddrAccepted, nil
}

// AddEndpoint is `ip mptcp endpoint add`.
func (cl *Client) AddEndpoint(ep Endpoint) error {
	ae := netlink.NewAttributeEncoder()
	ae.Nested(attrAddr, func(n *netlink.AttributeEncoder) error {
		if ep.ID != 0 {
			n.Uint8(addrID, ep.ID)
		}
		if ep.Flags != 0 {
			n.Uint32(addrFlags, ep.Flags)
		}
		if ep.IfIndex != 0 {
			n.Int32(addrIfIndex, ep.IfIndex)
		}
		if v4 := ep.Addr.To4(); v4 != nil {
			n.Uint16(addrFamily, unix.AF_INET)
			n.Bytes(addrAddr4, v4)
		} else {
			n.Uint16(addrFamily, unix.AF_INET6)
			n.Bytes(addrAddr6, ep.Addr.To16())
		}
		return nil
	})
	_, err := cl.do(cmdAddAddr, ae)
	return err
}

// Flush is `ip mptcp endpoint flush`.
func (cl *Client) Flush() error {
	_, err := cl.do(cmdFlushAddrs, nil)
	return err
}
