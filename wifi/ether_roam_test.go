package wifi

import (
	"math"
	"testing"
	"time"

	"github.com/emuctl/emuctl/tc/engine"
	"github.com/emuctl/emuctl/wifi/model"
)

var (
	essSta = [6]byte{0x02, 0, 0, 0, 0, 1}
	essAP1 = [6]byte{0x02, 0, 0, 0, 0, 2}
	essAP2 = [6]byte{0x02, 0, 0, 0, 0, 3}
)

// essNetwork is one station (port 11) of a network of two access points
// 80 m apart (ports 12 and 13) on channels 36 and 40, 802.11n MCS 3, the
// station at x on the line between them and associated with the first.
func essNetwork(t *testing.T, x float64, roam Roaming) *EtherMedium {
	t.Helper()
	fixed, err := model.ParseRate(model.ModeN, "mcs3", 20, 1, 800*time.Nanosecond)
	if err != nil {
		t.Fatal(err)
	}
	cfg := MediumConfig{Radios: []MediumRadio{
		{Node: "sta", MAC: essSta, AP: 1, ESS: []int{1, 2}, Roam: &roam, Mode: "n", FreqMHz: 5180, WidthMHz: 20, QoS: true, TxPowerDBm: 20, Pos: [3]float64{x, 0, 0}, Fixed: &fixed},
		{Node: "ap1", MAC: essAP1, AP: -1, Mode: "n", FreqMHz: 5180, WidthMHz: 20, QoS: true, TxPowerDBm: 20, Fixed: &fixed},
		{Node: "ap2", MAC: essAP2, AP: -1, Mode: "n", FreqMHz: 5200, WidthMHz: 20, QoS: true, TxPowerDBm: 20, Pos: [3]float64{80, 0, 0}, Fixed: &fixed}},
		PathLoss: model.DefaultPathLoss(5180), NoiseFigureDB: 7, AMPDU: true}
	s, err := newEtherMedium(cfg, []int{11, 12, 13})
	if err != nil {
		t.Fatal(err)
	}
	s.sock = &etherSock{fd: -1}
	return s
}

// moveTo places the station and lets it decide (at the medium time now).
func moveTo(s *EtherMedium, x float64, now time.Duration) int {
	s.cfg.Radios[0].Pos = [3]float64{x, 0, 0}
	s.links = nil
	return s.roamCheck(now)
}

// TestEtherMediumRoaming: a station walking from one access point of a
// network to the other hands over once the other is heard 3 dB better
// (log-distance, exponent 3: 30·log10(d1/d2) ≥ 3 past x = 44.4 m of 80),
// not before (no ping-pong around the middle); while off the air its
// node's frames are held and frames for it dropped, then it is on the new
// AP's channel, the frames held reach the new AP, and the new AP's node
// receives the 802.2 XID layer-2 update from the station's address; the
// old AP no longer takes its frames. Walking back it returns only 3 dB
// past the middle the other way.
func TestEtherMediumRoaming(t *testing.T) {
	off := 5 * time.Millisecond
	s := essNetwork(t, 10, Roaming{HysteresisDB: 3, OffAir: off})
	now := time.Second
	for _, x := range []float64{20, 40, 42, 44} {
		if n := moveTo(s, x, now); n != 0 || s.cfg.Radios[0].AP != 1 {
			t.Fatalf("at x = %v m (ap2 %.2f dB better) the station handed over", x, 30*math.Log10(x/(80-x)))
		}
	}
	if n := moveTo(s, 45, now); n != 1 || s.cfg.Radios[0].AP != 2 || !s.offAir(0) {
		t.Fatalf("at x = 45 m (ap2 3.27 dB better): %d handovers, AP %d, off the air %v", n, s.cfg.Radios[0].AP, s.offAir(0))
	}
	h := s.handovers[0]
	if h.From != "ap1" || h.To != "ap2" || h.Done || math.Abs(h.ToSNRdB-h.FromSNRdB-30*math.Log10(45.0/35)) > 0.02 {
		t.Errorf("the handover: %+v", h)
	}
	if next, ok := s.nextBack(); !ok || next != now+off {
		t.Errorf("the medium wakes at %v, want %v", next, now+off)
	}
	// off the air: the node's frames are held, frames for it dropped
	s.submit(now, 0, ethFrame(essAP2, essSta))
	s.submit(now, 0, ethFrame(essAP2, essSta))
	s.submit(now, 2, ethFrame(essSta, essAP2))
	s.submit(now, 1, ethFrame(essSta, essAP1)) // the old AP no longer has it
	if _, ok := s.m.Next(); ok {
		t.Error("a frame went on the air while the station was off it")
	}
	if st := s.handovers[0]; st.Held != 2 || st.Dropped != 2 || s.stats.NoStation != 2 {
		t.Errorf("held %d, dropped %d, no station %d; want 2, 2 (one at each AP), 2", st.Held, st.Dropped, s.stats.NoStation)
	}
	// back on the air, on ap2's channel
	now += off
	s.finishHandovers(now)
	if s.offAir(0) || s.cfg.Radios[0].FreqMHz != 5200 || !s.handovers[0].Done || s.handovers[0].OffAir != off {
		t.Fatalf("after the handover: off the air %v, %d MHz, %+v", s.offAir(0), s.cfg.Radios[0].FreqMHz, s.handovers[0])
	}
	if len(s.sock.out) != 1 || s.sock.to[0] != 13 {
		t.Fatalf("deliveries at once: %d to %v, want the layer-2 update to ap2's port", len(s.sock.out), s.sock.to)
	}
	u := s.sock.out[0][engine.VnetHdrLen:]
	if [6]byte(u[0:6]) != [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff} || [6]byte(u[6:12]) != essSta || u[12] != 0 || u[13] != 6 ||
		u[14] != 0 || u[15] != 1 || u[16] != 0xaf || u[17] != 0x81 || len(u) != 60 {
		t.Errorf("the layer-2 update: % x", u[:20])
	}
	s.sock.out, s.sock.to = nil, nil
	drain(s, now, nil)
	if len(s.sock.out) != 2 || s.sock.to[0] != 13 || s.sock.to[1] != 13 {
		t.Errorf("the held frames: %d delivered to %v, want 2 to ap2's port", len(s.sock.out), s.sock.to)
	}
	// the way back: nothing until ap1 is 3 dB better
	now = 2 * time.Second
	for _, x := range []float64{40, 38, 36} {
		if n := moveTo(s, x, now); n != 0 {
			t.Fatalf("walking back, at x = %v m the station handed over", x)
		}
	}
	if n := moveTo(s, 35, now); n != 1 || s.cfg.Radios[0].AP != 1 {
		t.Fatalf("at x = 35 m: %d handovers, AP %d", n, s.cfg.Radios[0].AP)
	}
	if len(s.Stats().Handovers) != 2 || s.Stats().Assoc["sta"] != "ap1" {
		t.Errorf("stats: %+v %v", s.Stats().Handovers, s.Stats().Assoc)
	}
}

