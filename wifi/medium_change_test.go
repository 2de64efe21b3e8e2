package wifi

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/wifi/model"
)

// A station joins and leaves a running hwsim medium: its frames are its
// own from the first (not an unknown transmitter's), its links are the
// path loss's, and once it left it hears nothing and no one hears it;
// what cannot join is refused with the reason, the medium unchanged.
func TestHwsimMediumAddRemoveRadio(t *testing.T) {
	ap := [6]byte{2, 0, 0, 0, 0, 1}
	cfg := MediumConfig{Radios: []MediumRadio{
		{Node: "ap1", Perm: [6]byte{0x42, 0, 0, 0, 0, 1}, Addrs: [][6]byte{ap}, AP: -1, TxPowerDBm: 20, Mode: "g", FreqMHz: 2437},
		{Node: "sta1", Perm: [6]byte{0x42, 0, 0, 0, 0, 2}, AP: 0, TxPowerDBm: 20, Pos: [3]float64{5, 0, 0}}},
		PathLoss: model.DefaultPathLoss(2437), NoiseFigureDB: 7}
	s, err := NewMediumServer(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sta2 := MediumRadio{Node: "sta2", Perm: [6]byte{0x42, 0, 0, 0, 0, 3}, Addrs: [][6]byte{{2, 0, 0, 0, 0, 3}}, AP: 0, TxPowerDBm: 20, Pos: [3]float64{20, 0, 0}}
	for _, c := range []struct {
		r    MediumRadio
		want string
	}{
		{MediumRadio{Node: "ap2", Perm: [6]byte{0x42, 9}, AP: -1}, "radio of ap2 has no channel"},
		{MediumRadio{Node: "ap2", Perm: [6]byte{0x42, 9}, AP: -1, FreqMHz: 2462, MLO: true}, "multi-link access point"},
		{MediumRadio{Node: "sta1", Perm: [6]byte{0x42, 9}, AP: 0}, "has a radio of sta1 already"},
		{MediumRadio{Node: "x", Perm: cfg.Radios[1].Perm, AP: 0}, "is another radio's"},
		{MediumRadio{Node: "x", Perm: [6]byte{0x42, 9}, AP: 1}, "names no access point"},
		{MediumRadio{Node: "x", Perm: [6]byte{0x42, 9}, AP: 0, MLO: true}, "multi-link"},
	} {
		if _, err := s.AddRadio(c.r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddRadio(%s): %v, want %q", c.r.Node, err, c.want)
		}
	}
	if len(s.cfg.Radios) != 2 {
		t.Fatalf("refusals changed the medium: %d radios", len(s.cfg.Radios))
	}
	i, err := s.AddRadio(sta2)
	if err != nil || i != 2 {
		t.Fatalf("AddRadio(sta2): %d, %v", i, err)
	}
	// its first frame is its own
	s.mu.Lock()
	s.submit(time.Millisecond, &HwFrame{Transmitter: sta2.Perm, Freq: 2437, Data: make([]byte, 24), Rates: [4]HwRate{{Idx: 0, Count: 1}, {Idx: -1}, {Idx: -1}, {Idx: -1}}})
	s.mu.Unlock()
	st := s.Stats()
	if st.Unknown != 0 {
		t.Errorf("sta2's first frame was an unknown transmitter's")
	}
	var apToSta2 *LinkInfo
	for k, l := range st.Links {
		if l.From == "ap1" && l.To == "sta2" {
			apToSta2 = &st.Links[k]
		}
	}
	lb := model.LinkBudget{TxPowerDBm: 20, PathLoss: cfg.PathLoss, NoiseFigureDB: 7, NoiseWidthMHz: 20}
	want, _ := lb.Between([3]float64{}, sta2.Pos)
	if apToSta2 == nil || math.Abs(apToSta2.RxDBm-want.RxDBm) > 0.01 || !apToSta2.Detect {
		t.Errorf("ap1 -> sta2: %+v, want %.2f dBm, detected", apToSta2, want.RxDBm)
	}
	if _, ok := st.Positions["sta2"]; !ok {
		t.Errorf("positions %v lack sta2", st.Positions)
	}
	// it leaves: off the medium, its slot kept
	if err := s.RemoveRadio("sta2"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveRadio("ap1"); err == nil || !strings.Contains(err.Error(), "(sta1 would be left without one)") {
		t.Errorf("RemoveRadio(ap1) with sta1 on it: %v", err)
	}
	st = s.Stats()
	if _, ok := st.Positions["sta2"]; ok || len(s.cfg.Radios) != 3 {
		t.Errorf("after sta2 left: positions %v, %d radios", st.Positions, len(s.cfg.Radios))
	}
	s.mu.Lock()
	l := s.link(0, 2)
	s.mu.Unlock()
	if l.OK || !math.IsInf(l.RxDBm, -1) {
		t.Errorf("ap1 -> sta2 after it left: %+v", l)
	}
	// and comes back with a new radio
	sta2.Perm = [6]byte{0x42, 0, 0, 0, 0, 4}
	if i, err := s.AddRadio(sta2); err != nil || i != 3 {
		t.Errorf("sta2 again: %d, %v", i, err)
	}
}

// TestHwsimMediumAddAP: an access point joins a running hwsim medium on a
// band the medium had no BSS on (its MAC parameters from the AP's mode,
// 802.11a: no QoS), its first frame is its own, a station joins it and
// hears it at the path loss's level; it leaves once its station has.
func TestHwsimMediumAddAP(t *testing.T) {
	cfg := MediumConfig{Radios: []MediumRadio{
		{Node: "ap1", Perm: [6]byte{0x42, 0, 0, 0, 0, 1}, AP: -1, TxPowerDBm: 20, Mode: "g", FreqMHz: 2437}},
		PathLoss: model.DefaultPathLoss(2437), NoiseFigureDB: 7}
	s, err := NewMediumServer(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.macs[model.Band5G]; ok {
		t.Fatal("5 GHz MAC parameters before any BSS there")
	}
	ap2 := MediumRadio{Node: "ap2", Perm: [6]byte{0x42, 0, 0, 0, 0, 2}, AP: -1, TxPowerDBm: 20, Mode: "a", FreqMHz: 5180, WidthMHz: 20, Pos: [3]float64{50, 0, 0}}
	if i, err := s.AddRadio(ap2); err != nil || i != 1 {
		t.Fatalf("AddRadio(ap2): %d, %v", i, err)
	}
	if got, want := s.macs[model.Band5G], model.DefaultMAC(model.ModeA, model.Band5G, false); !reflect.DeepEqual(got, want) {
		t.Errorf("5 GHz MAC parameters after ap2 (a) joined: %+v, want 802.11a's without QoS %+v", got, want)
	}
	sta := MediumRadio{Node: "sta9", Perm: [6]byte{0x42, 0, 0, 0, 0, 3}, AP: 1, TxPowerDBm: 20, Pos: [3]float64{50, 5, 0}}
	if i, err := s.AddRadio(sta); err != nil || i != 2 {
		t.Fatalf("AddRadio(sta9): %d, %v", i, err)
	}
	s.mu.Lock()
	s.submit(time.Millisecond, &HwFrame{Transmitter: ap2.Perm, Freq: 5180, Data: make([]byte, 24), Rates: [4]HwRate{{Idx: 0, Count: 1}, {Idx: -1}, {Idx: -1}, {Idx: -1}}})
	l := s.link(1, 2)
	s.mu.Unlock()
	if st := s.Stats(); st.Unknown != 0 {
		t.Error("ap2's first frame was an unknown transmitter's")
	}
	want, _ := model.LinkBudget{TxPowerDBm: 20, PathLoss: cfg.PathLoss, NoiseFigureDB: 7, NoiseWidthMHz: 20}.Between(ap2.Pos, sta.Pos)
	if math.Abs(l.RxDBm-want.RxDBm) > 0.01 || !l.OK {
		t.Errorf("ap2 -> sta9: %+v, want %.2f dBm", l, want.RxDBm)
	}
	if err := s.RemoveRadio("ap2"); err == nil || !strings.Contains(err.Error(), "(sta9 would be left without one)") {
		t.Errorf("RemoveRadio(ap2) with sta9 on it: %v", err)
	}
	for _, name := range []string{"sta9", "ap2"} {
		if err := s.RemoveRadio(name); err != nil {
			t.Fatalf("RemoveRadio(%s): %v", name, err)
		}
	}
	if _, ok := s.Stats().Positions["ap2"]; ok {
		t.Error("ap2 is still on the medium")
	}
}
