package wifi

import (
	"testing"
	"time"

	"github.com/emuctl/emuctl/wifi/model"
)

// llfNetwork is n stations at 10, 12, 14, ... m from ap1 (0 m) on the
// line to ap2 (40 m; both heard from everywhere between), 802.11n MCS 3,
// all associated with ap1, roaming least loaded first. Radios: the
// stations, then ap1 (n), then ap2 (n+1).
func llfNetwork(t *testing.T, n int) *EtherMedium {
	t.Helper()
	fixed, err := model.ParseRate(model.ModeN, "mcs3", 20, 1, 800*time.Nanosecond)
	if err != nil {
		t.Fatal(err)
	}
	roam := Roaming{HysteresisDB: 3, OffAir: time.Millisecond, LeastLoaded: true}
	var radios []MediumRadio
	var ports []int
	for i := range n {
		radios = append(radios, MediumRadio{Node: "sta" + string(rune('1'+i)), MAC: [6]byte{2, 0, 0, 0, 1, byte(i)}, AP: n, ESS: []int{n, n + 1},
			Roam: &roam, Mode: "n", FreqMHz: 5180, WidthMHz: 20, QoS: true, TxPowerDBm: 20, Pos: [3]float64{10 + 2*float64(i), 0, 0}, Fixed: &fixed})
		ports = append(ports, 11+i)
	}
	radios = append(radios,
		MediumRadio{Node: "ap1", MAC: essAP1, AP: -1, Mode: "n", FreqMHz: 5180, WidthMHz: 20, QoS: true, TxPowerDBm: 20, Fixed: &fixed},
		MediumRadio{Node: "ap2", MAC: essAP2, AP: -1, Mode: "n", FreqMHz: 5200, WidthMHz: 20, QoS: true, TxPowerDBm: 20, Pos: [3]float64{40, 0, 0}, Fixed: &fixed})
	ports = append(ports, 11+n, 12+n)
	s, err := newEtherMedium(MediumConfig{Radios: radios, PathLoss: model.DefaultPathLoss(5180), NoiseFigureDB: 7, AMPDU: true}, ports)
	if err != nil {
		t.Fatal(err)
	}
	s.sock = &etherSock{fd: -1}
	return s
}

// TestLeastLoadedAP: three stations that all hear ap1 better associate,
// in radio order, with the AP that has fewer stations (ties: the one
// heard better): ap1, ap2, ap1 — two and one, not three on ap1.
func TestLeastLoadedAP(t *testing.T) {
	s := llfNetwork(t, 3)
	load := map[int]int{}
	var got []string
	for i := range 3 {
		if !hears(s.cfg.Link(4, i)) || s.cfg.Link(3, i).SNRdB <= s.cfg.Link(4, i).SNRdB {
			t.Fatalf("station %d: ap2 heard %v, ap1 %.1f dB vs ap2 %.1f dB: want both heard, ap1 better", i, hears(s.cfg.Link(4, i)), s.cfg.Link(3, i).SNRdB, s.cfg.Link(4, i).SNRdB)
		}
		ap := LeastLoadedAP(&s.cfg, i, load)
		load[ap]++
		got = append(got, s.cfg.Radios[ap].Node)
	}
	if got[0] != "ap1" || got[1] != "ap2" || got[2] != "ap1" {
		t.Errorf("stations associated with %v, want [ap1 ap2 ap1]", got)
	}
}

// TestEtherMediumRoamingLLF: four stations on ap1, ap2 empty and heard:
// one station (the first in order) moves, since 0 + 2 < 4 (Mininet-WiFi's
// llf rule); then 1 + 2 < 3 does not hold and nobody moves again (no
// bouncing between APs).
func TestEtherMediumRoamingLLF(t *testing.T) {
	s := llfNetwork(t, 4)
	if n := s.roamCheck(time.Second); n != 1 || s.cfg.Radios[0].AP != 5 {
		t.Fatalf("4 stations on ap1, none on ap2: %d handovers, station 1 on radio %d; want 1 to ap2", n, s.cfg.Radios[0].AP)
	}
	s.finishHandovers(time.Second + time.Millisecond)
	if n := s.roamCheck(2 * time.Second); n != 0 {
		t.Errorf("3 on ap1, 1 on ap2: %d more handovers, want none", n)
	}
	if h := s.handovers[0]; h.Station != "sta1" || h.From != "ap1" || h.To != "ap2" {
		t.Errorf("the handover: %+v", h)
	}
}
