package packet

import (
	"encoding/binary"
	"net/netip"
)

// IP protocol numbers.
const (
	ProtoICMP   = 1
	ProtoTCP    = 6
	ProtoUDP    = 17
	ProtoICMPv6 = 58
)

// TCP flags.
const (
	FlagFIN = 0x01
	FlagSYN = 0x02
	FlagRST = 0x04
	FlagPSH = 0x08
	FlagACK = 0x10
)

// Info is the decoded header summary of one packet.
type Info struct {
	// Proto is the IP protocol (ProtoTCP, ProtoUDP, ...).
	Proto uint8
	// Src and Dst are the IP addresses.
	Src, Dst netip.Addr
	// SrcPort and DstPort are the TCP/UDP ports (0 otherwise).
	SrcPort, DstPort uint16
	// Fragment is true for a non-first IP fragment (no transport header).
	Fragment bool
	// TCP header fields (TCP only).
	Flags    uint8
	Seq, Ack uint32
	Window   uint16
	// Options are the TCP option bytes (a slice of the input).
	Options []byte
	// Payload is the transport payload length in bytes, from the IP
	// length fields (so it is right even when the capture was truncated).
	Payload int
	// Transport is true when the transport header was fully decoded.
	Transport bool
}

// Link types understood by Decode (pcap LINKTYPE_* values).
const (
	linkNull     = 0
	linkEthernet = 1
	linkRaw      = 101
	linkSLL      = 113
	linkIPv4     = 228
	linkIPv6     = 229
	linkSLL2     = 276
)

// Decode parses data captured with the given link type; wireLen is the
// packet's length on the wire (used when an IPv4 length field is 0, as
// for captured GSO super-packets). It returns false for non-IP packets and
// truncated IP headers; in.Transport tells whether ports and flags were
// read.
func Decode(linkType uint16, data []byte, wireLen int, in *Info) bool {
	*in = Info{}
	var et uint16
	hl := 0
	switch linkType {
	case linkEthernet:
		if len(data) < 14 {
			return false
		}
		et, hl = binary.BigEndian.Uint16(data[12:]), 14
		for (et == 0x8100 || et == 0x88a8) && len(data) >= hl+4 {
			et, hl = binary.BigEndian.Uint16(data[hl+2:]), hl+4
		}
	case linkSLL:
		if len(data) < 16 {
			return false
		}
		et, hl = binary.BigEndian.Uint16(data[14:]), 16
	case linkSLL2:
		if len(data) < 20 {
			return false
		}
		et, hl = binary.BigEndian.Uint16(data), 20
	case linkRaw, linkIPv4, linkIPv6:
		if len(data) < 1 {
			return false
		}
		et = ipEtherType(data[0])
	case linkNull:
		if len(data) < 4 {
			return false
		}
		hl = 4
		if len(data) > 4 {
			et = ipEtherType(data[4])
		}
	default:
		return false
	}
	ip := data[hl:]
	switch et {
	case 0x0800:
		return decodeIPv4(ip, wireLen-hl, in)
	case 0x86dd:
		return decodeIPv6(ip, in)
	}
	return false
}

// ipEtherType maps the IP version nibble of a raw IP packet to its
// EtherType.
func ipEtherType(b byte) uint16 {
	switch b >> 4 {
	case 4:
		return 0x0800
	case 6:
		return 0x86dd
	}
	return 0
}

func decodeIPv4(b []byte, wire int, in *Info) bool {
	if len(b) < 20 || b[0]>>4 != 4 {
		return false
	}
	ihl := int(b[0]&0x0f) * 4
	if ihl < 20 || len(b) < ihl {
		return false
	}
	total := int(binary.BigEndian.Uint16(b[2:]))
	if total == 0 { // GSO/BIG TCP: length not filled in
		total = wire
	}
	in.Proto = b[9]
	in.Src = netip.AddrFrom4([4]byte(b[12:16]))
	in.Dst = netip.AddrFrom4([4]byte(b[16:20]))
	if binary.BigEndian.Uint16(b[6:])&0x1fff != 0 {
		in.Fragment = true
		return true
	}
	decodeTransport(b[ihl:], total-ihl, in)
	return true
}

func decodeIPv6(b []byte, in *Info) bool {
	if len(b) < 40 || b[0]>>4 != 6 {
		return false
	}
	plen := int(binary.BigEndian.Uint16(b[4:]))
	next := b[6]
	in.Src = netip.AddrFrom16([16]byte(b[8:24]))
	in.Dst = netip.AddrFrom16([16]byte(b[24:40]))
	rest := b[40:]
	for {
		switch next {
		case 0, 43, 60: // hop-by-hop, routing, destination options
			if len(rest) < 8 {
				in.Proto = next
				return true
			}
			n := (int(rest[1]) + 1) * 8
			if len(rest) < n {
				in.Proto = next
				return true
			}
			next, rest, plen = rest[0], rest[n:], plen-n
			continue
		case 44: // fragment
			if len(rest) < 8 {
				in.Proto = next
				return true
			}
			off := binary.BigEndian.Uint16(rest[2:]) &^ 7
			next, rest, plen = rest[0], rest[8:], plen-8
			if off != 0 {
				in.Proto, in.Fragment = next, true
				return true
			}
			continue
		}
		break
	}
	in.Proto = next
	decodeTransport(rest, plen, in)
	return true
}

// decodeTransport reads a TCP or UDP header from b; ipPayload is the IP
// payload length from the IP header.
func decodeTransport(b []byte, ipPayload int, in *Info) {
	switch in.Proto {
	case ProtoTCP:
		if len(b) < 20 {
			return
		}
		off := int(b[12]>>4) * 4
		if off < 20 {
			return
		}
		in.SrcPort = binary.BigEndian.Uint16(b)
		in.DstPort = binary.BigEndian.Uint16(b[2:])
		in.Seq = binary.BigEndian.Uint32(b[4:])
		in.Ack = binary.BigEndian.Uint32(b[8:])
		in.Flags = b[13]
		in.Window = binary.BigEndian.Uint16(b[14:])
		if len(b) >= off {
			in.Options = b[20:off]
		}
		in.Payload = max(0, ipPayload-off)
		in.Transport = true
	case ProtoUDP:
		if len(b) < 8 {
			return
		}
		in.SrcPort = binary.BigEndian.Uint16(b)
		in.DstPort = binary.BigEndian.Uint16(b[2:])
		in.Payload = max(0, ipPayload-8)
		in.Transport = true
	}
}

// TCPOptionMSS returns the MSS option of a SYN's options, if present.
func TCPOptionMSS(opts []byte) (uint16, bool) {
	mss, _, ok := scanOptions(opts)
	return mss, ok
}

// TCPOptionTimestamps reports whether the options carry a timestamp.
func TCPOptionTimestamps(opts []byte) bool {
	_, ts, _ := scanOptions(opts)
	return ts
}

func scanOptions(o []byte) (mss uint16, ts, hasMSS bool) {
	for len(o) > 0 {
		kind := o[0]
		if kind == 0 {
			break
		}
		if kind == 1 {
			o = o[1:]
			continue
		}
		if len(o) < 2 || int(o[1]) < 2 || int(o[1]) > len(o) {
			break
		}
		switch {
		case kind == 2 && o[1] == 4:
			mss, hasMSS = binary.BigEndian.Uint16(o[2:]), true
		case kind == 8:
			ts = true
		}
		o = o[o[1]:]
	}
	return
}
