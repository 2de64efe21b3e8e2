package engine

import "sync"

// packet is one frame inside the engine: its virtio_net_hdr and the
// Ethernet frame, contiguous, as read from and written to the sockets.
type packet struct {
	buf  []byte // vnet header + frame; len is the used length
	wire int    // bytes on the wire (a GSO frame: all its segments)
	segs int    // wire packets it stands for (1 unless a GSO frame passed whole)
	due  int64  // engine clock (ns) at which to transmit
	arr  int64  // engine clock (ns) at which it entered a discipline's queue
	in   int64  // engine clock (ns) at which it arrived (the kernel's stamp)
	seen int64  // engine clock (ns) at which the engine read it
	cls  int8   // buffer size class, for release

	refused bool // the kernel would not transmit it

	// A segment the engine cut from a GSO frame, which the writer may join
	// again with its neighbours (see coalesce.go); origin 0 = never.
	origin uint32
	seg    uint16 // index within the original frame
	gso    segInfo
}

func (p *packet) frame() []byte { return p.buf[vnetHdrLen:] }

// Buffers come in three sizes so a delay line full of 1.5 KB frames does
// not pin 64 KB per frame.
var bufClasses = [...]int{2048, 16384, vnetHdrLen + 65536 + 256}

var packetPools [len(bufClasses)]sync.Pool

// getPacket returns a packet whose buf has length n.
func getPacket(n int) *packet {
	c := 0
	for c < len(bufClasses)-1 && n > bufClasses[c] {
		c++
	}
	if n > bufClasses[c] {
		return &packet{buf: make([]byte, n), cls: -1}
	}
	p, _ := packetPools[c].Get().(*packet)
	if p == nil {
		p = &packet{buf: make([]byte, bufClasses[c]), cls: int8(c)}
	}
	p.buf = p.buf[:n]
	p.wire, p.segs, p.due, p.refused, p.origin = 0, 1, 0, false, 0
	return p
}

func (p *packet) release() {
	if p.cls >= 0 {
		p.buf = p.buf[:cap(p.buf)]
		packetPools[p.cls].Put(p)
	}
}

// clone copies p into a fresh packet.
func (p *packet) clone() *packet {
	q := getPacket(len(p.buf))
	copy(q.buf, p.buf)
	q.wire, q.segs, q.due, q.in, q.seen = p.wire, p.segs, p.due, p.in, p.seen
	q.origin, q.seg, q.gso = p.origin, p.seg, p.gso
	return q
}
