package wifi

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"slices"
	"time"
)

// Beacons at each radio's own TBTT. mac80211_hwsim derives every radio's
// TSF from one host clock (offset 0 until mac80211 sets one), so all the
// radios of a lab would beacon at the same instants, every beacon
// interval: on a medium that models collisions, the beacons of radios
// that cannot hear each other (a mesh chain's ends, two APs' cells) then
// collide wherever both arrive, every time, and those that hear each
// other all start at once on an idle channel — measured: 39 of 42 frames
// of each mesh point collided and a chain never peered. Real radios'
// timers are independent, so their TBTTs fall anywhere in the interval.
// The medium therefore holds each radio's beacons for its own phase
// (drawn from the medium's seed and the radio's address, uniform in the
// beacon interval) and stamps them, as hardware stamps the timestamp
// field when the frame goes on air, with the sender's TSF then (its
// clock is the host's, so the timestamp moves by the time held).
// Multi-link radios keep hwsim's timing.

// heldBeacon is a beacon waiting for its radio's TBTT.
type heldBeacon struct {
	at time.Duration
	f  *HwFrame
}

// isBeacon: a beacon frame (management, subtype 8) with its fixed fields.
func isBeacon(d []byte) bool { return len(d) >= 36 && d[0] == 0x80 }

// beaconPhase is radio i's TBTT offset within a beacon interval of bi.
func (s *MediumServer) beaconPhase(i int, bi time.Duration) time.Duration {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], s.cfg.Seed)
	h.Write(b[:])
	p := s.cfg.Radios[i].Perm
	h.Write(p[:])
	return time.Duration(h.Sum64() % uint64(bi))
}

// holdBeacon keeps a beacon of radio i until its TBTT; false when it goes
// now (a multi-link radio's, or a beacon interval it cannot read).
func (s *MediumServer) holdBeacon(now time.Duration, i int, f *HwFrame) bool {
	if !isBeacon(f.Data) || s.cfg.Radios[i].MLO {
		return false
	}
	tu := binary.LittleEndian.Uint16(f.Data[32:34]) // beacon interval, TU
	if tu == 0 {
		return false
	}
	bi := time.Duration(tu) * 1024 * time.Microsecond
	d := s.beaconPhase(i, bi)
	ts := binary.LittleEndian.Uint64(f.Data[24:32])
	binary.LittleEndian.PutUint64(f.Data[24:32], ts+uint64(d/time.Microsecond))
	h := heldBeacon{at: now + d, f: f}
	k, _ := slices.BinarySearchFunc(s.held, h.at, func(x heldBeacon, t time.Duration) int { return cmp.Compare(x.at, t) })
	s.held = slices.Insert(s.held, k, h)
	s.stats.BeaconsHeld++
	return true
}

// releaseBeacons submits the beacons whose TBTT has come (mu held).
func (s *MediumServer) releaseBeacons(now time.Duration) {
	n := 0
	for n < len(s.held) && s.held[n].at <= now {
		s.submit(now, s.held[n].f)
		n++
	}
	s.held = slices.Delete(s.held, 0, n)
}

// nextBeacon is when the next held beacon is due.
func (s *MediumServer) nextBeacon() (time.Duration, bool) {
	if len(s.held) == 0 {
		return 0, false
	}
	return s.held[0].at, true
}