// TestEtherMediumRoamingOutOfRange: a station that no longer hears its
// access point at all hands over to one it hears, whatever the
// hysteresis; one that hears none stays.
func TestEtherMediumRoamingOutOfRange(t *testing.T) {
	s := essNetwork(t, 5, Roaming{HysteresisDB: 100, OffAir: time.Millisecond})
	loss := 60.0
	if err := s.mediumCore.SetPair("sta", "ap1", nil, &loss); err != nil {
		t.Fatal(err)
	}
	if n := s.roamCheck(time.Second); n != 0 {
		t.Errorf("with neither AP heard (ap2 75 m away: −82.9 dBm): %d handovers", n)
	}
	moveTo(s, 60, time.Second)
	if s.cfg.Radios[0].AP != 2 {
		t.Errorf("ap1 unheard, ap2 20 m away: still on AP %d", s.cfg.Radios[0].AP)
	}
}

// TestOffAirTime holds the default time off the air to the airtime of
// the exchange, worked out here from the PHY's own rules: on 5 GHz at
// 6 Mbit/s OFDM (20 µs preamble, 4 µs symbols of 24 data bits, 16
// service and 6 tail bits), each frame after AIFS[VO] (SIFS 16 µs + 2
// slots of 9) and 1.5 slots of mean backoff (CWmin[VO] = 3), then SIFS
// and a 14-byte ACK; on 2.4 GHz at 1 Mbit/s DSSS (192 µs preamble, 8 µs
// per byte), SIFS 10 µs.
func TestOffAirTime(t *testing.T) {
	ofdm := func(n int) float64 { return 20 + 4*math.Ceil(float64(16+8*n+6)/24) }
	dsss := func(n int) float64 { return 192 + 8*float64(n) }
	sum := func(frames []int, tx func(int) float64, aifs, backoff, sifs float64) float64 {
		t := 0.0
		for _, n := range frames {
			t += aifs + backoff + tx(n+4) + sifs + tx(14)
		}
		return t
	}
	open := []int{70, 250, 30, 30, 120, 110}
	wpa := append(append([]int{}, open...), 131, 153, 185, 131)
	for _, c := range []struct {
		mode      string
		freq      int
		protected bool
		want      float64 // µs
	}{
		{"n", 5180, false, sum(open, ofdm, 34, 13.5, 16)},
		{"ac", 5180, true, sum(wpa, ofdm, 34, 13.5, 16)},
		{"n", 2437, false, sum(open, dsss, 28, 13.5, 10)},
	} {
		got := OffAirTime(c.mode, c.freq, c.protected, 0)
		if math.Abs(float64(got)/1e3-c.want) > 0.5 {
			t.Errorf("%s %d MHz protected %v: %v, want %.1f µs", c.mode, c.freq, c.protected, got, c.want)
		}
		t.Logf("%s %d MHz protected %v: %v", c.mode, c.freq, c.protected, got)
		if OffAirTime(c.mode, c.freq, c.protected, 40*time.Millisecond) != got+40*time.Millisecond {
			t.Error("the scan time is not added")
		}
	}
}
