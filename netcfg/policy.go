package netcfg

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"

	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// applyPolicy installs source-based policy routing: for each entry a rule
// "from <addr> lookup <table>" and in that table the connected subnet and,
// when known, a default route via the gateway. Rules and routes left in
// emuctl's table range by an earlier apply are removed first.
//
// The routes carry the TCP metrics that tcp.routes selects for them, so
// the tables match the main table whichever of ApplyMPTCP and ApplyTCP ran
// last.
func applyPolicy(h *netlink.Handle, plan []PolicyRoute, metricEntries []topo.TCPRoute) error {
	if err := clearPolicy(h); err != nil {
		return err
	}
	for _, p := range plan {
		l, err := h.LinkByName(p.Interface)
		if err != nil {
			return fmt.Errorf("policy routing for %s: %w", p.From, err)
		}
		idx := l.Attrs().Index
		conn := &netlink.Route{LinkIndex: idx, Dst: ipNet(p.Subnet), Src: p.From.AsSlice(),
			Scope: netlink.SCOPE_LINK, Table: p.Table, Protocol: unix.RTPROT_STATIC}
		setMetrics(conn, metricEntries)
		if err := h.RouteReplace(conn); err != nil {
			return fmt.Errorf("policy routing: table %d: %s dev %s: %w", p.Table, p.Subnet, p.Interface, err)
		}
		if p.Gateway.IsValid() {
			def := &netlink.Route{LinkIndex: idx, Dst: ipNet(netip.PrefixFrom(unspecified(p.From), 0)), Gw: p.Gateway.AsSlice(),
				Table: p.Table, Protocol: unix.RTPROT_STATIC}
			setMetrics(def, metricEntries)
			if err := h.RouteReplace(def); err != nil {
				return fmt.Errorf("policy routing: table %d: default via %s dev %s: %w", p.Table, p.Gateway, p.Interface, err)
			}
		}
		r := netlink.NewRule()
		r.Src = ipNet(netip.PrefixFrom(p.From, p.From.BitLen()))
		r.Table = p.Table
		r.Priority = p.Priority
		r.Family = family(p.From)
		if err := h.RuleAdd(r); err != nil {
			return fmt.Errorf("policy routing: rule from %s lookup %d: %w", p.From, p.Table, err)
		}
	}
	return nil
}

// clearPolicy removes the rules and routes of emuctl's table range.
func clearPolicy(h *netlink.Handle) error {
	for _, fam := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
		rules, err := listRules(h, fam)
		if err != nil {
			return err
		}
		for _, r := range rules {
			if inRange(r.Table) {
				if err := h.RuleDel(&r); err != nil && !errors.Is(err, unix.ENOENT) {
					return fmt.Errorf("policy routing: delete rule %s: %w", r, err)
				}
			}
		}
	}
	routes, err := h.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return fmt.Errorf("list routes: %w", err)
	}
	for _, r := range routes {
		if inRange(r.Table) {
			if err := h.RouteDel(&r); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("policy routing: delete route %s table %d: %w", dstString(r.Dst), r.Table, err)
			}
		}
	}
	return nil
}

func inRange(table int) bool { return table >= TableBase && table < TableBase+maxPolicyTables }

func listRules(h *netlink.Handle, fam int) ([]netlink.Rule, error) {
	var rules []netlink.Rule
	var err error
	for try := 0; try < 5; try++ {
		rules, err = h.RuleList(fam)
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil && !errors.Is(err, unix.EAFNOSUPPORT) {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	return rules, nil
}

// readPolicy reads back the policy routing of emuctl's table range: each
// "from <addr> lookup <table>" rule with its table's connected subnet and
// default gateway.
func readPolicy(h *netlink.Handle) ([]PolicyRoute, error) {
	var out []PolicyRoute
	for _, fam := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
		rules, err := listRules(h, fam)
		if err != nil {
			return nil, err
		}
		for _, r := range rules {
			if !inRange(r.Table) || r.Src == nil {
				continue
			}
			a, _ := netip.AddrFromSlice(r.Src.IP)
			p := PolicyRoute{Table: r.Table, Priority: r.Priority, From: a.Unmap()}
			routes, err := h.RouteListFiltered(fam, &netlink.Route{Table: r.Table}, netlink.RT_FILTER_TABLE)
			if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
				return nil, fmt.Errorf("list table %d: %w", r.Table, err)
			}
			for _, rt := range routes {
				name := ""
				if l, err := h.LinkByIndex(rt.LinkIndex); err == nil {
					name = l.Attrs().Name
				}
				if isDefault(rt.Dst) {
					p.Gateway, _ = netip.AddrFromSlice(rt.Gw)
					p.Gateway = p.Gateway.Unmap()
					continue
				}
				pa, _ := netip.AddrFromSlice(rt.Dst.IP)
				ones, _ := rt.Dst.Mask.Size()
				p.Subnet, p.Interface = netip.PrefixFrom(pa.Unmap(), ones), name
			}
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Table < out[j].Table })
	return out, nil
}

func ipNet(p netip.Prefix) *net.IPNet {
	p = p.Masked()
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func unspecified(a netip.Addr) netip.Addr {
	if a.Is4() {
		return netip.IPv4Unspecified()
	}
	return netip.IPv6Unspecified()
}

func family(a netip.Addr) int {
	if a.Is4() {
		return netlink.FAMILY_V4
	}
	return netlink.FAMILY_V6
}
