package wifi

import (
	"testing"
	"time"

	"github.com/emuctl/emuctl/wifi/model"
)

// hdr is an 802.11 header: type (0 management, 2 data), the DS bits
// (1 to-DS, 2 from-DS), addresses 1 and 2.
func hdr(typ, ds byte, a1, a2 [6]byte) []byte {
	d := make([]byte, 24)
	d[0], d[1] = typ<<2, ds
	copy(d[4:10], a1[:])
	copy(d[10:16], a2[:])
	return d
}

// TestHwsimMediumRoaming: the hwsim medium watching a station of a
// network of two APs (wpa_supplicant roams there): data to and from ap1
// make it ap1's; an authentication frame to ap2 begins a handover, which
// ap1's queued frames do not complete and the first data frame with ap2
// (from ap2, here) does, off the air from the last data with ap1; back to
// ap1 the same way.
func TestHwsimMediumRoaming(t *testing.T) {
	sta, b1, b2 := [6]byte{2, 0, 0, 0, 0, 1}, [6]byte{2, 0, 0, 0, 0, 2}, [6]byte{2, 0, 0, 0, 0, 3}
	cfg := MediumConfig{Radios: []MediumRadio{
		{Node: "sta", Perm: [6]byte{0x42, 0, 0, 0, 0, 1}, Addrs: [][6]byte{sta}, ESS: []int{1, 2}, TxPowerDBm: 20, Pos: [3]float64{30, 0, 0}},
		{Node: "ap1", Perm: [6]byte{0x42, 0, 0, 0, 0, 2}, Addrs: [][6]byte{b1}, TxPowerDBm: 20},
		{Node: "ap2", Perm: [6]byte{0x42, 0, 0, 0, 0, 3}, Addrs: [][6]byte{b2}, TxPowerDBm: 20, Pos: [3]float64{80, 0, 0}}},
		PathLoss: model.DefaultPathLoss(2412), NoiseFigureDB: 7}
	s, err := NewMediumServer(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	s.sawFrame(10*ms, 0, hdr(2, 1, b1, sta)) // sta → ap1
	s.sawFrame(20*ms, 1, hdr(2, 2, sta, b1)) // ap1 → sta
	if s.roam[0].ap != 1 || len(s.handovers) != 0 {
		t.Fatalf("after data with ap1: %+v, %d handovers", s.roam[0], len(s.handovers))
	}
	s.sawFrame(500*ms, 0, hdr(0, 0, b2, sta)) // authentication to ap2
	s.sawFrame(510*ms, 1, hdr(2, 2, sta, b1)) // ap1's queued frame
	if len(s.handovers) != 0 {
		t.Fatal("ap1's queued frame completed a handover")
	}
	s.sawFrame(530*ms, 2, hdr(2, 2, sta, b2)) // ap2 → sta: done
	if len(s.handovers) != 1 {
		t.Fatalf("handovers %+v", s.handovers)
	}
	h := s.handovers[0]
	// off the air from the last data with ap1 (20 ms) to the first with ap2
	if h.From != "ap1" || h.To != "ap2" || h.At != 500*ms || h.OffAir != 510*ms || h.ToSNRdB <= h.FromSNRdB-10 {
		t.Errorf("handover %+v", h)
	}
	s.sawFrame(900*ms, 0, hdr(0, 0, b1, sta)) // back to ap1
	s.sawFrame(950*ms, 0, hdr(2, 1, b1, sta))
	if len(s.handovers) != 2 || s.handovers[1].From != "ap2" || s.handovers[1].OffAir != 420*ms || s.roam[0].ap != 1 {
		t.Errorf("back to ap1: %+v, %+v", s.handovers, s.roam[0])
	}
	if st := s.Stats(); st.Assoc["sta"] != "ap1" || len(st.Handovers) != 2 {
		t.Errorf("stats %v %d", st.Assoc, len(st.Handovers))
	}
}
