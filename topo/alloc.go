package topo

import (
	"fmt"
	"net/netip"
	"sort"
)

// allocator hands out aligned subnets of one pool, first fit, skipping
// reserved ranges. IPv4 works in addresses, IPv6 in /64 units.
type allocator struct {
	pool   netip.Prefix
	base   uint64
	last   uint64 // inclusive
	spans  []span // sorted, disjoint
	cursor map[int]uint64
}

type span struct{ lo, hi uint64 } // inclusive

func newAllocator(pool netip.Prefix) *allocator {
	a := &allocator{pool: pool, cursor: map[int]uint64{}}
	a.base, a.last = a.units(pool)
	return a
}

// units converts a prefix to its inclusive unit range.
func (a *allocator) units(p netip.Prefix) (lo, hi uint64) {
	p = p.Masked()
	b := p.Addr().AsSlice()
	var top uint64
	width := 32
	if len(b) == 4 {
		top = uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
	} else {
		for _, x := range b[:8] {
			top = top<<8 | uint64(x)
		}
		width = 64
	}
	host := width - min(p.Bits(), width)
	if host >= 64 {
		return top, ^uint64(0)
	}
	return top, top + (uint64(1)<<host - 1)
}

func (a *allocator) reserve(p netip.Prefix) {
	if p.Addr().Is4() != a.pool.Addr().Is4() {
		return
	}
	lo, hi := a.units(p)
	i := sort.Search(len(a.spans), func(i int) bool { return a.spans[i].lo > lo })
	a.spans = append(a.spans, span{})
	copy(a.spans[i+1:], a.spans[i:])
	a.spans[i] = span{lo, hi}
}

// take returns the first free aligned /bits in the pool.
func (a *allocator) take(bits int) (netip.Prefix, bool) {
	width := 32
	if a.pool.Addr().Is6() {
		width = 64
	}
	size := uint64(1) << (width - min(bits, width))
	c := max(a.base, a.cursor[bits])
	for {
		c = (c + size - 1) &^ (size - 1)
		if c < a.base || c > a.last || a.last-c < size-1 {
			return netip.Prefix{}, false
		}
		i := sort.Search(len(a.spans), func(i int) bool { return a.spans[i].hi >= c })
		if i < len(a.spans) && a.spans[i].lo <= c+size-1 {
			if a.spans[i].hi == ^uint64(0) {
				return netip.Prefix{}, false
			}
			c = a.spans[i].hi + 1
			continue
		}
		break
	}
	a.cursor[bits] = c + size
	p := a.prefix(c, bits)
	a.reserve(p)
	return p, true
}

func (a *allocator) prefix(c uint64, bits int) netip.Prefix {
	if a.pool.Addr().Is4() {
		return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)}), bits)
	}
	var b [16]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(c >> (56 - 8*i))
	}
	return netip.PrefixFrom(netip.AddrFrom16(b), bits)
}

// String is for debugging.
func (s span) String() string { return fmt.Sprintf("[%d,%d]", s.lo, s.hi) }
