package engine

import (
	"github.com/emuctl/emuctl/internal/inet"
	"golang.org/x/sys/unix"
)

// On a direction without a rate the link is infinitely fast: a GSO frame's
// segments would arrive together. The engine still cuts such frames when
// it must decide per packet (loss, duplication, corruption), but the
// writer joins the surviving neighbours that are due in the same batch
// back into one GSO frame. Besides saving per-packet work, this matters
// for TCP: a receiver handed bursts of dozens of MTU frames at once
// mis-measures its read rate (Linux 6.18 DRS discounts the bytes still
// queued) and never grows its window: a 10 ms link with 0.01 % loss gave
// 52 Mbit/s before, line rate after. Directions with a rate never
// coalesce: their frames are paced and each is its own arrival.

// segInfo is what the writer needs to join segments again.
type segInfo struct {
	gsoType uint8
	mss     uint16
	l4      uint16 // L4 header offset in the frame
	hdrLen  uint16 // headers length
}

// coalesce replaces runs of consecutive segments of the same frame in
// batch by one GSO frame each. It reuses batch's storage.
func coalesce(batch []*packet) []*packet {
	out := batch[:0]
	for i := 0; i < len(batch); {
		p := batch[i]
		j := i + 1
		if p.origin != 0 {
			for j < len(batch) && batch[j].origin == p.origin && batch[j].seg == batch[j-1].seg+1 &&
				len(batch[j-1].frame())-int(p.gso.hdrLen) == int(p.gso.mss) {
				j++
			}
		}
		if j-i < 2 {
			out = append(out, p)
		} else {
			m := join(batch[i:j])
			for _, s := range batch[i:j] {
				s.release()
			}
			out = append(out, m) // may overwrite batch[i]: released above
		}
		i = j
	}
	return out
}

// join builds one GSO frame from consecutive segments (same headers but
// for lengths, IDs, sequence numbers and flags).
func join(segs []*packet) *packet {
	first, last := segs[0], segs[len(segs)-1]
	g := first.gso
	hl := int(g.hdrLen)
	total := hl
	for _, s := range segs {
		total += len(s.frame()) - hl
	}
	p := getPacket(vnetHdrLen + total)
	f := p.frame()
	copy(f, first.frame())
	off := len(first.frame())
	for _, s := range segs[1:] {
		off += copy(f[off:], s.frame()[hl:])
	}
	ip := f[ethHdrLen:]
	l4 := f[g.l4:]
	proto := uint8(protoTCP)
	if g.gsoType == unix.VIRTIO_NET_HDR_GSO_UDP_L4 {
		proto = protoUDP
	}
	if ip[0]>>4 == 4 {
		be.PutUint16(ip[2:], uint16(total-ethHdrLen))
		ipv4HeaderCsum(ip)
	} else {
		be.PutUint16(ip[4:], uint16(total-ethHdrLen-40))
	}
	csumOff := uint16(16)
	if proto == protoTCP {
		lf := last.frame()[g.l4+13]
		l4[13] = l4[13]&^(0x01|0x08) | lf&(0x01|0x08) // FIN, PSH as on the last segment
	} else {
		csumOff = 6
		be.PutUint16(l4[4:], uint16(len(l4)))
	}
	be.PutUint16(l4[csumOff:], inet.Fold(pseudoSum(ip, proto, len(l4))))
	vnetHdr{
		flags: unix.VIRTIO_NET_HDR_F_NEEDS_CSUM, gsoType: g.gsoType, hdrLen: g.hdrLen,
		gsoSize: g.mss, csumStart: g.l4, csumOffset: csumOff,
	}.put(p.buf)
	for _, s := range segs {
		p.wire += s.wire
	}
	p.segs = len(segs)
	p.due = first.due
	return p
}
