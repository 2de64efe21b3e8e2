package netcfg

import (
	"errors"
	"fmt"
	"net"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The in-kernel MPTCP path manager's generic netlink family ("mptcp_pm",
// what `ip mptcp` uses). Constants from include/uapi/linux/mptcp_pm.h.
const (
	pmFamily = "mptcp_pm"

	pmCmdAddAddr   = 1
	pmCmdGetAddr   = 3 // doit, or dump with NLM_F_DUMP
	pmCmdFlush     = 4
	pmCmdSetLimits = 5
	pmCmdGetLimits = 6

	pmAttrAddr        = 1 // nested; strict validation wants NLA_F_NESTED
	pmAttrRcvAddAddrs = 2 // u32, "add_addr_accepted"
	pmAttrSubflows    = 3 // u32

	pmAddrFamily = 1 // u16
	pmAddrID     = 2 // u8, 0 is the initial subflow's
	pmAddrAddr4  = 3 // 4 bytes, network order
	pmAddrAddr6  = 4 // 16 bytes
	pmAddrPort   = 5 // u16, host order
	pmAddrFlags  = 6 // u32
	pmAddrIfIdx  = 7 // s32
)

// Endpoint flags (MPTCP_PM_ADDR_FLAG_*), by their topology names.
var pmFlags = []struct {
	name string
	bit  uint32
}{
	{"signal", 1 << 0},
	{"subflow", 1 << 1},
	{"backup", 1 << 2},
	{"fullmesh", 1 << 3},
	{"implicit", 1 << 4}, // set by the kernel for addresses it used unasked
	{"laminar", 1 << 5},  // 6.18+
}

func flagBits(names []string) (uint32, error) {
	var b uint32
	for _, n := range names {
		found := false
		for _, f := range pmFlags {
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

func flagNames(b uint32) []string {
	var out []string
	for _, f := range pmFlags {
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

// pmEndpoint is one endpoint as mptcp_pm encodes it.
type pmEndpoint struct {
	ID      uint8
	Addr    net.IP
	Port    uint16
	Flags   uint32
	IfIndex int32
}

// pmClient talks to mptcp_pm in one namespace: endpoints and limits are
// per namespace.
type pmClient struct {
	c   *genetlink.Conn
	fam genetlink.Family
}

// ErrNoMPTCP is wrapped by errors from kernels without MPTCP.
var ErrNoMPTCP = errors.New("this kernel has no MPTCP (CONFIG_MPTCP)")

// dialPM opens a generic netlink socket inside ns. Strict mode makes the
// kernel's extended ACK messages ("limit greater than maximum") part of
// the errors.
func dialPM(ns netns.NsHandle) (*pmClient, error) {
	c, err := genetlink.Dial(&netlink.Config{NetNS: int(ns), Strict: true})
	if err != nil {
		return nil, fmt.Errorf("generic netlink: %w", err)
	}
	f, err := c.GetFamily(pmFamily)
	if err != nil {
		c.Close()
		if errors.Is(err, unix.ENOENT) {
			return nil, fmt.Errorf("genl family %s: %w", pmFamily, ErrNoMPTCP)
		}
		return nil, fmt.Errorf("genl family %s: %w", pmFamily, err)
	}
	return &pmClient{c: c, fam: f}, nil
}

func (p *pmClient) close() error { return p.c.Close() }

func (p *pmClient) do(cmd uint8, data []byte, flags netlink.HeaderFlags) ([]genetlink.Message, error) {
	return p.c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: p.fam.Version},
		Data:   data,
	}, p.fam.ID, flags)
}

func encodeEndpoint(ae *netlink.AttributeEncoder, ep pmEndpoint) error {
	if ep.ID != 0 {
		ae.Uint8(pmAddrID, ep.ID)
	}
	if ep.Flags != 0 {
		ae.Uint32(pmAddrFlags, ep.Flags)
	}
	if ep.IfIndex != 0 {
		ae.Int32(pmAddrIfIdx, ep.IfIndex)
	}
	if ep.Port != 0 {
		ae.Uint16(pmAddrPort, ep.Port)
	}
	if v4 := ep.Addr.To4(); v4 != nil {
		ae.Uint16(pmAddrFamily, unix.AF_INET)
		ae.Bytes(pmAddrAddr4, v4)
	} else if ep.Addr != nil {
		ae.Uint16(pmAddrFamily, unix.AF_INET6)
		ae.Bytes(pmAddrAddr6, ep.Addr.To16())
	}
	return nil
}

// addEndpoint is `ip mptcp endpoint add ADDR [dev IF] [id ID] [port P] FLAGS`.
func (p *pmClient) addEndpoint(ep pmEndpoint) error {
	ae := netlink.NewAttributeEncoder()
	ae.Nested(pmAttrAddr, func(n *netlink.AttributeEncoder) error { return encodeEndpoint(n, ep) })
	b, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = p.do(pmCmdAddAddr, b, netlink.Request|netlink.Acknowledge)
	return err
}

// flush is `ip mptcp endpoint flush`.
func (p *pmClient) flush() error {
	_, err := p.do(pmCmdFlush, nil, netlink.Request|netlink.Acknowledge)
	return err
}

// setLimits is `ip mptcp limits set subflows N add_addr_accepted M`.
func (p *pmClient) setLimits(subflows, accepted uint32) error {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(pmAttrRcvAddAddrs, accepted)
	ae.Uint32(pmAttrSubflows, subflows)
	b, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = p.do(pmCmdSetLimits, b, netlink.Request|netlink.Acknowledge)
	return err
}

// limits is `ip mptcp limits show`.
func (p *pmClient) limits() (subflows, accepted uint32, err error) {
	msgs, err := p.do(pmCmdGetLimits, nil, netlink.Request)
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
			case pmAttrSubflows:
				subflows = ad.Uint32()
			case pmAttrRcvAddAddrs:
				accepted = ad.Uint32()
			}
		}
		if err := ad.Err(); err != nil {
			return 0, 0, err
		}
	}
	return subflows, accepted, nil
}

// endpoints is `ip mptcp endpoint show`.
func (p *pmClient) endpoints() ([]pmEndpoint, error) {
	msgs, err := p.do(pmCmdGetAddr, nil, netlink.Request|netlink.Dump)
	if err != nil {
		return nil, err
	}
	var out []pmEndpoint
	for _, m := range msgs {
		ad, err := netlink.NewAttributeDecoder(m.Data)
		if err != nil {
			return nil, err
		}
		for ad.Next() {
			if ad.Type() != pmAttrAddr {
				continue
			}
			var ep pmEndpoint
			ad.Nested(func(n *netlink.AttributeDecoder) error {
				for n.Next() {
					switch n.Type() {
					case pmAddrID:
						ep.ID = n.Uint8()
					case pmAddrAddr4, pmAddrAddr6:
						ep.Addr = net.IP(append([]byte(nil), n.Bytes()...))
					case pmAddrPort:
						ep.Port = n.Uint16()
					case pmAddrFlags:
						ep.Flags = n.Uint32()
					case pmAddrIfIdx:
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
