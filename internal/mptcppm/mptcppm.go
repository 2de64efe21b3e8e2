// Package mptcppm is a client for the in-kernel MPTCP path manager: the
// generic netlink family "mptcp_pm", what `ip mptcp` uses, for the limits
// and endpoints of one network namespace. Constants from
// include/uapi/linux/mptcp_pm.h.
package mptcppm

import (
	"errors"
	"fmt"
	"net"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

const (
	family = "mptcp_pm"

	cmdAddAddr   = 1
	cmdGetAddr   = 3 // doit, or dump with NLM_F_DUMP
	cmdFlush     = 4
	cmdSetLimits = 5
	cmdGetLimits = 6

	attrAddr        = 1 // nested; strict validation wants NLA_F_NESTED
	attrRcvAddAddrs = 2 // u32, "add_addr_accepted"
	attrSubflows    = 3 // u32

	addrFamily = 1 // u16
	addrID     = 2 // u8, 0 is the initial subflow's
	addrAddr4  = 3 // 4 bytes, network order
	addrAddr6  = 4 // 16 bytes
	addrPort   = 5 // u16, host order
	addrFlags  = 6 // u32
	addrIfIdx  = 7 // s32
)

// Endpoint flags (MPTCP_PM_ADDR_FLAG_*).
const (
	FlagSignal   = 1 << 0 // announce the address to the peer (server side)
	FlagSubflow  = 1 << 1 // open a subflow from the address (client side)
	FlagBackup   = 1 << 2
	FlagFullmesh = 1 << 3
	FlagImplicit = 1 << 4 // set by the kernel for addresses it used unasked
	FlagLaminar  = 1 << 5 // 6.18+
)

// flagTable has the endpoint flags by the names `ip mptcp` and topologies use.
var flagTable = []struct {
	name string
	bit  uint32
}{
	{"signal", FlagSignal},
	{"subflow", FlagSubflow},
	{"backup", FlagBackup},
	{"fullmesh", FlagFullmesh},
	{"implicit", FlagImplicit},
	{"laminar", FlagLaminar},
}

// FlagBits is the bit set of the named endpoint flags.
func FlagBits(names []string) (uint32, error) {
	var b uint32
	for _, n := range names {
		found := false
		for _, f := range flagTable {
			if f.name == n {
				b |= f.bit
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown MPTCP endpoint flag %q", n)
		}
	}
	return b, nil
}

// FlagNames names the flags in b; unknown bits are given in hex.
func FlagNames(b uint32) []string {
	var out []string
	for _, f := range flagTable {
		if b&f.bit != 0 {
			out = append(out, f.name)
			b &^= f.bit
		}
	}
	if b != 0 {
		out = append(out, fmt.Sprintf("0x%x", b))
	}
	return out
}

// Endpoint is one endpoint as mptcp_pm encodes it: `ip mptcp endpoint add
// ADDR [dev IF] [id ID] [port P] FLAGS`.
type Endpoint struct {
	ID      uint8 // 0: the kernel picks one
	Addr    net.IP
	Port    uint16
	Flags   uint32
	IfIndex int32
}

// ErrNoMPTCP is wrapped by errors from kernels without MPTCP.
var ErrNoMPTCP = errors.New("this kernel has no MPTCP (CONFIG_MPTCP)")

// Client is an mptcp_pm socket bound to one network namespace: endpoints
// and limits are per namespace.
type Client struct {
	c   *genetlink.Conn
	fam genetlink.Family
}

// Dial opens a generic netlink socket inside ns (0: the calling thread's
// namespace). Strict mode makes the kernel's extended ACK messages ("limit
// greater than maximum") part of the errors.
func Dial(ns netns.NsHandle) (*Client, error) {
	c, err := genetlink.Dial(&netlink.Config{NetNS: int(ns), Strict: true})
	if err != nil {
		return nil, fmt.Errorf("generic netlink: %w", err)
	}
	f, err := c.GetFamily(family)
	if err != nil {
		c.Close()
		if errors.Is(err, unix.ENOENT) {
			return nil, fmt.Errorf("genl family %s: %w", family, ErrNoMPTCP)
		}
		return nil, fmt.Errorf("genl family %s: %w", family, err)
	}
	return &Client{c: c, fam: f}, nil
}

// Close closes the socket; endpoints and limits stay with the namespace.
func (p *Client) Close() error { return p.c.Close() }

func (p *Client) do(cmd uint8, data []byte, flags netlink.HeaderFlags) ([]genetlink.Message, error) {
	return p.c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: p.fam.Version},
		Data:   data,
	}, p.fam.ID, flags)
}

