package topo

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// routes checks explicit routes against the node's interfaces and, with
// routing: auto in a lab that has routers, computes the others.
func (r *resolver) routes() {
	for ni, rn := range r.doc.nodes {
		r.spec.Nodes[ni].Routes = r.explicitRoutes(ni, rn.routes)
	}
	if r.doc.routing != "auto" || r.d.failed() || !r.hasRouters() { // no Spec after errors
		return
	}
	if n := len(r.spec.Nodes) * len(r.segs); n > maxAutoRoutes {
		l := r.doc.routingLoc
		if l.line == 0 {
			l.path = "routing"
		}
		r.d.errorf(l, "automatic routing over %d nodes and %d L2 segments could create up to %d routes (limit %d): use routing: none and explicit routes, or fewer segments",
			len(r.spec.Nodes), len(r.segs), n, maxAutoRoutes)
		return
	}
	rt := newRouteTable(r)
	for ni := range r.spec.Nodes {
		if r.isSwitch(ni) || r.spec.Nodes[ni].Kind == KindRoot {
			continue // the machine's own namespace keeps the machine's routes
		}
		n := &r.spec.Nodes[ni]
		n.Routes = append(n.Routes, rt.compute(ni, n.Routes)...)
	}
}

func (r *resolver) hasRouters() bool {
	for _, n := range r.spec.Nodes {
		if n.Kind == KindRouter {
			return true
		}
	}
	return false
}

func (r *resolver) explicitRoutes(ni int, raw []rawRoute) []Route {
	n := &r.spec.Nodes[ni]
	var out []Route
	seen := map[netip.Prefix]loc{}
	for _, rr := range raw {
		if prev, dup := seen[rr.dst]; dup {
			r.d.errorf(rr.loc, "a route to %s is already given at line %d: one route per destination", rr.dst, prev.line)
			continue
		}
		seen[rr.dst] = rr.loc
		if msg := checkRoute(n, rr); msg != "" {
			r.d.errorf(rr.loc, "%s", msg)
			continue
		}
		out = append(out, Route{Dst: rr.dst, Via: rr.via, Dev: rr.dev})
	}
	return out
}

// checkRoute verifies that dev exists and via is on one of the node's
// subnets (on dev's, when both are given).
func checkRoute(n *Node, rr rawRoute) string {
	var names []string
	var dev *Interface
	for i := range n.Interfaces {
		names = append(names, n.Interfaces[i].Name)
		if n.Interfaces[i].Name == rr.dev {
			dev = &n.Interfaces[i]
		}
	}
	if rr.dev != "" && dev == nil {
		return fmt.Sprintf("dev %q is not an interface of %s %s", clip(rr.dev), n.Name, choicesOrNone("known", rr.dev, names))
	}
	if !rr.via.IsValid() {
		return ""
	}
	var subnets []string
	for _, ifc := range n.Interfaces {
		if dev != nil && ifc.Name != dev.Name {
			continue
		}
		for _, a := range ifc.Addrs {
			if a.Addr() == rr.via {
				return fmt.Sprintf("via %s is %s's own address on %s: use the address of a neighbour", rr.via, n.Name, ifc.Name)
			}
			if a.Masked().Contains(rr.via) {
				return ""
			}
			if a.Addr().Is4() == rr.via.Is4() {
				subnets = append(subnets, ifc.Name+" "+a.Masked().String())
			}
		}
	}
	where := n.Name
	if dev != nil {
		where = n.Name + ":" + dev.Name
	}
	if len(subnets) == 0 {
		return fmt.Sprintf("via %s is not reachable: %s has no %s address", rr.via, where, familyName(rr.via))
	}
	return fmt.Sprintf("via %s is not on a subnet of %s (%s): a gateway must be directly reachable", rr.via, where, strings.Join(subnets, ", "))
}

func familyName(a netip.Addr) string {
	if a.Is4() {
		return "IPv4"
	}
	return "IPv6"
}

// maxAutoRoutes bounds nodes x segments for automatic routing, which is
// quadratic by nature.
const maxAutoRoutes = 1_000_000

// routeTable computes shortest-path routes over the graph whose vertices
// are L2 segments and routers (hosts do not forward).
type routeTable struct {
	r        *resolver
	segMark  []int // == stamp when visited in the current search
	nodeMark []int
	hop      []hop // per node: the first hop towards it
	stamp    int
}

