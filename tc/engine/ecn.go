package engine

import "github.com/emuctl/emuctl/internal/inet"

// What the queue disciplines read and write in a frame: the ECN field of
// its IP header (RFC 3168) and the flow it belongs to.

const etherTypeVLAN = 0x8100

// ipHeader returns the offset of the IP header in an Ethernet frame (one
// 802.1Q tag allowed) and its version, or -1.
func ipHeader(frame []byte) (int, int) {
	if len(frame) < ethHdrLen {
		return -1, 0
	}
	off, et := ethHdrLen, be.Uint16(frame[12:])
	if et == etherTypeVLAN && len(frame) >= ethHdrLen+4 {
		off, et = ethHdrLen+4, be.Uint16(frame[16:])
	}
	switch {
	case et == etherTypeIP4 && len(frame) >= off+20 && frame[off]>>4 == 4:
		return off, 4
	case et == etherTypeIP6 && len(frame) >= off+40 && frame[off]>>4 == 6:
		return off, 6
	}
	return -1, 0
}

// markCE does what the kernel's INET_ECN_set_ce does: an ECN-capable
// packet (ECT(0) or ECT(1)) gets CE, with its IPv4 header checksum
// updated incrementally (RFC 1624); one already CE stays so. It reports
// whether the packet now carries CE, i.e. whether a discipline may mark
// it instead of dropping it (never for Not-ECT or non-IP frames).
func markCE(frame []byte) bool {
	off, v := ipHeader(frame)
	switch v {
	case 4:
		ip := frame[off:]
		switch ip[1] & 3 {
		case 0:
			return false
		case 3:
			return true
		}
		old := be.Uint16(ip[0:])
		ip[1] |= 3
		// HC' = ~(~HC + ~m + m')
		sum := uint64(^be.Uint16(ip[10:])) + uint64(^old) + uint64(be.Uint16(ip[0:]))
		be.PutUint16(ip[10:], ^inet.Fold(sum))
		return true
	case 6:
		ip := frame[off:]
		switch (ip[1] >> 4) & 3 {
		case 0:
			return false
		case 3:
			return true
		}
		ip[1] |= 0x30
		return true
	}
	return false
}

// ecnBits returns the ECN field of an IP frame (0 for non-IP).
func ecnBits(frame []byte) uint8 {
	off, v := ipHeader(frame)
	switch v {
	case 4:
		return frame[off+1] & 3
	case 6:
		return (frame[off+1] >> 4) & 3
	}
	return 0
}

// flowHash hashes a frame's flow (protocol, addresses and, for TCP and
// UDP, ports; the MAC addresses and EtherType for non-IP frames) with
// FNV-1a from a seed, so runs with the same seed bucket flows alike, as
// fq_codel's flow dissector hash does with its random perturbation.
func flowHash(frame []byte, seed uint32) uint32 {
	h := 2166136261 ^ seed
	add := func(b []byte) {
		for _, c := range b {
			h ^= uint32(c)
			h *= 16777619
		}
	}
	off, v := ipHeader(frame)
	var l4 int
	var proto uint8
	switch v {
	case 4:
		ip := frame[off:]
		proto = ip[9]
		add(ip[9:10])
		add(ip[12:20])
		// only the first fragment has ports
		if be.Uint16(ip[6:])&0x1FFF == 0 {
			l4 = off + int(ip[0]&0xF)*4
		}
	case 6:
		ip := frame[off:]
		proto = ip[6]
		add(ip[6:7])
		add(ip[8:40])
		l4 = off + 40
	default:
		add(frame[:min(len(frame), ethHdrLen)])
		return h
	}
	if (proto == protoTCP || proto == protoUDP) && l4 > 0 && len(frame) >= l4+4 {
		add(frame[l4 : l4+4])
	}
	return h
}
