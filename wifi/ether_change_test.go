package wifi

import (
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
		{MediumRadio{Node: "ap2", AP: -1, FreqMHz: 5180}, 20, "an access point cannot join"},
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

	if err := s.RemoveRadio("ap"); err == nil || !strings.Contains(err.Error(), "access point cannot leave") {
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
