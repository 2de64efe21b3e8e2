package wifi

// Ad hoc (IBSS) networks on the engine medium. A member's radio sends
// each frame straight to the member it addresses (neither to nor from a
// DS, the network's BSSID as the third address): unicast acknowledged
// and retried at the rate its link's SNR allows, group frames once to
// every radio on the channel at the lowest basic rate, kept by the
// members of its network that decode them. Nothing relays: a member out
// of another's range (below the preamble detection threshold or the
// SNR its rate needs) never gets its frames, and no member forwards a
// frame it did not receive addressed to itself. There is no management
// plane either: no beacons, no IBSS merge or TSF, no joining — members
// are in their network from up to down.

// adhocPeer is the radio an ad hoc member's frame to da goes to (-1 for
// a group frame); false drops it: da is no member of r's network
// (mac80211 in an IBSS would send it on the air all the same, to no
// one, and see it fail its retries; here it is counted and dropped).
func (s *EtherMedium) adhocPeer(r int, da [6]byte, group bool) (int, bool) {
	if group {
		return -1, true
	}
	j, ok := s.byMAC[da]
	if !ok || j == r || s.cfg.Radios[j].Adhoc != s.cfg.Radios[r].Adhoc || s.cfg.Radios[j].Gone {
		s.stats.NoStation++
		return 0, false
	}
	return j, true
}

// AdhocBSSID is ad hoc network n's BSSID: locally administered, unicast,
// the same for every member (the third address of its data frames).
func AdhocBSSID(n int) [6]byte {
	return [6]byte{0x02, 0x1b, 0x55, 0x1d, byte(n >> 8), byte(n)}
}
