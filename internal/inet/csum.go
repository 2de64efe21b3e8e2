// Package inet is the Internet checksum (RFC 1071), written once for the
// link engine's segmentation (IP and L4 checksums) and the traffic
// generator's and emu's ICMP probes.
package inet

import "encoding/binary"

// Sum adds b to a ones-complement sum of big-endian 16-bit words (an odd
// last byte is padded with zero).
func Sum(sum uint64, b []byte) uint64 {
	for len(b) >= 8 {
		sum += uint64(binary.BigEndian.Uint32(b)) + uint64(binary.BigEndian.Uint32(b[4:]))
		b = b[8:]
	}
	for len(b) >= 2 {
		sum += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint64(b[0]) << 8
	}
	return sum
}

// Fold folds a sum to 16 bits (not complemented).
func Fold(sum uint64) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xFFFF + sum>>16
	}
	return uint16(sum)
}

// Checksum is the Internet checksum of b: the complement of its folded sum.
func Checksum(b []byte) uint16 { return ^Fold(Sum(0, b)) }
