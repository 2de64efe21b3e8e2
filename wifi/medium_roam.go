package wifi

import (
	"slices"
	"time"
)

// Roaming on the hwsim medium: wpa_supplicant roams as on hardware
// (bgscan, then authentication and reassociation with the other AP), so
// the medium only watches the frames. A station of a network of several
// access points (MediumRadio.ESS) exchanges data with its AP (to-DS
// frames addressed to the AP's BSSID, from-DS frames from it); when it
// addresses another AP of its network (authentication, reassociation),
// it is moving, and its first data frame with that AP, either way,
// completes the handover. The medium records the SNRs at which the
// station heard the two APs when it began, and as time off the air the
// gap between its last data frame with the old AP and its first with
// the new one, either way (an upper bound: it includes any pause of its
// traffic).

// hwRoam is what the hwsim medium knows of a roaming station.
type hwRoam struct {
	ap       int           // the AP radio it exchanges data with (-1: none yet)
	lastData time.Duration // its last data frame with ap, either way
	moving   int           // the AP it addressed since (-1: none)
	began    time.Duration // when it first addressed it
	fromSNR  float64
	toSNR    float64
}

// watchRoaming prepares the roaming stations' state.
func (s *MediumServer) watchRoaming() {
	for i, r := range s.cfg.Radios {
		if len(r.ESS) < 2 {
			continue
		}
		if s.roam == nil {
			s.roam, s.bssids = map[int]*hwRoam{}, map[[6]byte]int{}
		}
		for _, j := range r.ESS {
			for _, a := range s.cfg.Radios[j].Addrs {
				s.bssids[a] = j
			}
		}
		s.roam[i] = &hwRoam{ap: -1, moving: -1}
	}
}

// sawFrame notes a frame radio i sent (under mu): a roaming station's
// frames to an AP of its network, and its APs' data frames to it.
func (s *MediumServer) sawFrame(now time.Duration, i int, d []byte) {
	if len(d) < 16 {
		return
	}
	typ, ds := (d[0]>>2)&3, d[1]&3
	var a1 [6]byte
	copy(a1[:], d[4:10])
	if st := s.roam[i]; st != nil {
		ap, ok := s.bssids[a1]
		if !ok {
			return
		}
		switch {
		case typ == 2 && ds == 1: // its data, to-DS to ap
			s.exchanged(now, i, st, ap, true)
		case typ == 0 && ap != st.ap && st.moving != ap: // authentication, reassociation
			st.moving, st.began = ap, now
			if st.ap >= 0 {
				st.fromSNR = s.link(st.ap, i).SNRdB
			}
			st.toSNR = s.link(ap, i).SNRdB
		}
		return
	}
	if typ != 2 || ds != 2 { // an AP's from-DS data, to a station
		return
	}
	j, ok := s.m.RadioOf(a1)
	if st := s.roam[j]; ok && st != nil {
		if _, isAP := s.bssids[[6]byte(d[10:16])]; isAP {
			s.exchanged(now, j, st, i, false)
		}
	}
}

// exchanged notes a data frame between roaming station i and AP radio ap
// (sent by the station: mine).
func (s *MediumServer) exchanged(now time.Duration, i int, st *hwRoam, ap int, mine bool) {
	switch {
	case ap == st.ap && st.moving >= 0 && mine:
		st.moving = -1 // it stayed (a reassociation that did not happen)
	case ap == st.ap && st.moving >= 0:
		return // the old AP's queued frames: the station has left it
	case ap == st.ap || st.ap < 0:
		st.ap = ap
		if st.moving == ap {
			st.moving = -1
		}
	case ap == st.moving:
		from, to := st.fromSNR, st.toSNR
		h := Handover{Station: s.cfg.Radios[i].Node, From: s.cfg.Radios[st.ap].Node, To: s.cfg.Radios[ap].Node, At: st.began,
			Time: s.start.Add(st.began), FromSNRdB: round2(from), ToSNRdB: round2(to), OffAir: now - st.lastData, Done: true}
		if len(s.handovers) >= maxHandovers {
			s.handovers = slices.Delete(s.handovers, 0, 1)
		}
		s.handovers = append(s.handovers, h)
		st.ap, st.moving = ap, -1
	default:
		return // another AP's stray frames
	}
	st.lastData = now
}

// Stats is the medium's counters, with the roaming stations' access
// points (by their data frames) and their handovers so far.
func (s *MediumServer) Stats() MediumStats {
	st := s.mediumCore.Stats()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.roam {
		if r.ap >= 0 {
			if st.Assoc == nil {
				st.Assoc = map[string]string{}
			}
			st.Assoc[s.cfg.Radios[i].Node] = s.cfg.Radios[r.ap].Node
		}
	}
	if len(s.handovers) > 0 {
		st.Handovers = slices.Clone(s.handovers)
	}
	return st
}
