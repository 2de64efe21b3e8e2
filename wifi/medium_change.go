package wifi

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/emuctl/emuctl/wifi/model"
)

// Stations added to and removed from a running hwsim medium (emu's
// run-time changes on mac80211_hwsim). The medium learns the new radio —
// its permanent address, position, power, its BSS's channel timing —
// before the kernel's radio exists, so the radio's first frame is already
// its own; a radio taken off is kept in its slot, marked Gone: it hears
// nothing and is heard by no one (MediumConfig.Link), and its kernel radio
// is deleted by the caller.

// AddRadio adds a radio to the running hwsim medium and returns its index
// (the next one): a station's, of access point r.AP, an access point's
// (r.AP < 0) or an ad hoc or mesh member's (r.Adhoc > 0); a band new to
// the medium takes its MAC parameters from the new BSS's mode, as the
// first BSS of a band does at start. Roaming and multi-link radios are
// not added at run time.
func (s *MediumServer) AddRadio(r MediumRadio) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.Perm == [6]byte{}:
		return -1, fmt.Errorf("radio of %s has no permanent address", r.Node)
	case r.AP < 0 && r.MLO:
		return -1, fmt.Errorf("%s: a multi-link access point cannot join a running medium", r.Node)
	case r.AP < 0 && r.FreqMHz == 0:
		return -1, fmt.Errorf("radio of %s has no channel", r.Node)
	case r.AP < 0:
	case len(r.ESS) > 0 || r.Roam != nil:
		return -1, fmt.Errorf("%s: a roaming station cannot join a running medium yet", r.Node)
	case r.MLO:
		return -1, fmt.Errorf("%s: a multi-link station cannot join a running medium yet", r.Node)
	case r.AP >= len(s.cfg.Radios) || s.cfg.Radios[r.AP].AP >= 0 || s.cfg.Radios[r.AP].Gone:
		return -1, fmt.Errorf("station %s names no access point of the medium", r.Node)
	}
	if _, dup := s.radioIndex(r.Node); dup {
		return -1, fmt.Errorf("the medium has a radio of %s already", r.Node)
	}
	if _, dup := s.perm[r.Perm]; dup {
		return -1, fmt.Errorf("%s: permanent address %x is another radio's", r.Node, r.Perm)
	}
	i := len(s.cfg.Radios)
	if r.AP < 0 {
		s.macs.learn(r)
	}
	s.cfg.Radios = append(s.cfg.Radios, r)
	s.perm[r.Perm] = i
	s.m.AddRadio(i, 0) // on the channel of its first frame, as at start
	s.m.LearnAddr(r.Perm, i)
	for _, a := range r.Addrs {
		s.m.LearnAddr(a, i)
	}
	s.links = nil
	return i, nil
}

// RemoveRadio takes a radio off the running medium: from now on it hears
// nothing and no one hears it; its slot stays, marked Gone. An access
// point leaves once no station is associated with it (or roams to it).
func (s *MediumServer) RemoveRadio(node string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.radioIndex(node)
	if !ok {
		return fmt.Errorf("the medium has no radio of node %q", node)
	}
	r := &s.cfg.Radios[i]
	if r.AP < 0 {
		if left := stationsOf(s.cfg.Radios, i); len(left) > 0 {
			return fmt.Errorf("%s: an access point cannot leave a running medium while stations use it (%s would be left without one)", node, strings.Join(left, ", "))
		}
	}
	if r.Roam != nil || len(r.ESS) > 0 {
		return errors.New(node + ": a roaming station cannot leave a running medium yet")
	}
	r.Gone = true
	s.links = nil
	return nil
}

// goneLink is what a radio taken off the medium has to and from every
// other: nothing.
var goneLink = model.Link{RxDBm: math.Inf(-1), SNRdB: math.Inf(-1)}

// stationsOf are the stations of radios (not gone) that use access point
// ap: associated with it, or roaming to it.
func stationsOf(radios []MediumRadio, ap int) []string {
	var out []string
	for _, o := range radios {
		if !o.Gone && (o.AP == ap || slices.Contains(o.ESS, ap)) {
			out = append(out, o.Node)
		}
	}
	return out
}
