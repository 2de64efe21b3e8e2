package traffic

import (
	"github.com/emuctl/emuctl/topo"
)

// hop is one link crossed in one direction.
type hop struct {
	link int
	aToB bool
}

// path returns the links a packet from src to dst crosses, by a shortest
// path over the topology in which only switches and routers forward (what
// automatic routing computes). ok is false when there is no such path.
func path(s *topo.Spec, src, dst string) (hops []hop, nodes []string, ok bool) {
	type prev struct {
		node string
		h    hop
	}
	seen := map[string]prev{src: {}}
	queue := []string{src}
	for len(queue) > 0 && !ok {
		n := queue[0]
		queue = queue[1:]
		if n != src {
			if nd := s.Node(n); nd == nil || nd.Kind == topo.KindHost {
				continue // hosts do not forward
			}
		}
		for i, l := range allLinks(s) {
			var next string
			var h hop
			switch n {
			case l.A.Node:
				next, h = l.B.Node, hop{i, true}
			case l.B.Node:
				next, h = l.A.Node, hop{i, false}
			default:
				continue
			}
			if _, done := seen[next]; done {
				continue
			}
			seen[next] = prev{n, h}
			if next == dst {
				ok = true
				break
			}
			queue = append(queue, next)
		}
	}
	if !ok {
		return nil, nil, false
	}
	for n := dst; n != src; n = seen[n].node {
		hops = append([]hop{seen[n].h}, hops...)
		nodes = append([]string{n}, nodes...)
	}
	return hops, append([]string{src}, nodes...), true
}

// allLinks is the topology's links followed by its wireless hops, one per
// station of an access point (A the station's wireless interface, B its
// AP's, Params the hop's shaping), and one per pair of members of each
// ad hoc network: hop indexes from len(s.Links) on are wireless.
func allLinks(s *topo.Spec) []topo.Link {
	out := s.Links
	for i := range s.Nodes {
		st := s.Nodes[i].Station
		if st == nil {
			continue
		}
		ap := s.Node(st.AP)
		if ap == nil || ap.AP == nil {
			continue
		}
		if len(out) == len(s.Links) {
			out = append([]topo.Link(nil), s.Links...)
		}
		out = append(out, topo.Link{A: topo.Endpoint{Node: s.Nodes[i].Name, Iface: st.Iface},
			B: topo.Endpoint{Node: ap.Name, Iface: ap.AP.Iface}, Params: st.Params})
	}
	// then every pair of an ad hoc network's members: each reaches the
	// other directly (whether the medium carries their frames depends on
	// where they are)
	for _, a := range s.WiFiAdhoc {
		for i, m := range a.Members {
			for _, o := range a.Members[i+1:] {
				if len(out) == len(s.Links) {
					out = append([]topo.Link(nil), s.Links...)
				}
				out = append(out, topo.Link{A: topo.Endpoint{Node: m, Iface: s.Node(m).Station.Iface},
					B: topo.Endpoint{Node: o, Iface: s.Node(o).Station.Iface}})
			}
		}
	}
	return out
}

// wireless reports whether a hop is a station's wireless hop.
func (h hop) wireless(s *topo.Spec) bool { return h.link >= len(s.Links) }

// ends returns the sending and receiving endpoints of a hop.
func (h hop) ends(s *topo.Spec) (from, to topo.Endpoint) {
	l := allLinks(s)[h.link]
	if h.aToB {
		return l.A, l.B
	}
	return l.B, l.A
}
