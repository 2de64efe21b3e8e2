package wifi

import (
	"testing"
	"time"

	"github.com/emuctl/emuctl/tc/engine"
	"github.com/emuctl/emuctl/wifi/model"
)

// engineBSS is a station and its access point on 802.11n channel 36 at
// 20 MHz, 3 m apart, for the engine medium without a socket.
func engineBSS(t testing.TB, rate string) (*EtherMedium, [6]byte, [6]byte) {
	sta, ap := [6]byte{0x02, 0, 0, 0, 0, 1}, [6]byte{0x02, 0, 0, 0, 0, 2}
	fixed, err := model.ParseRate(model.ModeN, rate, 20, 1, 800*time.Nanosecond)
	if err != nil {
		t.Fatal(err)
	}
	cfg := MediumConfig{Radios: []MediumRadio{
		{Node: "sta", MAC: sta, AP: 1, Mode: "n", FreqMHz: 5180, WidthMHz: 20, QoS: true, TxPowerDBm: 20, Fixed: &fixed},
		{Node: "ap", MAC: ap, AP: -1, Mode: "n", FreqMHz: 5180, WidthMHz: 20, QoS: true, TxPowerDBm: 20, Pos: [3]float64{3, 0, 0}, Fixed: &fixed}},
		PathLoss: model.DefaultPathLoss(5180), NoiseFigureDB: 7, AMPDU: true}
	s, err := newEtherMedium(cfg, []int{11, 12})
	if err != nil {
		t.Fatal(err)
	}
	s.sock = &etherSock{fd: -1}
	return s, sta, ap
}

// ethFrame is an Ethernet frame with a 1500-byte IPv4 packet, behind an
// empty virtio_net_hdr, as the engine reads it.
func ethFrame(dst, src [6]byte) []byte {
	b := make([]byte, engine.VnetHdrLen+14+1500)
	e := b[engine.VnetHdrLen:]
	copy(e[0:], dst[:])
	copy(e[6:], src[:])
	e[12], e[13], e[14] = 0x08, 0x00, 0x45
	return b
}

// TestEtherMediumForwarding: a station's frame reaches its AP's port as
// the 802.11 frame the air carried (to-DS QoS data, LLC/SNAP, the
// payload), the AP's frame for an unknown station is dropped, and a
// unicast frame between two stations of the AP crosses the air twice.
func TestEtherMediumForwarding(t *testing.T) {
	s, sta, ap := engineBSS(t, "mcs7")
	s.ideal[1] = newIdealTable("n", model.Band5G, 20)
	now := time.Duration(0)
	s.submit(now, 0, ethFrame(ap, sta))
	var air []model.Air
	var m []byte
	s.m.ReportAir(true)
	for {
		at, ok := s.m.Next()
		if !ok {
			break
		}
		now = at
		s.advance(at, func(ev any) {
			if a, ok := ev.(model.Air); ok {
				air = append(air, a)
				m = s.MPDU(a.Frames[0]) // before the frame is recycled at its status
				if got, want := a.Frames[0].Len(), 26+8+1500+4; got != want {
					t.Errorf("airtime length %d, want %d (QoS header, LLC/SNAP, IP packet, FCS)", got, want)
				}
				return
			}
			s.emitter(at)(ev)
		})
	}
	if len(s.sock.out) != 1 || s.sock.to[0] != 12 || len(s.sock.out[0]) != engine.VnetHdrLen+14+1500 {
		t.Fatalf("deliveries %d to %v", len(s.sock.out), s.sock.to)
	}
	if len(air) != 1 {
		t.Fatalf("air events %d, want one PPDU", len(air))
	}
	if m[0] != 0x88 || m[1]&0x01 == 0 || [6]byte(m[4:10]) != ap || [6]byte(m[10:16]) != sta || m[26] != 0xaa || len(m) != 26+8+1500 {
		t.Errorf("the MPDU on the air: % x ... (%d bytes)", m[:34], len(m))
	}
	// the AP has no station 02:..:99
	s.submit(now, 1, ethFrame([6]byte{0x02, 0, 0, 0, 0, 0x99}, ap))
	if s.stats.NoStation != 1 {
		t.Errorf("a frame for an unknown station: NoStation %d", s.stats.NoStation)
	}
}

// BenchmarkEtherGlue is the engine medium's CPU per delivered frame: read
// a frame as a node sent it (its Ethernet header), build the 802.11
// header, submit it, advance the model, queue the delivery (no syscall).
// 802.11n MCS 7 with A-MPDU, one saturated station.
func BenchmarkEtherGlue(b *testing.B) {
	s, sta, ap := engineBSS(b, "mcs7")
	frame := ethFrame(ap, sta)
	now := time.Duration(0)
	delivered, pending := 0, 0
	emit := s.emitter(0)
	count := func(ev any) {
		switch ev.(type) {
		case model.Reception:
			delivered++
		case model.Status:
			pending--
		}
		emit(ev)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for delivered < b.N {
		for pending < 96 {
			s.submit(now, 0, append([]byte(nil), frame...))
			pending++
		}
		at, ok := s.m.Next()
		if !ok {
			b.Fatal("no event")
		}
		now = at
		s.advance(at, count)
		s.sock.out, s.sock.to = s.sock.out[:0], s.sock.to[:0]
	}
	b.StopTimer()
	b.ReportMetric(float64(delivered)*1472*8/now.Seconds()/1e6, "sim-Mbit/s")
	b.ReportMetric(float64(delivered)/b.Elapsed().Seconds(), "frames/cpu-s")
}
