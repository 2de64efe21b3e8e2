package engine

import (
	"encoding/binary"

	"github.com/emuctl/emuctl/internal/inet"
)

var be = binary.BigEndian

// pseudoSum is the L4 pseudo-header sum for a packet whose IP header starts
// at ip (version read from it) with l4len bytes of L4 header and payload.
func pseudoSum(ip []byte, proto uint8, l4len int) uint64 {
	var sum uint64
	if ip[0]>>4 == 4 {
		sum = inet.Sum(0, ip[12:20])
	} else {
		sum = inet.Sum(0, ip[8:40])
	}
	return sum + uint64(proto) + uint64(l4len>>16) + uint64(l4len&0xFFFF)
}

// ipv4HeaderCsum recomputes an IPv4 header checksum in place.
func ipv4HeaderCsum(ip []byte) {
	hl := int(ip[0]&0xF) * 4
	ip[10], ip[11] = 0, 0
	be.PutUint16(ip[10:], ^inet.Fold(inet.Sum(0, ip[:hl])))
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
	c := ^inet.Fold(inet.Sum(0, frame[start:]))
	if c == 0 {
		c = 0xFFFF // CSUM_MANGLED_0, as skb_checksum_help does
	}
	be.PutUint16(frame[field:], c)
	return true
}
