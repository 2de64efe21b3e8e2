package topo

import (
	"net/netip"
	"sort"
)

// address validates explicit addresses, gives every L2 segment a subnet
// and every host/router interface in it an address (see doc.go).
func (r *resolver) address() {
	used := map[netip.Addr]*ifRec{}
	for _, s := range r.segs {
		for _, rec := range s.ifs {
			for _, ad := range rec.addrs {
				a := ad.p.Addr()
				if prev := used[a]; prev != nil {
					r.d.errorf(ad.loc, "address %s is already used by %s: every address must be unique in the lab", a, r.recName(prev))
					continue
				}
				used[a] = rec
				f := family(a)
				switch sub := ad.p.Masked(); {
				case !s.sub[f].IsValid():
					s.sub[f] = sub
				case s.sub[f] != sub:
					first := r.firstIn(s, f)
					r.d.errorf(ad.loc, "%s %s and %s %s are on the same L2 segment but in different subnets: use one subnet per segment",
						r.recName(first.rec), first.addr.p, r.recName(rec), ad.p)
					s.conflict[f] = true
				}
			}
		}
	}
	if r.checkOverlaps() {
		return
	}
	r.allocate()
	r.fill(used)
}

type recAddr struct {
	rec  *ifRec
	addr rawAddr
}

// firstIn returns the first explicit address of family f in s.
func (r *resolver) firstIn(s *segment, f int) recAddr {
	for _, rec := range s.ifs {
		for _, ad := range rec.addrs {
			if family(ad.p.Addr()) == f {
				return recAddr{rec, ad}
			}
		}
	}
	return recAddr{}
}

func (r *resolver) recName(rec *ifRec) string {
	n := &r.spec.Nodes[rec.node]
	return n.Name + ":" + n.Interfaces[rec.iface].Name
}

// touchesRoot reports whether a segment has an end on a kind root node.
func (r *resolver) touchesRoot(s *segment) bool {
	for _, rec := range s.ifs {
		if r.spec.Nodes[rec.node].Kind == KindRoot {
			return true
		}
	}
	return false
}

// checkOverlaps reports explicit subnets of different segments that
// overlap; it returns true when there was any.
func (r *resolver) checkOverlaps() bool {
	var subs []recAddr
	for _, s := range r.segs {
		if r.touchesRoot(s) {
			// the machine's own namespace may join segments itself (a
			// bridge its user makes, as Mininet's scratchnet.py does):
			// emuctl cannot tell them apart
			continue
		}
		for f := range s.sub {
			if s.sub[f].IsValid() && !s.conflict[f] {
				subs = append(subs, r.firstIn(s, f))
			}
		}
	}
	sort.SliceStable(subs, func(i, j int) bool {
		a, b := subs[i].addr.p.Masked(), subs[j].addr.p.Masked()
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c < 0
		}
		return a.Bits() < b.Bits()
	})
	bad := false
	for i := 1; i < len(subs); i++ {
		cur, next := subs[i-1], subs[i]
		if !cur.addr.p.Masked().Overlaps(next.addr.p.Masked()) {
			continue
		}
		later, other := next, cur
		if later.addr.loc.line < other.addr.loc.line {
			later, other = other, later
		}
		r.d.errorf(later.addr.loc, "subnet %s of %s overlaps subnet %s of %s, which is on another L2 segment: give each segment its own subnet",
			later.addr.p.Masked(), r.recName(later.rec), other.addr.p.Masked(), r.recName(other.rec))
		bad = true
		subs[i] = cur // keep the wider one for the next comparison
		if lastAddr(next.addr.p.Masked()).Compare(lastAddr(cur.addr.p.Masked())) > 0 {
			subs[i] = next
		}
	}
	return bad
}

