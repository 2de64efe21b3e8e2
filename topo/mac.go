package topo

import (
	"hash/fnv"
	"net"
	"strconv"
)

// assignMACs gives every created interface a locally administered unicast
// MAC derived from a hash of lab, node and interface name, so a MAC stays
// the same when unrelated parts of the file change. Collisions (rare) are
// resolved deterministically by rehashing. External interfaces keep their
// own MAC (empty here).
// Interfaces given a MAC in the file (a Wi-Fi node's mac:) keep it, and
// no hashed MAC takes it.
func (r *resolver) assignMACs() {
	seen := make(map[uint64]bool, len(r.ifs))
	var buf []byte
	for _, m := range r.macs {
		seen[macValue(m.mac)] = true
	}
	for ni := range r.spec.Nodes {
		n := &r.spec.Nodes[ni]
		for ii := range n.Interfaces {
			ifc := &n.Interfaces[ii]
			if ifc.External != nil || ifc.MAC != "" {
				continue
			}
			for salt := 0; ; salt++ {
				// FNV-1a of "lab\0node\0iface\0salt"
				buf = append(append(append(append(append(append(buf[:0], r.spec.Name...), 0), n.Name...), 0), ifc.Name...), 0)
				buf = strconv.AppendInt(buf, int64(salt), 10)
				h := fnv.New64a()
				h.Write(buf)
				// 0x02: locally administered, unicast
				v := h.Sum64()&0xffffffffff | 0x02<<40
				if !seen[v] {
					seen[v] = true
					ifc.MAC = macString(v)
					break
				}
			}
		}
	}
}

// givenMAC records the MAC the file gave rec's interface (mac: at l),
// refusing one another interface of the lab was given already.
func (r *resolver) givenMAC(rec *ifRec, l loc) {
	mac := r.spec.Nodes[rec.node].Interfaces[rec.iface].MAC
	if mac == "" {
		return
	}
	for _, m := range r.macs {
		if m.mac == mac {
			r.d.errorf(l, "mac %s is %s's already: every interface of a lab has a MAC of its own", mac, r.recName(m.rec))
			return
		}
	}
	r.macs = append(r.macs, givenMAC{mac, rec})
}

// givenMAC is a MAC the file gave an interface.
type givenMAC struct {
	mac string
	rec *ifRec
}

// macValue is a MAC ("02:00:00:00:00:01") as the 48-bit number
// assignMACs hashes to.
func macValue(mac string) uint64 {
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 {
		return 0
	}
	var v uint64
	for _, b := range hw {
		v = v<<8 | uint64(b)
	}
	return v
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

// macString writes the low 48 bits of v as aa:bb:cc:dd:ee:ff.
func macString(v uint64) string {
	const hexDigits = "0123456789abcdef"
	var b [17]byte
	for i := range 6 {
		x := byte(v >> (40 - 8*i))
		b[3*i], b[3*i+1] = hexDigits[x>>4], hexDigits[x&0xf]
		if i < 5 {
			b[3*i+2] = ':'
		}
	}
	return string(b[:])
}
