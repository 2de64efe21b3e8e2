package tc

import "encoding/binary"

var be = binary.BigEndian

// csumAdd adds b to a ones-complement sum (big-endian 16-bit words).
func csumAdd(sum uint64, b []byte) uint64 {
	for len(b) >= 8 {
		sum += uint64(be.Uint32(b)) + uint64(be.Uint32(b[4:]))
		b = b[8:]
	}
	for len(b) >= 2 {
		sum += uint64(be.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint64(b[0]) << 8
	}
	return sum
}

func csumFold(sum uint64) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xFFFF + sum>>16
	}
	return uint16(sum)
}

// pseudoSum is the L4 pseudo-header sum for a packet whose IP header starts
// at ip (version read from it) with l4len bytes of L4 header and payload.
func pseudoSum(ip []byte, proto uint8, l4len int) uint64 {
	var sum uint64
	if ip[0]>>4 == 4 {
		sum = csumAdd(0, ip[12:20])
	} else {
		sum = csumAdd(0, ip[8:40])
	}
	return sum + uint64(proto) + uint64(l4len>>16) + uint64(l4len&0xFFFF)
}

// ipv4HeaderCsum recomputes an IPv4 header checksum in place.
func ipv4HeaderCsum(ip []byte) {
	hl := int(ip[0]&0xF) * 4
	ip[10], ip[11] = 0, 0
	be.PutUint16(ip[10:], ^csumFold(csumAdd(0, ip[:hl])))
}

// finishCsum does in software what a NIC does for a CHECKSUM_PARTIAL
// frame: sum from csumStart to the end (the field holds the pseudo-header
// sum) and store the complement. It reports false if the offsets do not
// fit the frame.
func finishCsum(frame []byte, h vnetHdr) bool {
	start, field := int(h.csumStart), int(h.csumStart)+int(h.csumOffset)
	if start >= len(frame) || field+2 > len(frame) {
		return false
	}
	c := ^csumFold(csumAdd(0, frame[start:]))
	if c == 0 {
		c = 0xFFFF // CSUM_MANGLED_0, as skb_checksum_help does
	}
	be.PutUint16(frame[field:], c)
	return true
}
