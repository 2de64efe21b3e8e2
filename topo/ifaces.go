package topo

// claims records the interface names taken on each node, so duplicates
// are reported and default names skip them.
type claims map[int]map[string]loc

func (c claims) take(node int, name string, l loc) (loc, bool) {
	m := c[node]
	if m == nil {
		m = map[string]loc{}
		c[node] = m
	}
	if prev, dup := m[name]; dup {
		return prev, false
	}
	m[name] = l
	return l, true
}

// makeLinks checks endpoints, names every interface (explicit names first,
// then Mininet's <node>-eth<N>) and builds Spec.Links.
func (r *resolver) makeLinks() {
	type end struct {
		node  int
		iface string
	}
	ends := make([][2]end, len(r.doc.links))
	good := make([]bool, len(r.doc.links))
	taken := claims{}
	// externals claim their names too
	for ni, rn := range r.doc.nodes {
		for _, ifc := range rn.ifaces {
			if prev, ok := taken.take(ni, ifc.name, ifc.loc); !ok {
				r.d.errorf(ifc.loc, "interface %q of %s is defined twice (first at line %d)", ifc.name, rn.name, prev.line)
			}
		}
	}
	for li, l := range r.doc.links {
		if l.bad {
			continue
		}
		ok := true
		for j, e := range l.ends {
			ni, known := r.lookup(e.node, e.loc)
			ok = ok && known
			ends[li][j] = end{node: ni, iface: e.iface}
		}
		if ok && ends[li][0].node == ends[li][1].node {
			r.d.errorf(l.loc, "both endpoints are on %s: a link joins two different nodes", l.ends[0].node)
			ok = false
		}
		if ok && r.spec.Nodes[ends[li][0].node].Kind == KindRoot && r.spec.Nodes[ends[li][1].node].Kind == KindRoot {
			r.d.errorf(l.loc, "both endpoints (%s, %s) are of kind root, the machine's own namespace: a link joins a lab's node to it", l.ends[0].node, l.ends[1].node)
			ok = false
		}
		if !ok {
			continue
		}
		for j, e := range l.ends {
			if e.iface == "" {
				continue
			}
			if msg := checkIfaceName(e.iface); msg != "" {
				r.d.errorf(e.loc, "%s", msg)
				ok = false
			} else if prev, fresh := taken.take(ends[li][j].node, e.iface, e.loc); !fresh {
				r.d.errorf(e.loc, "interface %q of %s is already used at line %d: each interface joins one link", e.iface, e.node, prev.line)
				ok = false
			}
		}
		good[li] = ok
	}
	// default names: N counts the node's links in file order (from 0 for
	// hosts and routers, 1 for switches), skipping names already taken
	next := make([]int, len(r.spec.Nodes))
	for i, n := range r.spec.Nodes {
		if n.Kind == KindSwitch {
			next[i] = 1
		}
	}
	for li, l := range r.doc.links {
		if !good[li] {
			continue
		}
		for j := range ends[li] {
			e := &ends[li][j]
			if e.iface != "" {
				next[e.node]++
				continue
			}
			node := r.spec.Nodes[e.node].Name
			name := defaultIfaceName(node, next[e.node])
			for {
				if _, used := taken[e.node][name]; !used {
					break
				}
				next[e.node]++
				name = defaultIfaceName(node, next[e.node])
			}
			next[e.node]++
			if len(name) > MaxIfaceName {
				max := MaxIfaceName - (len(name) - len(node))
				r.d.errorf(l.ends[j].loc, "interface name %q is %d bytes: Linux allows at most %d; use a node name of at most %d bytes or name the interface (\"%s:eth%d\")",
					name, len(name), MaxIfaceName, max, node, next[e.node]-1)
				good[li] = false
				continue
			}
			taken.take(e.node, name, l.ends[j].loc)
			e.iface = name
		}
	}
	// kind root nodes share one namespace, the machine's: their ends'
	// names must differ across them
	inRoot := map[string]string{}
	for li, l := range r.doc.links {
		for j, e := range ends[li] {
			if !good[li] || r.spec.Nodes[e.node].Kind != KindRoot {
				continue
			}
			node := r.spec.Nodes[e.node].Name
			if other, dup := inRoot[e.iface]; dup && other != node {
				r.d.errorf(l.ends[j].loc, "interface %q of %s: %s (kind root too) has an interface of that name, and both are in the machine's namespace: name one of them otherwise", e.iface, node, other)
				good[li] = false
			}
			inRoot[e.iface] = node
		}
	}
	for li, l := range r.doc.links {
		if !good[li] {
			continue
		}
		a, b := ends[li][0], ends[li][1]
		link := Link{
			A:    Endpoint{Node: r.spec.Nodes[a.node].Name, Iface: a.iface},
			B:    Endpoint{Node: r.spec.Nodes[b.node].Name, Iface: b.iface},
			Name: l.name,
			Pos:  posString(r.d.file, l.loc),
		}
		link.Params = r.linkParams(l)
		idx := len(r.spec.Links)
		r.spec.Links = append(r.spec.Links, link)
		r.rawOf = append(r.rawOf, l)
		mtu := l.mtu
		if mtu == 0 {
			mtu = defaultMTU
		}
		recs := [2]*ifRec{}
		for j, e := range ends[li] {
			peer := link.B
			if j == 1 {
				peer = link.A
			}
			recs[j] = r.addIface(e.node, Interface{Name: e.iface, Link: idx, Peer: peer.String(), MTU: mtu}, l.ends[j].loc)
		}
		r.linkAddrs(l, ends[li][0].node, ends[li][1].node, recs)
	}
}
