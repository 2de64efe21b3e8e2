package emu

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"unsafe"

	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The underlay carries every cut link of a machine at once: what a
// machine sends over its tunnels (each shaped direction's rate, plus
// VXLAN's overhead) must stay below its underlay's capacity, or the
// underlay queues and drops and the cut links carry less than configured
// — silently, since each link's shaping is right on its own. At up, after
// the underlay is measured, the controller adds up each machine's load in
// both directions and warns when it comes near the capacity: the
// machine's rate: in the file, or the link speed the kernel reports for
// the device that reaches the other machines (read by each machine's
// probe).

// capacityShare is the share of an underlay's capacity above which the
// cut links' load is warned about.
const capacityShare = 0.8

// vxlanFrameFactor is what VXLAN adds on the wire to a full frame of a cut
// link: a 1514-byte frame leaves the underlay as 1514 + 50 bytes.
const vxlanFrameFactor = float64(1514+topo.VXLANOverhead) / 1514

// capacityWarnings says, per machine and direction, when the cut links'
// total rate comes near the underlay's capacity, and when an unshaped
// cut link shares a machine's underlay with shaped ones. paths carry the
// measured link speeds (UnderlayPath.SpeedMbps).
func capacityWarnings(spec *topo.Spec, paths []UnderlayPath) []string {
	c := spec.Cluster
	if c == nil {
		return nil
	}
	type load struct {
		bps      float64
		links    []string
		unshaped []string
	}
	out, in := map[string]*load{}, map[string]*load{}
	get := func(m map[string]*load, k string) *load {
		if m[k] == nil {
			m[k] = &load{}
		}
		return m[k]
	}
	for _, cut := range c.Cuts {
		l := spec.Links[cut.Link]
		name := l.A.String() + " <-> " + l.B.String()
		if l.Name != "" {
			name = l.Name
		}
		for _, dir := range []struct {
			from, to string
			p        topo.LinkParams
			arrow    string
		}{{cut.A, cut.B, l.Params.Dir(true), "a->b"}, {cut.B, cut.A, l.Params.Dir(false), "b->a"}} {
			what := name + " " + dir.arrow
			for _, ld := range []*load{get(out, dir.from), get(in, dir.to)} {
				if dir.p.Rate <= 0 {
					ld.unshaped = append(ld.unshaped, what)
					continue
				}
				ld.bps += float64(dir.p.Rate) * vxlanFrameFactor
				ld.links = append(ld.links, what+" "+dir.p.Rate.TC())
			}
		}
	}
	var warns []string
	for _, m := range c.Machines {
		capBps, source := capacityOf(m, paths)
		for _, side := range []struct {
			ld   *load
			verb string
		}{{out[m.Name], "sends"}, {in[m.Name], "receives"}} {
			ld := side.ld
			if ld == nil {
				continue
			}
			if capBps > 0 && ld.bps > capacityShare*capBps {
				warns = append(warns, fmt.Sprintf("machine %s %s %.4g Mbit/s over its cut links (%s; with VXLAN's 50 bytes per frame), %.0f %% of its underlay's %.4g Mbit/s (%s): the underlay would queue or drop, and those links carry less than configured; place their ends on one machine, slow them, or give the underlay's real capacity with rate:",
					m.Name, side.verb, ld.bps/1e6, strings.Join(ld.links, ", "), 100*ld.bps/capBps, capBps/1e6, source))
			}
			if len(ld.unshaped) > 0 && len(ld.links) > 0 {
				warns = append(warns, fmt.Sprintf("machine %s %s unshaped cut links (%s) beside shaped ones (%s): an unshaped link takes what the underlay gives and can starve the shaped ones; give it a rate:",
					m.Name, side.verb, strings.Join(ld.unshaped, ", "), strings.Join(ld.links, ", ")))
			}
		}
	}
	return warns
}

// capacityOf is machine m's underlay capacity in bit/s and where it comes
// from: its rate:, else the slowest link speed its probes read (0 when
// neither is known).
func capacityOf(m topo.Machine, paths []UnderlayPath) (float64, string) {
	if m.Rate > 0 {
		return float64(m.Rate), "its rate:"
	}
	slowest := 0
	for _, p := range paths {
		if p.From == m.Name && p.SpeedMbps > 0 && (slowest == 0 || p.SpeedMbps < slowest) {
			slowest = p.SpeedMbps
		}
	}
	if slowest == 0 {
		return 0, ""
	}
	return float64(slowest) * 1e6, "the link speed of its underlay device"
}

// underlaySpeed is the link speed in Mbit/s of the device that reaches
// dst from this machine's root namespace (0: unknown, as for a device
// that reports none).
func underlaySpeed(dst netip.Addr) (dev string, mbps int) {
	h, err := netlink.NewHandleAt(hostNetns, unix.NETLINK_ROUTE)
	if err != nil {
		return "", 0
	}
	defer h.Close()
	routes, err := h.RouteGet(dst.AsSlice())
	if err != nil || len(routes) == 0 {
		return "", 0
	}
	l, err := h.LinkByIndex(routes[0].LinkIndex)
	if err != nil {
		return "", 0
	}
	dev = l.Attrs().Name
	s, err := ethtoolSpeed(hostNetns, dev)
	if err != nil {
		return dev, 0
	}
	return dev, s
}

// ethtoolCmd is the legacy struct ethtool_cmd (linux/ethtool.h), which
// ETHTOOL_GSET fills from the driver's link settings.
type ethtoolCmd struct {
	cmd           uint32
	supported     uint32
	advertising   uint32
	speed         uint16
	duplex        uint8
	port          uint8
	phyAddress    uint8
	transceiver   uint8
	autoneg       uint8
	mdioSupport   uint8
	maxtxpkt      uint32
	maxrxpkt      uint32
	speedHi       uint16
	ethTpMdix     uint8
	ethTpMdixCtrl uint8
	lpAdvertising uint32
	reserved      [2]uint32
}

const ethtoolGSET = 0x1

// ethtoolSpeed is ifname's link speed in Mbit/s (ETHTOOL_GSET, through a
// socket opened inside ns); an unknown speed is an error.
func ethtoolSpeed(ns netns.NsHandle, ifname string) (int, error) {
	v := ethtoolCmd{cmd: ethtoolGSET}
	if err := ethtoolIoctl(ns, ifname, unsafe.Pointer(&v)); err != nil {
		return 0, err
	}
	speed := uint32(v.speedHi)<<16 | uint32(v.speed)
	if speed == 0 || speed == 0xffffffff {
		return 0, fmt.Errorf("%s reports no link speed", ifname)
	}
	return int(speed), nil
}

// sortedWarnings is warns sorted and without repeats.
func sortedWarnings(warns []string) []string {
	sort.Strings(warns)
	out := warns[:0]
	for i, w := range warns {
		if i == 0 || w != warns[i-1] {
			out = append(out, w)
		}
	}
	return out
}
