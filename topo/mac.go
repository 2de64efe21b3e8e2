package topo

import (
	"fmt"
	"hash/fnv"
)

// assignMACs gives every created interface a locally administered unicast
// MAC derived from a hash of lab, node and interface name, so a MAC stays
// the same when unrelated parts of the file change. Collisions (rare) are
// resolved deterministically by rehashing. External interfaces keep their
// own MAC (empty here).
func (r *resolver) assignMACs() {
	seen := make(map[uint64]bool, len(r.ifs))
	for ni := range r.spec.Nodes {
		n := &r.spec.Nodes[ni]
		for ii := range n.Interfaces {
			ifc := &n.Interfaces[ii]
			if ifc.External != nil {
				continue
			}
			for salt := 0; ; salt++ {
				h := fnv.New64a()
				fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d", r.spec.Name, n.Name, ifc.Name, salt)
				// 0x02: locally administered, unicast
				v := h.Sum64()&0xffffffffff | 0x02<<40
				if !seen[v] {
					seen[v] = true
					ifc.MAC = fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", byte(v>>40), byte(v>>32), byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
					break
				}
			}
		}
	}
}

// checkMTU rejects links below IPv6's minimum MTU that carry IPv6.
func (r *resolver) checkMTU() {
links:
	for li, e := range r.linkEnds() {
		l := r.rawOf[li]
		if l.mtu == 0 || l.mtu >= 1280 {
			continue
		}
		for _, rec := range e {
			for _, a := range r.spec.Nodes[rec.node].Interfaces[rec.iface].Addrs {
				if a.Addr().Is6() {
					r.d.errorf(l.mtuLoc, "mtu %d is below 1280, the IPv6 minimum, and %s has IPv6 address %s: raise the mtu or drop IPv6 on this link", l.mtu, r.recName(rec), a)
					continue links
				}
			}
		}
	}
}
