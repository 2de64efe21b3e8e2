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
		for i, l := range s.Links {
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

// ends returns the sending and receiving endpoints of a hop.
func (h hop) ends(s *topo.Spec) (from, to topo.Endpoint) {
	l := s.Links[h.link]
	if h.aToB {
		return l.A, l.B
	}
	return l.B, l.A
}
