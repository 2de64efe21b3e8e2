package netcfg

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"

	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// RouteMetrics is one route with TCP metrics, as read back.
type RouteMetrics struct {
	Table    int    `json:"table"` // 254 is main; 100+ are policy tables
	Dst      string `json:"dst"`   // "default" or a prefix
	Dev      string `json:"dev,omitempty"`
	Quickack bool   `json:"quickack,omitempty"`
	InitCwnd int    `json:"initcwnd,omitempty"`
	InitRwnd int    `json:"initrwnd,omitempty"`
	Congctl  string `json:"congctl,omitempty"`
}

// metrics folds the tcp.routes entries that select a route with
// destination dst (nil: default) into one set of metrics.
func metrics(entries []topo.TCPRoute, dst *net.IPNet) (m RouteMetrics, matched []int) {
	for i, e := range entries {
		if !selects(e.To, dst) {
			continue
		}
		matched = append(matched, i)
		if e.Quickack {
			m.Quickack = true
		}
		if e.InitCwnd > 0 {
			m.InitCwnd = e.InitCwnd
		}
		if e.InitRwnd > 0 {
			m.InitRwnd = e.InitRwnd
		}
		if e.Congctl != "" {
			m.Congctl = e.Congctl
		}
	}
	return m, matched
}

func selects(to string, dst *net.IPNet) bool {
	switch to {
	case "all":
		return true
	case "default":
		return isDefault(dst)
	}
	return dstString(dst) == to
}

func isDefault(dst *net.IPNet) bool {
	if dst == nil {
		return true
	}
	ones, _ := dst.Mask.Size()
	return ones == 0
}

// dstString renders a route destination as topo does: "default" or the
// prefix.
func dstString(dst *net.IPNet) string {
	if isDefault(dst) {
		return "default"
	}
	a, ok := netip.AddrFromSlice(dst.IP)
	if !ok {
		return dst.String()
	}
	ones, _ := dst.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), ones).Masked().String()
}

// ownTable reports whether emuctl manages TCP metrics in a routing table:
// main and the policy routing tables.
func ownTable(t int) bool {
	return t == unix.RT_TABLE_MAIN || t >= TableBase && t < TableBase+maxPolicyTables
}

// tcpRoutes lists the unicast routes of the main and policy tables, IPv4
// and IPv6, leaving out link-local and multicast destinations.
func tcpRoutes(h *netlink.Handle) ([]netlink.Route, error) {
	var all []netlink.Route
	var err error
	for try := 0; try < 5; try++ {
		all, err = h.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("list routes: %w", err)
	}
	var out []netlink.Route
	for _, r := range all {
		if !ownTable(r.Table) || r.Type != unix.RTN_UNICAST {
			continue
		}
		if r.Dst != nil && (r.Dst.IP.IsLinkLocalUnicast() || r.Dst.IP.IsMulticast()) {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// applyRouteMetrics sets the metrics of tcp.routes on every route they
// select and reads them back. An entry that is not Optional must select
// at least one route.
func applyRouteMetrics(h *netlink.Handle, entries []topo.TCPRoute) error {
	routes, err := tcpRoutes(h)
	if err != nil {
		return err
	}
	used := make([]bool, len(entries))
	want := map[string]RouteMetrics{}
	for _, r := range routes {
		m, matched := metrics(entries, r.Dst)
		for _, i := range matched {
			used[i] = true
		}
		if m == (RouteMetrics{}) {
			continue
		}
		nr := r
		nr.Flags &= unix.RTNH_F_ONLINK // LINKDOWN, DEAD and friends are the kernel's to set
		setMetrics(&nr, entries)
		if err := h.RouteReplace(&nr); err != nil {
			return fmt.Errorf("route %s table %d: set TCP metrics %s: %w", dstString(r.Dst), r.Table, m, err)
		}
		want[routeKey(r)] = m
	}
	var missing []string
	for i, e := range entries {
		if !used[i] && !e.Optional {
			missing = append(missing, fmt.Sprintf("%s: no route to %s in the node", e.At, e.To))
		}
	}
	if len(missing) > 0 {
		return errors.New(strings.Join(missing, "; "))
	}
	after, err := tcpRoutes(h)
	if err != nil {
		return err
	}
	for _, r := range after {
		k := routeKey(r)
		w, ok := want[k]
		if !ok {
			continue
		}
		got := metricsOf(r)
		got.Table, got.Dst, got.Dev = 0, "", ""
		if got != w {
			return fmt.Errorf("route %s table %d: asked for TCP metrics %s, the kernel kept %s", dstString(r.Dst), r.Table, w, got)
		}
		delete(want, k)
	}
	for k := range want {
		return fmt.Errorf("route %s vanished while its TCP metrics were set", k)
	}
	return nil
}

// setMetrics sets on r the TCP metrics the entries select for it.
func setMetrics(r *netlink.Route, entries []topo.TCPRoute) {
	m, _ := metrics(entries, r.Dst)
	r.QuickACK = 0
	if m.Quickack {
		r.QuickACK = 1
	}
	r.InitCwnd, r.InitRwnd, r.Congctl = m.InitCwnd, m.InitRwnd, m.Congctl
}

func routeKey(r netlink.Route) string {
	return fmt.Sprintf("%d/%s/%d/%d", r.Table, dstString(r.Dst), r.Priority, r.Family)
}

func metricsOf(r netlink.Route) RouteMetrics {
	return RouteMetrics{Table: r.Table, Dst: dstString(r.Dst), Quickack: r.QuickACK != 0,
		InitCwnd: r.InitCwnd, InitRwnd: r.InitRwnd, Congctl: r.Congctl}
}

// String renders metrics as ip-route words: "quickack 1 initcwnd 10".
func (m RouteMetrics) String() string {
	var w []string
	if m.Quickack {
		w = append(w, "quickack 1")
	}
	if m.InitCwnd > 0 {
		w = append(w, fmt.Sprintf("initcwnd %d", m.InitCwnd))
	}
	if m.InitRwnd > 0 {
		w = append(w, fmt.Sprintf("initrwnd %d", m.InitRwnd))
	}
	if m.Congctl != "" {
		w = append(w, "congctl "+m.Congctl)
	}
	if len(w) == 0 {
		return "(none)"
	}
	return strings.Join(w, " ")
}

// readRouteMetrics returns the routes of the main and policy tables that
// carry TCP metrics, sorted by table and destination.
func readRouteMetrics(h *netlink.Handle) ([]RouteMetrics, error) {
	routes, err := tcpRoutes(h)
	if err != nil {
		return nil, err
	}
	names := map[int]string{}
	var out []RouteMetrics
	for _, r := range routes {
		m := metricsOf(r)
		if !m.Quickack && m.InitCwnd == 0 && m.InitRwnd == 0 && m.Congctl == "" {
			continue
		}
		if r.LinkIndex > 0 {
			if _, ok := names[r.LinkIndex]; !ok {
				if l, err := h.LinkByIndex(r.LinkIndex); err == nil {
					names[r.LinkIndex] = l.Attrs().Name
				}
			}
			m.Dev = names[r.LinkIndex]
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Table != out[j].Table {
			return out[i].Table < out[j].Table
		}
		return out[i].Dst < out[j].Dst
	})
	return out, nil
}
