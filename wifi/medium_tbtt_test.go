package wifi

import (
	"encoding/binary"
	"testing"
	"time"
)

// beaconFrame is a minimal beacon: header, timestamp ts, interval bi TU.
func beaconFrame(ts uint64, bi uint16) []byte {
	d := make([]byte, 40)
	d[0] = 0x80
	binary.LittleEndian.PutUint64(d[24:32], ts)
	binary.LittleEndian.PutUint16(d[32:34], bi)
	return d
}

// TestBeaconPhase: each radio's beacons are held for its own phase in the
// beacon interval (deterministic for a seed, different between radios,
// and between seeds), stamped with the sender's TSF when they go, and
// released in order; data frames and multi-link radios' beacons are not
// held.
func TestBeaconPhase(t *testing.T) {
	cfg := MediumConfig{Seed: 7, Radios: []MediumRadio{{Node: "a", Perm: [6]byte{2, 0, 0, 0, 0, 1}}, {Node: "b", Perm: [6]byte{2, 0, 0, 0, 0, 2}}, {Node: "m", Perm: [6]byte{2, 0, 0, 0, 0, 3}, MLO: true}}}
	s := &MediumServer{mediumCore: &mediumCore{cfg: cfg}}
	bi := 100 * 1024 * time.Microsecond
	pa, pb := s.beaconPhase(0, bi), s.beaconPhase(1, bi)
	if pa == pb || pa < 0 || pa >= bi || pb < 0 || pb >= bi {
		t.Fatalf("phases %v and %v in a %v interval", pa, pb, bi)
	}
	if again := s.beaconPhase(0, bi); again != pa {
		t.Errorf("radio a's phase %v then %v for one seed", pa, again)
	}
	s2 := &MediumServer{mediumCore: &mediumCore{cfg: MediumConfig{Seed: 8, Radios: cfg.Radios}}}
	if s2.beaconPhase(0, bi) == pa {
		t.Errorf("seeds 7 and 8 gave radio a one phase %v", pa)
	}
	now := 5 * time.Second
	fa, fb := &HwFrame{Data: beaconFrame(1000, 100)}, &HwFrame{Data: beaconFrame(1000, 100)}
	if !s.holdBeacon(now, 0, fa) || !s.holdBeacon(now, 1, fb) {
		t.Fatal("beacons not held")
	}
	if ts := binary.LittleEndian.Uint64(fa.Data[24:32]); ts != 1000+uint64(pa/time.Microsecond) {
		t.Errorf("a's beacon stamped %d µs, want 1000 + its phase %v", ts, pa)
	}
	first := min(pa, pb)
	if next, ok := s.nextBeacon(); !ok || next != now+first {
		t.Errorf("next beacon due at %v, want %v", next, now+first)
	}
	if s.holdBeacon(now, 2, &HwFrame{Data: beaconFrame(0, 100)}) {
		t.Error("a multi-link radio's beacon held")
	}
	data := beaconFrame(0, 100)
	data[0] = 0x08
	if s.holdBeacon(now, 0, &HwFrame{Data: data}) {
		t.Error("a data frame held")
	}
	if s.stats.BeaconsHeld != 2 {
		t.Errorf("BeaconsHeld %d, want 2", s.stats.BeaconsHeld)
	}
}