// hop is the first step of a path: the router interface to send to and
// the source's interface on the same segment.
type hop struct{ via, dev *ifRec }

func newRouteTable(r *resolver) *routeTable {
	return &routeTable{r: r, segMark: make([]int, len(r.segs)), nodeMark: make([]int, len(r.spec.Nodes)), hop: make([]hop, len(r.spec.Nodes))}
}

// compute returns src's automatic routes: one per remote subnet, via the
// first router of a shortest path (ties: declaration order), or for a
// host whose remote subnets share one gateway, a default route instead.
// Destinations with an explicit route, and those the explicit default
// route already sends to the same gateway, are left out.
func (t *routeTable) compute(src int, explicit []Route) []Route {
	r := t.r
	t.stamp++
	st := t.stamp
	type found struct {
		seg int
		h   hop
	}
	var reached []found
	var queue []int
	t.nodeMark[src] = st
	for _, rec := range r.byNode[src] {
		if rec.seg >= 0 {
			t.segMark[rec.seg] = st
		}
	}
	for _, rec := range r.byNode[src] {
		if rec.seg < 0 {
			continue
		}
		for _, ri := range r.segs[rec.seg].routers {
			if ri.node == src || t.nodeMark[ri.node] == st {
				continue
			}
			t.nodeMark[ri.node] = st
			t.hop[ri.node] = hop{via: ri, dev: rec}
			queue = append(queue, ri.node)
		}
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		h := t.hop[n]
		for _, rec := range r.byNode[n] {
			s := rec.seg
			if s < 0 || t.segMark[s] == st {
				continue
			}
			t.segMark[s] = st
			reached = append(reached, found{s, h})
			for _, qi := range r.segs[s].routers {
				if t.nodeMark[qi.node] != st {
					t.nodeMark[qi.node] = st
					t.hop[qi.node] = h
					queue = append(queue, qi.node)
				}
			}
		}
	}
	sort.Slice(reached, func(i, j int) bool { return reached[i].seg < reached[j].seg })
	have := map[netip.Prefix]bool{}
	var defVia [2]netip.Addr // explicit default gateways
	for _, e := range explicit {
		have[e.Dst] = true
		if e.Dst.Bits() == 0 && e.Via.IsValid() {
			defVia[family(e.Via)] = e.Via
		}
	}
	var out [2][]Route
	for _, f := range reached {
		for fam, dst := range r.segs[f.seg].sub {
			if !dst.IsValid() || have[dst] {
				continue
			}
			via := t.addrIn(f.h.via, r.segs[f.h.via.seg].sub[fam])
			src := t.addrIn(f.h.dev, r.segs[f.h.dev.seg].sub[fam])
			if !via.IsValid() || !src.IsValid() || via == defVia[fam] {
				continue // no gateway of this family, or the default covers it
			}
			out[fam] = append(out[fam], Route{Dst: dst, Via: via, Dev: t.name(f.h.dev), Auto: true})
		}
	}
	var routes []Route
	for fam, rs := range out {
		def := netip.PrefixFrom(netip.IPv4Unspecified(), 0)
		if fam == v6 {
			def = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
		}
		if r.spec.Nodes[src].Kind == KindHost && len(rs) > 0 && !have[def] && sameHop(rs) {
			rs = []Route{{Dst: def, Via: rs[0].Via, Dev: rs[0].Dev, Auto: true}}
		}
		routes = append(routes, rs...)
	}
	return routes
}

func sameHop(rs []Route) bool {
	for _, x := range rs[1:] {
		if x.Via != rs[0].Via || x.Dev != rs[0].Dev {
			return false
		}
	}
	return true
}

// addrIn returns rec's address inside sub.
func (t *routeTable) addrIn(rec *ifRec, sub netip.Prefix) netip.Addr {
	if !sub.IsValid() {
		return netip.Addr{}
	}
	for _, a := range t.r.spec.Nodes[rec.node].Interfaces[rec.iface].Addrs {
		if sub.Contains(a.Addr()) {
			return a.Addr()
		}
	}
	return netip.Addr{}
}

func (t *routeTable) name(rec *ifRec) string {
	return t.r.spec.Nodes[rec.node].Interfaces[rec.iface].Name
}