func encodeEndpoint(ae *netlink.AttributeEncoder, ep Endpoint) error {
	if ep.ID != 0 {
		ae.Uint8(addrID, ep.ID)
	}
	if ep.Flags != 0 {
		ae.Uint32(addrFlags, ep.Flags)
	}
	if ep.IfIndex != 0 {
		ae.Int32(addrIfIdx, ep.IfIndex)
	}
	if ep.Port != 0 {
		ae.Uint16(addrPort, ep.Port)
	}
	if v4 := ep.Addr.To4(); v4 != nil {
		ae.Uint16(addrFamily, unix.AF_INET)
		ae.Bytes(addrAddr4, v4)
	} else if ep.Addr != nil {
		ae.Uint16(addrFamily, unix.AF_INET6)
		ae.Bytes(addrAddr6, ep.Addr.To16())
	}
	return nil
}

// endpointAttrs is the attributes of an address command carrying ep.
func endpointAttrs(ep Endpoint) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Nested(attrAddr, func(n *netlink.AttributeEncoder) error { return encodeEndpoint(n, ep) })
	return ae.Encode()
}

// AddEndpoint is `ip mptcp endpoint add ADDR [dev IF] [id ID] [port P] FLAGS`.
func (p *Client) AddEndpoint(ep Endpoint) error {
	b, err := endpointAttrs(ep)
	if err != nil {
		return err
	}
	_, err = p.do(cmdAddAddr, b, netlink.Request|netlink.Acknowledge)
	return err
}

// Flush is `ip mptcp endpoint flush`.
func (p *Client) Flush() error {
	_, err := p.do(cmdFlush, nil, netlink.Request|netlink.Acknowledge)
	return err
}

// SetLimits is `ip mptcp limits set subflows N add_addr_accepted M`.
func (p *Client) SetLimits(subflows, addAddrAccepted uint32) error {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(attrRcvAddAddrs, addAddrAccepted)
	ae.Uint32(attrSubflows, subflows)
	b, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = p.do(cmdSetLimits, b, netlink.Request|netlink.Acknowledge)
	return err
}

// Limits is `ip mptcp limits show`.
func (p *Client) Limits() (subflows, addAddrAccepted uint32, err error) {
	msgs, err := p.do(cmdGetLimits, nil, netlink.Request)
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
			case attrRcvAddAddrs:
				addAddrAccepted = ad.Uint32()
			}
		}
		if err := ad.Err(); err != nil {
			return 0, 0, err
		}
	}
	return subflows, addAddrAccepted, nil
}

// Endpoints is `ip mptcp endpoint show`.
func (p *Client) Endpoints() ([]Endpoint, error) {
	msgs, err := p.do(cmdGetAddr, nil, netlink.Request|netlink.Dump)
	if err != nil {
		return nil, err
	}
	return decodeEndpoints(msgs)
}

// decodeEndpoints decodes the endpoints of a get-address dump.
func decodeEndpoints(msgs []genetlink.Message) ([]Endpoint, error) {
	var out []Endpoint
	for _, m := range msgs {
		ad, err := netlink.NewAttributeDecoder(m.Data)
		if err != nil {
			return nil, err
		}
		for ad.Next() {
			if ad.Type() != attrAddr {
				continue
			}
			var ep Endpoint
			ad.Nested(func(n *netlink.AttributeDecoder) error {
				for n.Next() {
					switch n.Type() {
					case addrID:
						ep.ID = n.Uint8()
					case addrAddr4, addrAddr6:
						ep.Addr = net.IP(append([]byte(nil), n.Bytes()...))
					case addrPort:
						ep.Port = n.Uint16()
					case addrFlags:
						ep.Flags = n.Uint32()
					case addrIfIdx:
						ep.IfIndex = n.Int32()
					}
				}
				return nil
			})
			out = append(out, ep)
		}
		if err := ad.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
