package engine

import (
	"testing"

	"github.com/emuctl/emuctl/internal/inet"
	"github.com/emuctl/emuctl/tc"
	"golang.org/x/sys/unix"
)

// gsoFrame builds a TCP (or UDP) GSO super-frame as a sender's stack
// hands it to a veth: one header, n bytes of payload, L4 checksum partial.
func gsoFrame(v6, udp bool, payload, mss int) ([]byte, vnetHdr) {
	l3 := ethHdrLen
	iplen := 20
	if v6 {
		iplen = 40
	}
	l4len := 32 // TCP with timestamps
	if udp {
		l4len = 8
	}
	f := make([]byte, l3+iplen+l4len+payload)
	if v6 {
		be.PutUint16(f[12:], etherTypeIP6)
		f[l3] = 0x60
		be.PutUint16(f[l3+4:], uint16(l4len+payload))
		f[l3+6] = protoTCP
		if udp {
			f[l3+6] = protoUDP
		}
		f[l3+7] = 64
		for i := 0; i < 32; i++ {
			f[l3+8+i] = byte(i + 1)
		}
	} else {
		be.PutUint16(f[12:], etherTypeIP4)
		f[l3] = 0x45
		be.PutUint16(f[l3+2:], uint16(iplen+l4len+payload))
		be.PutUint16(f[l3+4:], 1000)
		f[l3+6] = 0x40
		f[l3+8] = 64
		f[l3+9] = protoTCP
		if udp {
			f[l3+9] = protoUDP
		}
		copy(f[l3+12:], []byte{10, 9, 0, 1, 10, 9, 0, 2})
		ipv4HeaderCsum(f[l3:])
	}
	l4 := l3 + iplen
	be.PutUint16(f[l4:], 40000)
	be.PutUint16(f[l4+2:], 5001)
	h := vnetHdr{flags: unix.VIRTIO_NET_HDR_F_NEEDS_CSUM, gsoSize: uint16(mss), csumStart: uint16(l4), hdrLen: uint16(l4 + l4len)}
	if udp {
		be.PutUint16(f[l4+4:], uint16(8+payload))
		h.gsoType, h.csumOffset = unix.VIRTIO_NET_HDR_GSO_UDP_L4, 6
	} else {
		be.PutUint32(f[l4+4:], 0xFFFFF000) // seq near wrap-around
		f[l4+12] = 8 << 4
		f[l4+13] = 0x80 | 0x10 | 0x08 | 0x01 // CWR ACK PSH FIN
		h.gsoType, h.csumOffset = unix.VIRTIO_NET_HDR_GSO_TCPV4, 16
		if v6 {
			h.gsoType = unix.VIRTIO_NET_HDR_GSO_TCPV6
		}
	}
	for i := 0; i < payload; i++ {
		f[l4+l4len+i] = byte(i * 7)
	}
	return f, h
}

func TestSegment(t *testing.T) {
	for _, c := range []struct {
		name    string
		v6, udp bool
	}{{"tcp4", false, false}, {"tcp6", true, false}, {"udp4", false, true}, {"udp6", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			const payload, mss = 4000, 1448
			f, h := gsoFrame(c.v6, c.udp, payload, mss)
			var segs [][]byte
			ok := segment(f, h, func(n int) []byte {
				b := make([]byte, vnetHdrLen+n)
				segs = append(segs, b)
				return b
			})
			if !ok || len(segs) != 3 {
				t.Fatalf("segment: ok=%v, %d segments", ok, len(segs))
			}
			n, wire := gsoSegments(f, h)
			if n != 3 || wire != len(segs[0])+len(segs[1])+len(segs[2])-3*vnetHdrLen {
				t.Errorf("gsoSegments = %d, %d", n, wire)
			}
			lay, _ := layout(f, h)
			got := 0
			for i, b := range segs {
				sh := parseVnet(b)
				s := b[vnetHdrLen:]
				chunk := len(s) - lay.hdrLen
				if want := min(mss, payload-i*mss); chunk != want {
					t.Errorf("segment %d carries %d bytes, want %d", i, chunk, want)
				}
				if sh.gsoType != 0 || !sh.needsCsum() || int(sh.csumStart) != lay.l4 {
					t.Errorf("segment %d vnet header %+v", i, sh)
				}
				ip := s[lay.l3:]
				if c.v6 {
					if int(be.Uint16(ip[4:])) != len(s)-lay.l3-40 {
						t.Errorf("segment %d ipv6 payload length %d", i, be.Uint16(ip[4:]))
					}
				} else {
					if int(be.Uint16(ip[2:])) != len(s)-lay.l3 || be.Uint16(ip[4:]) != uint16(1000+i) {
						t.Errorf("segment %d ipv4 length %d id %d", i, be.Uint16(ip[2:]), be.Uint16(ip[4:]))
					}
					if inet.Fold(inet.Sum(0, ip[:20])) != 0xFFFF {
						t.Errorf("segment %d bad IPv4 header checksum", i)
					}
				}
				l4 := s[lay.l4:]
				if c.udp {
					if int(be.Uint16(l4[4:])) != len(l4) {
						t.Errorf("segment %d udp length %d", i, be.Uint16(l4[4:]))
					}
				} else {
					if seq := be.Uint32(l4[4:]); seq != 0xFFFFF000+uint32(i*mss) {
						t.Errorf("segment %d seq %#x", i, seq)
					}
					fl := l4[13]
					last, first := i == len(segs)-1, i == 0
					if (fl&0x01 != 0) != last || (fl&0x08 != 0) != last || (fl&0x80 != 0) != first || fl&0x10 == 0 {
						t.Errorf("segment %d flags %#x", i, fl)
					}
				}
				// complete the checksum as a NIC would, then verify it as a receiver does
				if !finishCsum(s, sh) {
					t.Fatalf("segment %d: finishCsum failed", i)
				}
				proto := uint8(protoTCP)
				if c.udp {
					proto = protoUDP
				}
				if inet.Fold(pseudoSum(ip, proto, len(l4))+inet.Sum(0, l4)) != 0xFFFF {
					t.Errorf("segment %d: L4 checksum does not verify", i)
				}
				for j := 0; j < chunk; j++ {
					if s[lay.hdrLen+j] != byte((i*mss+j)*7) {
						t.Fatalf("segment %d payload byte %d wrong", i, j)
					}
				}
				got += chunk
			}
			if got != payload {
				t.Errorf("segments carry %d bytes, want %d", got, payload)
			}
		})
	}
}