// allocate gives a subnet from the pools to every segment that needs one.
func (r *resolver) allocate() {
	a := r.doc.addr
	if !a.auto {
		return
	}
	pools := [2]*allocator{newAllocator(a.pool), nil}
	if a.pool6.IsValid() {
		pools[v6] = newAllocator(a.pool6)
	}
	for _, s := range r.segs {
		for f, p := range s.sub {
			if p.IsValid() && pools[f] != nil {
				pools[f].reserve(p)
			}
		}
	}
	failed := [2]bool{}
	for _, s := range r.segs {
		if s.external {
			continue
		}
		for f := range s.sub {
			if s.sub[f].IsValid() || s.conflict[f] || pools[f] == nil || failed[f] {
				continue
			}
			bits := 64
			if f == v4 {
				bits = r.v4Bits(len(s.ifs))
				if r.wireless(s) {
					bits = r.v4Bits(3) // a Wi-Fi segment: stations may be added; never the p2p prefix
				}
				if bits < a.pool.Bits() {
					r.d.errorf(r.poolLoc(s, f), "the L2 segment of %s has %d interfaces and needs a /%d, larger than the pool %s: use a larger addressing.pool",
						r.recName(s.ifs[0]), len(s.ifs), bits, a.pool)
					continue
				}
			}
			p, ok := pools[f].take(bits)
			if !ok {
				r.d.errorf(r.poolLoc(s, f), "address pool %s is exhausted: no free /%d left for the L2 segment of %s; use a larger pool",
					pools[f].pool, bits, r.recName(s.ifs[0]))
				failed[f] = true
				continue
			}
			s.sub[f] = p
		}
	}
}

// wireless reports whether a segment holds Wi-Fi interfaces.
func (r *resolver) wireless(s *segment) bool {
	for _, rec := range s.ifs {
		if _, ok := r.wifiAP[rec]; ok {
			return true
		}
		if _, ok := r.wifiIBSS[rec]; ok {
			return true
		}
	}
	return false
}

// v4Bits is the prefix length for a segment of n interfaces: p2p_prefix
// for two, else prefix, grown until n hosts fit.
func (r *resolver) v4Bits(n int) int {
	a := r.doc.addr
	bits := a.prefix
	if n == 2 {
		bits = a.p2p
	}
	for bits > 0 && v4Hosts(bits) < n {
		bits--
	}
	return bits
}

// v4Hosts is the number of usable host addresses in an IPv4 /bits.
func v4Hosts(bits int) int {
	switch {
	case bits >= 32:
		return 1
	case bits == 31:
		return 2
	}
	return 1<<(32-bits) - 2
}

func (r *resolver) poolLoc(s *segment, f int) loc {
	l := r.doc.addr.poolLoc
	if f == v6 {
		l = r.doc.addr.pool6Loc
	}
	if l.line == 0 {
		l = s.ifs[0].loc
	}
	return l
}

// fill gives every interface without an address of a family the next free
// host address of its segment's subnet, in node then interface order.
func (r *resolver) fill(used map[netip.Addr]*ifRec) {
	auto := map[*ifRec][]netip.Prefix{}
	if r.doc.addr.auto {
		for _, s := range r.segs {
			if s.external {
				continue
			}
			for f, sub := range s.sub {
				if !sub.IsValid() || s.conflict[f] {
					continue
				}
				next := firstHost(sub)
				for _, rec := range s.ifs {
					if hasFamily(rec.addrs, f) {
						continue
					}
					for next.IsValid() && sub.Contains(next) && (used[next] != nil || isBroadcast(sub, next)) {
						next = next.Next()
					}
					if !next.IsValid() || !sub.Contains(next) {
						r.d.errorf(rec.loc, "no free address left in %s for %s (its L2 segment has %d interfaces): use a larger prefix", sub, r.recName(rec), len(s.ifs))
						break
					}
					used[next] = rec
					auto[rec] = append(auto[rec], netip.PrefixFrom(next, sub.Bits()))
				}
			}
		}
	}
	for _, rec := range r.ifs {
		ifc := &r.spec.Nodes[rec.node].Interfaces[rec.iface]
		for _, ad := range rec.addrs {
			ifc.Addrs = append(ifc.Addrs, ad.p)
		}
		ifc.Addrs = append(ifc.Addrs, auto[rec]...)
	}
}

func hasFamily(addrs []rawAddr, f int) bool {
	for _, a := range addrs {
		if family(a.p.Addr()) == f {
			return true
		}
	}
	return false
}

// firstHost is the first assignable address: .1 (or ::1), except in IPv4
// /31 and /32 and IPv6 /127 and /128, where every address is usable.
func firstHost(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr()
	if p.Bits() < a.BitLen()-1 {
		return a.Next()
	}
	return a
}

func isBroadcast(p netip.Prefix, a netip.Addr) bool {
	return a.Is4() && p.Bits() <= 30 && a == lastAddr(p)
}

// lastAddr is the highest address of a prefix.
func lastAddr(p netip.Prefix) netip.Addr {
	p = p.Masked()
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
