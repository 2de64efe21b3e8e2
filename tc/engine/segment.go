package engine

import (
	"github.com/emuctl/emuctl/internal/inet"
	"golang.org/x/sys/unix"
)

// The engine applies loss, rate and queue limits per wire packet, so a GSO
// super-frame (up to 64 KB of TCP or UDP payload handed over in one skb)
// is split here the way the kernel's tcp/udp GSO would split it: headers
// copied, IP length/ID and TCP sequence numbers and flags adjusted, and
// each segment's L4 checksum left partial (pseudo-header sum in the field,
// NEEDS_CSUM in its vnet header) for the receiving stack.

const (
	ethHdrLen    = 14
	etherTypeIP4 = 0x0800
	etherTypeIP6 = 0x86DD
	protoTCP     = 6
	protoUDP     = 17
)

// frameLayout locates the headers of an untagged IPv4/IPv6 TCP/UDP frame.
type frameLayout struct {
	l3, l4, hdrLen int // offsets: IP header, L4 header, first payload byte
	v4             bool
	proto          uint8
}

// layout parses frame; l4 comes from the vnet header when it is set (IPv6
// extension headers), else from the IP header.
func layout(frame []byte, h vnetHdr) (frameLayout, bool) {
	var f frameLayout
	if len(frame) < ethHdrLen+20 {
		return f, false
	}
	f.l3 = ethHdrLen
	switch be.Uint16(frame[12:]) {
	case etherTypeIP4:
		ihl := int(frame[f.l3]&0xF) * 4
		if frame[f.l3]>>4 != 4 || ihl < 20 {
			return f, false
		}
		f.v4, f.proto, f.l4 = true, frame[f.l3+9], f.l3+ihl
	case etherTypeIP6:
		if len(frame) < f.l3+40 || frame[f.l3]>>4 != 6 {
			return f, false
		}
		f.proto, f.l4 = frame[f.l3+6], f.l3+40
	default:
		return f, false
	}
	if h.needsCsum() && int(h.csumStart) > f.l3 {
		f.l4 = int(h.csumStart)
		switch h.gso() {
		case unix.VIRTIO_NET_HDR_GSO_TCPV4, unix.VIRTIO_NET_HDR_GSO_TCPV6:
			f.proto = protoTCP
		case unix.VIRTIO_NET_HDR_GSO_UDP_L4:
			f.proto = protoUDP
		}
	}
	switch f.proto {
	case protoTCP:
		if len(frame) < f.l4+20 {
			return f, false
		}
		f.hdrLen = f.l4 + int(frame[f.l4+12]>>4)*4
	case protoUDP:
		f.hdrLen = f.l4 + 8
	default:
		return f, false
	}
	return f, f.hdrLen <= len(frame)
}

// gsoSegments is how many wire packets a frame stands for, and their total
// length; a plain frame is (1, len).
func gsoSegments(frame []byte, h vnetHdr) (int, int) {
	if h.gso() == unix.VIRTIO_NET_HDR_GSO_NONE || h.gsoSize == 0 {
		return 1, len(frame)
	}
	f, ok := layout(frame, h)
	if !ok || f.hdrLen >= len(frame) {
		return 1, len(frame)
	}
	payload := len(frame) - f.hdrLen
	n := (payload + int(h.gsoSize) - 1) / int(h.gsoSize)
	return n, len(frame) + (n-1)*f.hdrLen
}

// segment splits a GSO frame into wire frames. alloc returns a buffer of
// exactly vnetHdrLen+n bytes for a segment of n bytes. It returns false,
// without calling alloc, when the frame is not something it can split
// (the caller then forwards it whole).
func segment(frame []byte, h vnetHdr, alloc func(n int) []byte) bool {
	gt := h.gso()
	if (gt != unix.VIRTIO_NET_HDR_GSO_TCPV4 && gt != unix.VIRTIO_NET_HDR_GSO_TCPV6 &&
		gt != unix.VIRTIO_NET_HDR_GSO_UDP_L4) || h.gsoSize == 0 {
		return false
	}
	f, ok := layout(frame, h)
	if !ok || f.hdrLen >= len(frame) || (gt == unix.VIRTIO_NET_HDR_GSO_UDP_L4) != (f.proto == protoUDP) {
		return false
	}
	mss := int(h.gsoSize)
	hdr, payload := frame[:f.hdrLen], frame[f.hdrLen:]
	n := (len(payload) + mss - 1) / mss
	var seq uint32
	var flags uint8
	if f.proto == protoTCP {
		seq, flags = be.Uint32(frame[f.l4+4:]), frame[f.l4+13]
	}
	var id uint16
	if f.v4 {
		id = be.Uint16(frame[f.l3+4:])
	}
	csumOff := uint16(16)
	if f.proto == protoUDP {
		csumOff = 6
	}
	for i := 0; i < n; i++ {
		chunk := payload[i*mss : min(len(payload), (i+1)*mss)]
		buf := alloc(len(hdr) + len(chunk))
		vnetHdr{
			flags: unix.VIRTIO_NET_HDR_F_NEEDS_CSUM, hdrLen: uint16(len(hdr)),
			csumStart: uint16(f.l4), csumOffset: csumOff,
		}.put(buf)
		s := buf[vnetHdrLen:]
		copy(s, hdr)
		copy(s[len(hdr):], chunk)
		ip := s[f.l3:]
		if f.v4 {
			be.PutUint16(ip[2:], uint16(len(s)-f.l3))
			be.PutUint16(ip[4:], id+uint16(i))
			ipv4HeaderCsum(ip)
		} else {
			be.PutUint16(ip[4:], uint16(len(s)-f.l3-40))
		}
		l4 := s[f.l4:]
		if f.proto == protoTCP {
			be.PutUint32(l4[4:], seq+uint32(i*mss))
			fl := flags
			if i < n-1 {
				fl &^= 0x01 | 0x08 // FIN, PSH only on the last segment
			}
			if i > 0 {
				fl &^= 0x80 // CWR only on the first
			}
			l4[13] = fl
		} else {
			be.PutUint16(l4[4:], uint16(len(l4)))
		}
		be.PutUint16(l4[csumOff:], inet.Fold(pseudoSum(ip, f.proto, len(l4))))
	}
	return true
}

// VnetHdrLen is the size of the virtio_net_hdr that AF_PACKET sockets
// with PACKET_VNET_HDR put before every frame.
const VnetHdrLen = vnetHdrLen

// SplitGSO cuts a frame read with its virtio_net_hdr (PACKET_VNET_HDR) into
// wire frames, each with a header of its own and its L4 checksum left
// partial; alloc returns a buffer of exactly VnetHdrLen+n bytes for a
// segment of n bytes. It returns false, without calling alloc, for a frame
// that is not a GSO frame it can split (forward that one as it is).
func SplitGSO(raw []byte, alloc func(n int) []byte) bool {
	if len(raw) < vnetHdrLen+ethHdrLen {
		return false
	}
	h := parseVnet(raw)
	if h.gso() == unix.VIRTIO_NET_HDR_GSO_NONE {
		return false
	}
	return segment(raw[vnetHdrLen:], h, alloc)
}