func TestSegmentRefuses(t *testing.T) {
	f, h := gsoFrame(false, false, 3000, 1448)
	h.gsoType = unix.VIRTIO_NET_HDR_GSO_UDP // UFO: IP fragments, not ours to split
	if segment(f, h, func(int) []byte { t.Fatal("alloc called"); return nil }) {
		t.Error("UFO frame segmented")
	}
	be.PutUint16(f[12:], 0x8100) // VLAN-tagged
	h.gsoType = unix.VIRTIO_NET_HDR_GSO_TCPV4
	if segment(f, h, func(int) []byte { t.Fatal("alloc called"); return nil }) {
		t.Error("VLAN frame segmented")
	}
	if n, w := gsoSegments(f, vnetHdr{}); n != 1 || w != len(f) {
		t.Errorf("plain frame counted as %d/%d", n, w)
	}
}

func BenchmarkSegment64K(b *testing.B) {
	f, h := gsoFrame(false, false, 65000, 1448)
	buf := make([]byte, 2048)
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		segment(f, h, func(n int) []byte { return buf[:vnetHdrLen+n] })
	}
}

func BenchmarkPipeline(b *testing.B) {
	pl := newPipeline(tc.Dir{Rate: 1e9, Delay: 10e6, Jitter: 1e6, Loss: 1}, 1500, newRand(1, 1))
	p := wirePacket(1514)
	var t int64
	for b.Loop() {
		t += 12000
		pl.run(p, t)
	}
}

// TestCoalesce cuts a GSO frame, drops one segment, and joins the rest:
// the result must be the original frame's bytes for each surviving run.
func TestCoalesce(t *testing.T) {
	for _, c := range []struct {
		name    string
		v6, udp bool
	}{{"tcp4", false, false}, {"tcp6", true, false}, {"udp4", false, true}} {
		t.Run(c.name, func(t *testing.T) {
			const payload, mss = 10000, 1448 // 7 segments, the last short
			f, h := gsoFrame(c.v6, c.udp, payload, mss)
			var segs []*packet
			segment(f, h, func(n int) []byte {
				p := getPacket(vnetHdrLen + n)
				p.wire, p.origin, p.seg = n, 9, uint16(len(segs))
				segs = append(segs, p)
				return p.buf
			})
			lay, _ := layout(f, h)
			for _, p := range segs {
				p.gso = segInfo{gsoType: h.gso(), mss: mss, l4: uint16(lay.l4), hdrLen: uint16(lay.hdrLen)}
			}
			batch := append(append([]*packet{}, segs[:3]...), segs[4:]...) // segment 3 lost
			out := coalesce(batch)
			if len(out) != 2 || out[0].segs != 3 || out[1].segs != 3 {
				t.Fatalf("coalesced into %d frames", len(out))
			}
			for k, o := range out {
				from := []int{0, 4}[k]
				vh := parseVnet(o.buf)
				of := o.frame()
				if vh.gsoType != h.gso() || vh.gsoSize != mss || !vh.needsCsum() {
					t.Errorf("frame %d vnet %+v", k, vh)
				}
				pl := of[lay.hdrLen:]
				want := f[lay.hdrLen+from*mss : min(len(f), lay.hdrLen+(from+3)*mss)]
				if string(pl) != string(want) {
					t.Errorf("frame %d payload differs (len %d want %d)", k, len(pl), len(want))
				}
				ip := of[ethHdrLen:]
				if !c.v6 && (int(be.Uint16(ip[2:])) != len(of)-ethHdrLen || inet.Fold(inet.Sum(0, ip[:20])) != 0xFFFF) {
					t.Errorf("frame %d IPv4 header", k)
				}
				if !c.udp {
					l4 := of[lay.l4:]
					if seq := be.Uint32(l4[4:]); seq != 0xFFFFF000+uint32(from*mss) {
						t.Errorf("frame %d seq %#x", k, seq)
					}
					last := k == 1 // FIN and PSH only at the end, CWR only at the start
					if (l4[13]&0x01 != 0) != last || (l4[13]&0x08 != 0) != last || (l4[13]&0x80 != 0) != (k == 0) {
						t.Errorf("frame %d flags %#x", k, l4[13])
					}
				}
				// a receiver's GSO split of the joined frame gives back the segments
				var again int
				segment(of, vh, func(n int) []byte { again++; return make([]byte, vnetHdrLen+n) })
				if again != 3 {
					t.Errorf("frame %d re-segments into %d", k, again)
				}
			}
		})
	}
}
