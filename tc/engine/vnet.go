package engine

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// The engine's sockets use PACKET_VNET_HDR: every frame read or written
// starts with a struct virtio_net_hdr that carries the checksum-offload
// and GSO state of the skb. That lets TCP work without turning offloads
// off anywhere (checksums left to "hardware" stay partial end to end) and
// lets the engine see GSO super-frames as what they are.

// ne is the byte order of the virtio-net header (the host's).
var ne = binary.NativeEndian

const vnetHdrLen = 10 // sizeof(struct virtio_net_hdr)

type vnetHdr struct {
	flags      uint8  // VIRTIO_NET_HDR_F_NEEDS_CSUM, _DATA_VALID
	gsoType    uint8  // VIRTIO_NET_HDR_GSO_*
	hdrLen     uint16 // length of the headers (a hint)
	gsoSize    uint16 // payload bytes per segment
	csumStart  uint16 // offset of the L4 header from the frame start
	csumOffset uint16 // offset of the checksum field from csumStart
}

func parseVnet(b []byte) vnetHdr {
	return vnetHdr{
		flags:      b[0],
		gsoType:    b[1],
		hdrLen:     ne.Uint16(b[2:]),
		gsoSize:    ne.Uint16(b[4:]),
		csumStart:  ne.Uint16(b[6:]),
		csumOffset: ne.Uint16(b[8:]),
	}
}

func (h vnetHdr) put(b []byte) {
	b[0], b[1] = h.flags, h.gsoType
	ne.PutUint16(b[2:], h.hdrLen)
	ne.PutUint16(b[4:], h.gsoSize)
	ne.PutUint16(b[6:], h.csumStart)
	ne.PutUint16(b[8:], h.csumOffset)
}

func (h vnetHdr) needsCsum() bool { return h.flags&unix.VIRTIO_NET_HDR_F_NEEDS_CSUM != 0 }

func (h vnetHdr) gso() uint8 { return h.gsoType &^ unix.VIRTIO_NET_HDR_GSO_ECN }
