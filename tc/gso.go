//go:build linux

package tc

import (
	"fmt"

	"github.com/vishvananda/netlink"
)

// SetGSOLimits makes the stack hand link's qdiscs one MTU-sized frame per
// packet: IFLA_GSO_MAX_SEGS 1 and IFLA_GSO_MAX_SIZE MTU+14 stop TCP and
// UDP from building GSO super-packets for it (turning TSO/GSO off with
// ethtool does not: the qdisc still sees 64 KB skbs), and IFLA_GRO_MAX_SIZE
// MTU+14 stops GRO from merging frames received on it. Call it on every
// interface whose qdisc counts packets, before traffic starts (TCP sockets
// read the limits when they connect). The engine does not need it: it
// splits super-frames itself.
func SetGSOLimits(h *netlink.Handle, link netlink.Link) error {
	l, err := h.LinkByIndex(link.Attrs().Index)
	if err != nil {
		return fmt.Errorf("gso limits: %w", err)
	}
	size := frameBytes(l.Attrs().MTU)
	if err := h.LinkSetGSOMaxSegs(l, 1); err != nil {
		return fmt.Errorf("%s: gso_max_segs 1: %w", l.Attrs().Name, err)
	}
	if err := h.LinkSetGSOMaxSize(l, size); err != nil {
		return fmt.Errorf("%s: gso_max_size %d: %w", l.Attrs().Name, size, err)
	}
	if err := h.LinkSetGROMaxSize(l, size); err != nil {
		return fmt.Errorf("%s: gro_max_size %d: %w", l.Attrs().Name, size, err)
	}
	return nil
}
