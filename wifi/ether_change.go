package wifi

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Radios added to and removed from a running engine medium: a station
// added to or removed from a lab while it runs (emu's run-time changes).
// Each change is carried out on the medium's own thread between two turns
// of its loop — the frames it reads are matched to radios by port outside
// the lock — and the caller waits for it.

// etherCtl is one change waiting for the medium's thread.
type etherCtl struct {
	fn        func() error
	done      chan error
	abandoned atomic.Bool // the caller stopped waiting: not carried out
}

// ctlQueue holds the changes for the medium's thread.
type ctlQueue struct {
	mu      sync.Mutex
	pending []*etherCtl
	running atomic.Bool // the medium's loop runs and takes changes
}

// ctlWait is how long a change waits for the medium's thread.
const ctlWait = 5 * time.Second

// onThread runs fn under the medium's lock on its thread (directly, when
// the medium is not running) and returns its error.
func (s *EtherMedium) onThread(fn func() error) error {
	if !s.ctl.running.Load() {
		s.mu.Lock()
		defer s.mu.Unlock()
		return fn()
	}
	c := &etherCtl{fn: fn, done: make(chan error, 1)}
	s.ctl.mu.Lock()
	s.ctl.pending = append(s.ctl.pending, c)
	s.ctl.mu.Unlock()
	s.wake()
	select {
	case err := <-c.done:
		return err
	case <-time.After(ctlWait):
		c.abandoned.Store(true)
		return fmt.Errorf("wifi medium: no answer from its thread in %v", ctlWait)
	}
}

// runCtl carries out the waiting changes (the medium's thread, mu not
// held).
func (s *EtherMedium) runCtl() {
	s.ctl.mu.Lock()
	todo := s.ctl.pending
	s.ctl.pending = nil
	s.ctl.mu.Unlock()
	for _, c := range todo {
		if c.abandoned.Load() {
			continue
		}
		s.mu.Lock()
		err := c.fn()
		s.mu.Unlock()
		c.done <- err
	}
}

// AddRadio adds a radio to the running medium, on port ifindex (its
// veth end in the medium namespace): a station's, associated with its
// access point r.AP, an access point's (r.AP < 0) or an ad hoc member's
// (r.Adhoc > 0, of its network from now on). An AP or ad hoc member gets
// its BSS's rate table and, on a band the medium has no BSS on yet, sets
// the band's MAC parameters as the first BSS of a band does at start. It
// returns the radio's index (the next one: ports are named by it).
// Roaming and multi-link radios are not added at run time.
func (s *EtherMedium) AddRadio(r MediumRadio, ifindex int) (int, error) {
	idx := -1
	err := s.onThread(func() error {
		switch {
		case r.AP < 0 && r.MLO:
			return fmt.Errorf("%s: a multi-link access point cannot join the engine medium", r.Node)
		case r.AP < 0 && r.FreqMHz == 0:
			return fmt.Errorf("radio of %s has no channel", r.Node)
		case r.AP < 0:
		case len(r.ESS) > 0 || r.Roam != nil:
			return fmt.Errorf("%s: a roaming station cannot join a running medium yet", r.Node)
		case r.MLO:
			return fmt.Errorf("%s: a multi-link station cannot join the engine medium", r.Node)
		case r.AP >= len(s.cfg.Radios) || s.cfg.Radios[r.AP].AP >= 0 || s.cfg.Radios[r.AP].Adhoc > 0 || s.cfg.Radios[r.AP].Gone:
			return fmt.Errorf("station %s names no access point of the medium", r.Node)
		case r.FreqMHz == 0:
			return fmt.Errorf("radio of %s has no channel", r.Node)
		}
		if _, dup := s.radioIndex(r.Node); dup {
			return fmt.Errorf("the medium has a radio of %s already", r.Node)
		}
		if _, dup := s.byIfindex[ifindex]; dup || ifindex <= 0 {
			return fmt.Errorf("%s: port ifindex %d is not a new port", r.Node, ifindex)
		}
		idx = len(s.cfg.Radios)
		if r.AP < 0 {
			s.ideal[idx] = apIdeal(r)
			s.macs.learn(r)
		}
		s.cfg.Radios = append(s.cfg.Radios, r)
		s.ifindex = append(s.ifindex, ifindex)
		s.byIfindex[ifindex] = idx
		s.byMAC[r.MAC] = idx
		s.m.AddRadio(idx, r.FreqMHz)
		s.m.LearnAddr(r.MAC, idx)
		s.links = nil
		return nil
	})
	return idx, err
}

// RemoveRadio takes a radio off the running medium: it hears and sends
// nothing more, frames for it are dropped (counted as for no station),
// and its slot stays, marked Gone. An access point leaves once no
// station is associated with it (or roams to it).
func (s *EtherMedium) RemoveRadio(node string) error {
	return s.onThread(func() error {
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
		if r.Roam != nil {
			return errors.New(node + ": a roaming station cannot leave a running medium yet")
		}
		delete(s.byIfindex, s.ifindex[i])
		if j, ok := s.byMAC[r.MAC]; ok && j == i {
			delete(s.byMAC, r.MAC)
		}
		s.m.AddRadio(i, 0) // off its channel
		r.Gone = true
		s.ifindex[i] = -1
		s.links = nil
		return nil
	})
}
