package topo

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// segment is one L2 broadcast domain: a connected group of switches with
// the host and router interfaces attached to it, or the two ends of a link
// between non-switch nodes, or one external host interface.
type segment struct {
	ifs      []*ifRec // host/router interfaces, by node then interface
	routers  []*ifRec // the subset on routers
	external bool     // an external interface of a host or router
	sub      [2]netip.Prefix
	// conflict marks a family whose explicit addresses disagree.
	conflict [2]bool
}

// Address families, indexing segment.sub.
const (
	v4 = 0
	v6 = 1
)

func family(a netip.Addr) int {
	if a.Is4() {
		return v4
	}
	return v6
}

// unionFind over node indices.
type unionFind []int

func newUnionFind(n int) unionFind {
	u := make(unionFind, n)
	for i := range u {
		u[i] = i
	}
	return u
}

func (u unionFind) find(i int) int {
	for u[i] != i {
		u[i] = u[u[i]]
		i = u[i]
	}
	return i
}

func (u unionFind) union(a, b int) { u[u.find(a)] = u.find(b) }

func (r *resolver) isSwitch(node int) bool { return r.spec.Nodes[node].Kind == KindSwitch }

// segments groups every host/router interface into its L2 segment and
// orders segments by their first interface (node declaration order, then
// interface order), which is the order subnets are allocated in.
func (r *resolver) segments() {
	uf := newUnionFind(len(r.spec.Nodes))
	ends := r.linkEnds()
	for _, e := range ends {
		if r.isSwitch(e[0].node) && r.isSwitch(e[1].node) {
			uf.union(e[0].node, e[1].node)
		}
	}
	bySwitch := map[int]*segment{}
	var segs []*segment
	join := func(s *segment, rec *ifRec) {
		s.ifs = append(s.ifs, rec)
	}
	for _, e := range ends {
		a, b := e[0], e[1]
		switch sa, sb := r.isSwitch(a.node), r.isSwitch(b.node); {
		case sa && sb:
		case sa || sb:
			sw, host := a, b
			if sb {
				sw, host = b, a
			}
			root := uf.find(sw.node)
			s := bySwitch[root]
			if s == nil {
				s = &segment{}
				bySwitch[root] = s
				segs = append(segs, s)
			}
			join(s, host)
		default:
			s := &segment{}
			segs = append(segs, s)
			join(s, a)
			join(s, b)
		}
	}
	// Wi-Fi: a station's wireless interface is on its AP's segment — the
	// AP's switch segment when it bridges, else one segment per AP with the
	// AP's own wireless interface (the AP routes).
	byAP := map[int]*segment{}
	for _, rec := range r.ifs {
		api, ok := r.wifiAP[rec]
		if !ok || r.isSwitch(rec.node) {
			continue
		}
		var s *segment
		if r.isSwitch(api) {
			root := uf.find(api)
			if s = bySwitch[root]; s == nil {
				s = &segment{}
				bySwitch[root] = s
				segs = append(segs, s)
			}
		} else if s = byAP[api]; s == nil {
			s = &segment{}
			byAP[api] = s
			segs = append(segs, s)
		}
		join(s, rec)
	}
	// an ad hoc network is one segment of its members' interfaces
	byIBSS := map[int]*segment{}
	for _, rec := range r.ifs {
		k, ok := r.wifiIBSS[rec]
		if !ok {
			continue
		}
		s := byIBSS[k]
		if s == nil {
			s = &segment{}
			byIBSS[k] = s
			segs = append(segs, s)
		}
		join(s, rec)
	}
	for _, rec := range r.ifs {
		if _, wireless := r.wifiAP[rec]; wireless {
			continue
		}
		if _, wireless := r.wifiIBSS[rec]; wireless {
			continue
		}
		if rec.link < 0 && !r.isSwitch(rec.node) {
			s := &segment{external: true}
			segs = append(segs, s)
			join(s, rec)
		}
	}
	for _, s := range segs {
		sortRecs(s.ifs)
		for _, rec := range s.ifs {
			if r.spec.Nodes[rec.node].Kind == KindRouter {
				s.routers = append(s.routers, rec)
			}
		}
	}
	sort.SliceStable(segs, func(i, j int) bool {
		a, b := segs[i].ifs[0], segs[j].ifs[0]
		if a.node != b.node {
			return a.node < b.node
		}
		return a.iface < b.iface
	})
	for i, s := range segs {
		for _, rec := range s.ifs {
			rec.seg = i
		}
	}
	r.segs = segs
}

// linkEnds returns the two interface records of every Spec link.
func (r *resolver) linkEnds() [][2]*ifRec {
	out := make([][2]*ifRec, len(r.spec.Links))
	for _, rec := range r.ifs {
		if rec.link < 0 {
			continue
		}
		l := r.spec.Links[rec.link]
		n := r.spec.Nodes[rec.node]
		if n.Name == l.A.Node && n.Interfaces[rec.iface].Name == l.A.Iface {
			out[rec.link][0] = rec
		} else {
			out[rec.link][1] = rec
		}
	}
	return out
}

// checkSwitchLoops reports every cycle of switches that has no STP switch
// on it: a cycle without STP is exactly a cycle among the non-STP switches,
// so each link closing such a cycle is reported with the cycle.
func (r *resolver) checkSwitchLoops() {
	uf := newUnionFind(len(r.spec.Nodes))
	adj := map[int][]int{}
	for li, e := range r.linkEnds() {
		a, b := e[0].node, e[1].node
		na, nb := &r.spec.Nodes[a], &r.spec.Nodes[b]
		if na.Kind != KindSwitch || nb.Kind != KindSwitch || spanningTree(na) || spanningTree(nb) {
			continue
		}
		if uf.find(a) != uf.find(b) {
			uf.union(a, b)
			adj[a] = append(adj[a], b)
			adj[b] = append(adj[b], a)
			continue
		}
		path := treePath(adj, a, b)
		names := make([]string, 0, len(path)+1)
		for _, n := range path {
			names = append(names, r.spec.Nodes[n].Name)
		}
		names = append(names, na.Name)
		if len(names) > 12 { // keep the message readable
			names = append(append(names[:6:6], fmt.Sprintf("... (%d more)", len(names)-11)), names[len(names)-5:]...)
		}
		r.d.errorf(r.rawOf[li].loc, "switch loop %s without STP: set stp: true (or, on ovs switches, rstp: true) on a switch in the loop, or remove a link", strings.Join(names, " -> "))
	}
}

// treePath returns the path from a to b in a forest given as adjacency.
func treePath(adj map[int][]int, a, b int) []int {
	prev := map[int]int{a: a}
	queue := []int{a}
	for len(queue) > 0 && queue[0] != b {
		n := queue[0]
		queue = queue[1:]
		for _, m := range adj[n] {
			if _, seen := prev[m]; !seen {
				prev[m] = n
				queue = append(queue, m)
			}
		}
	}
	if _, ok := prev[b]; !ok {
		return []int{a, b}
	}
	var path []int
	for n := b; ; n = prev[n] {
		path = append(path, n)
		if n == a {
			break
		}
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}
