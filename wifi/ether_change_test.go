package wifi

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/wifi/model"
)

// TestEtherMediumAddRemoveRadio: a station added to a medium that runs
// gets the next radio and its own port, its frames reach its access point
// over the air and the AP's frames for it reach its port; removed, it is
// off the air (the AP's frames for it are dropped as for no station, its
// stats and links are gone) while the first station carries on. What
// cannot join or leave is refused, saying why, and changes nothing.
func TestEtherMediumAddRemoveRadio(t *testing.T) {
	s, sta, ap := engineBSS(t, "mcs7")
	s.ideal[1] = newIdealTable("n", model.Band5G, 20)
	sta2 := [6]byte{0x02, 0, 0, 0, 0, 9}
	fixed := *s.cfg.Radios[0].Fixed
	r := MediumRadio{Node: "sta2", MAC: sta2, AP: 1, Mode: "n", FreqMHz: 5180, WidthMHz: 20, QoS: true, TxPowerDBm: 20, Pos: [3]float64{0, 4, 0}, Fixed: &fixed}
	for _, bad := range []struct {
		r       MediumRadio
		ifindex int
		want    string
	}{
		{MediumRadio{Node: "ap2", AP: -1}, 20, "radio of ap2 has no channel"},
		{MediumRadio{Node: "ap2", AP: -1, FreqMHz: 5180, MLO: true}, 20, "multi-link access point"},
		{MediumRadio{Node: "sta3", AP: 0, FreqMHz: 5180}, 20, "names no access point"},
		{MediumRadio{Node: "sta", AP: 1, FreqMHz: 5180}, 20, "has a radio of sta already"},
		{r, 11, "not a new port"},
		{MediumRadio{Node: "sta3", AP: 1, FreqMHz: 5180, ESS: []int{1}}, 20, "roaming station"},
	} {
		if _, err := s.AddRadio(bad.r, bad.ifindex); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("AddRadio(%s, %d): %v, want %q", bad.r.Node, bad.ifindex, err, bad.want)
		}
	}
	if len(s.cfg.Radios) != 2 {
		t.Fatalf("refused adds changed the radios: %d", len(s.cfg.Radios))
	}
	idx, err := s.AddRadio(r, 21)
	if err != nil || idx != 2 {
		t.Fatalf("AddRadio: %d, %v", idx, err)
	}
	// the new station to its AP, the AP back to it, and the first
	// station still to its AP
	now := time.Duration(0)
	s.submit(now, 2, ethFrame(ap, sta2))
	s.submit(now, 1, ethFrame(sta2, ap))
	s.submit(now, 0, ethFrame(ap, sta))
	now = drain(s, now, nil)
	got := map[int]int{}
	for _, to := range s.sock.to {
		got[to]++
	}
	if got[12] != 2 || got[21] != 1 {
		t.Fatalf("deliveries by port: %v, want two to the AP's (12) and one to sta2's (21)", got)
	}
	st := s.Stats()
	if _, ok := st.Radios["sta2"]; !ok || st.Positions["sta2"] != r.Pos {
		t.Errorf("stats of the added station: %+v at %v", st.Radios["sta2"], st.Positions["sta2"])
	}
	if err := s.SetPosition("sta2", [3]float64{0, 6, 0}); err != nil {
		t.Errorf("moving the added station: %v", err)
	}
	s.sock.out, s.sock.to = s.sock.out[:0], s.sock.to[:0]

	if err := s.RemoveRadio("ap"); err == nil || !strings.Contains(err.Error(), "access point cannot leave a running medium while stations use it (sta, sta2 would be left") {
		t.Errorf("RemoveRadio(ap): %v", err)
	}
	if err := s.RemoveRadio("sta2"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveRadio("sta2"); err == nil {
		t.Error("sta2 removed twice")
	}
	before := s.stats.NoStation
	s.submit(now, 1, ethFrame(sta2, ap))
	s.submit(now, 0, ethFrame(ap, sta))
	drain(s, now, nil)
	if s.stats.NoStation != before+1 {
		t.Errorf("the AP's frame for the removed station: NoStation %d → %d, want one more", before, s.stats.NoStation)
	}
	if len(s.sock.to) != 1 || s.sock.to[0] != 12 {
		t.Errorf("after the removal, deliveries to ports %v: want sta's frame to the AP (12) alone", s.sock.to)
	}
	st = s.Stats()
	if _, ok := st.Radios["sta2"]; ok {
		t.Error("the removed station is still in the stats")
	}
	for _, l := range st.Links {
		if l.From == "sta2" || l.To == "sta2" {
			t.Errorf("a link of the removed station: %+v", l)
		}
	}
	if err := s.SetPosition("sta2", [3]float64{1, 1, 0}); err == nil {
		t.Error("the removed station moved")
	}
	// added again under the same name: a new radio and port
	if idx, err := s.AddRadio(r, 22); err != nil || idx != 3 {
		t.Errorf("sta2 added again: %d, %v", idx, err)
	}
}

