package netcfg

import (
	"fmt"

	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Applied is what netcfg applied to one node, as read back: the node's
// effective TCP profile and, when it has an mptcp: block, its MPTCP
// configuration.
type Applied struct {
	TCP   *TCPState   `json:"tcp,omitempty"`
	MPTCP *MPTCPState `json:"mptcp,omitempty"`
}

// ApplyNode applies a host's or router's mptcp: block and TCP profile
// inside ns (h is a netlink handle in ns), MPTCP first because its policy
// routing tables must exist before TCP route metrics are set on them.
// Switches are left alone (nil, nil).
func ApplyNode(ns netns.NsHandle, h *netlink.Handle, node *topo.Node, spec *topo.Spec) (*Applied, error) {
	if node.Kind == topo.KindSwitch {
		return nil, nil
	}
	a := &Applied{}
	var err error
	if a.MPTCP, err = ApplyMPTCP(ns, h, node, spec); err != nil {
		return nil, fmt.Errorf("mptcp: %w", err)
	}
	if a.TCP, err = ApplyTCP(ns, h, node); err != nil {
		return nil, fmt.Errorf("tcp: %w", err)
	}
	return a, nil
}

// ReadNode reads back what ApplyNode applies (for emuctl inspect): the
// TCP profile always, MPTCP when withMPTCP.
func ReadNode(ns netns.NsHandle, withMPTCP bool) (*Applied, error) {
	a := &Applied{}
	var err error
	if a.TCP, err = ReadTCP(ns); err != nil {
		return nil, err
	}
	if withMPTCP {
		if a.MPTCP, err = ReadMPTCP(ns); err != nil {
			return nil, err
		}
	}
	return a, nil
}