// TestEtherMediumAddAP: an access point added to a running medium, on a
// band the medium had no BSS on, gets its rate table and sets the band's
// MAC parameters from its own mode (802.11g: no QoS), as the first BSS of
// a band does at start; a station added to it reaches it over the air on
// its channel (no fixed rate: the AP's table picks it) and its frames
// reach the station, while the first BSS carries on. The AP leaves only
// once its station has.
func TestEtherMediumAddAP(t *testing.T) {
	s, sta, ap := engineBSS(t, "mcs7")
	s.ideal[1] = newIdealTable("n", model.Band5G, 20)
	ap2, sta3 := [6]byte{0x02, 0, 0, 0, 0, 0x20}, [6]byte{0x02, 0, 0, 0, 0, 0x21}
	if _, ok := s.macs[model.Band2G4]; ok {
		t.Fatal("the medium has 2.4 GHz MAC parameters before any BSS there")
	}
	i, err := s.AddRadio(MediumRadio{Node: "ap2", MAC: ap2, AP: -1, Mode: "g", FreqMHz: 2412, WidthMHz: 20, TxPowerDBm: 20, Pos: [3]float64{50, 0, 0}}, 30)
	if err != nil || i != 2 {
		t.Fatalf("AddRadio(ap2): %d, %v", i, err)
	}
	if s.ideal[2] == nil {
		t.Error("the added AP has no rate table")
	}
	if got, want := s.macs[model.Band2G4], model.DefaultMAC(model.ModeG, model.Band2G4, false); !reflect.DeepEqual(got, want) {
		t.Errorf("2.4 GHz MAC parameters after ap2 (g) joined: %+v, want 802.11g's without QoS %+v", got, want)
	}
	j, err := s.AddRadio(MediumRadio{Node: "sta3", MAC: sta3, AP: 2, Mode: "g", FreqMHz: 2412, WidthMHz: 20, TxPowerDBm: 20, Pos: [3]float64{50, 4, 0}}, 31)
	if err != nil || j != 3 {
		t.Fatalf("AddRadio(sta3): %d, %v", j, err)
	}
	now := time.Duration(0)
	s.submit(now, 3, ethFrame(ap2, sta3))
	s.submit(now, 2, ethFrame(sta3, ap2))
	s.submit(now, 0, ethFrame(ap, sta))
	now = drain(s, now, nil)
	got := map[int]int{}
	for _, to := range s.sock.to {
		got[to]++
	}
	if got[30] != 1 || got[31] != 1 || got[12] != 1 || len(got) != 3 {
		t.Fatalf("deliveries by port: %v, want one each to ap2's (30), sta3's (31) and ap's (12)", got)
	}
	st := s.Stats()
	if r := st.Radios["sta3"]; r.Attempts == 0 {
		t.Errorf("sta3 sent nothing on the air: %+v", r)
	}
	if err := s.RemoveRadio("ap2"); err == nil || !strings.Contains(err.Error(), "(sta3 would be left without one)") {
		t.Errorf("RemoveRadio(ap2) with sta3 on it: %v", err)
	}
	if err := s.RemoveRadio("sta3"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveRadio("ap2"); err != nil {
		t.Fatalf("RemoveRadio(ap2) once alone: %v", err)
	}
	s.sock.out, s.sock.to = s.sock.out[:0], s.sock.to[:0]
	s.submit(now, 0, ethFrame(ap, sta))
	drain(s, now, nil)
	if len(s.sock.to) != 1 || s.sock.to[0] != 12 {
		t.Errorf("after ap2 left, deliveries to ports %v: want sta's frame to ap (12)", s.sock.to)
	}
	if _, ok := s.Stats().Radios["ap2"]; ok {
		t.Error("the removed AP is still in the stats")
	}
}

// TestEtherMediumAddAdhoc: a member added to a running ad hoc network
// sends straight to the member it addresses (no AP relays), its group
// frames reach every member, and the members' frames to it reach its
// port; removed, frames for it are dropped as for no station.
func TestEtherMediumAddAdhoc(t *testing.T) {
	m1, m2, m3 := [6]byte{0x02, 0, 0, 0, 1, 1}, [6]byte{0x02, 0, 0, 0, 1, 2}, [6]byte{0x02, 0, 0, 0, 1, 3}
	member := func(name string, mac [6]byte, x float64) MediumRadio {
		return MediumRadio{Node: name, MAC: mac, AP: -1, Adhoc: 1, Mode: "g", FreqMHz: 2462, WidthMHz: 20, TxPowerDBm: 20, Pos: [3]float64{x, 0, 0}}
	}
	cfg := MediumConfig{Radios: []MediumRadio{member("a", m1, 0), member("b", m2, 5)}, PathLoss: model.DefaultPathLoss(2462), NoiseFigureDB: 7}
	s, err := newEtherMedium(cfg, []int{11, 12})
	if err != nil {
		t.Fatal(err)
	}
	s.sock = &etherSock{fd: -1}
	if i, err := s.AddRadio(member("c", m3, 10), 13); err != nil || i != 2 {
		t.Fatalf("AddRadio(c): %d, %v", i, err)
	}
	if s.ideal[2] == nil {
		t.Error("the added member has no rate table")
	}
	bcast := [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	now := time.Duration(0)
	s.submit(now, 2, ethFrame(m2, m3))    // c → b
	s.submit(now, 0, ethFrame(m3, m1))    // a → c
	s.submit(now, 2, ethFrame(bcast, m3)) // c → everyone
	drain(s, now, nil)
	got := map[int]int{}
	for _, to := range s.sock.to {
		got[to]++
	}
	if got[12] != 2 || got[13] != 1 || got[11] != 1 {
		t.Fatalf("deliveries by port: %v, want b's (12) two (c's unicast and group frames), c's (13) one, a's (11) one", got)
	}
	if err := s.RemoveRadio("c"); err != nil {
		t.Fatal(err)
	}
	before := s.stats.NoStation
	s.submit(now, 0, ethFrame(m3, m1))
	drain(s, now, nil)
	if s.stats.NoStation != before+1 {
		t.Errorf("a's frame for the removed member: NoStation %d → %d, want one more", before, s.stats.NoStation)
	}
}
