package engine

import (
	"math/rand/v2"

	"github.com/emuctl/emuctl/tc"
)

// delayStage is the propagation line: Delay plus a jitter drawn from the
// same tables netem uses. Unless Reorder is set a frame never leaves
// before the one ahead of it (time = max(drawn, previous)), which is what
// netem does when it has a rate; with Reorder the drawn times stand and
// the transmit line sorts by them.
type delayStage struct {
	rng     *rand.Rand
	delay   int64
	jitter  int64
	table   []int16
	reorder bool
	last    int64
}

func (s *delayStage) reconfigure(d tc.Dir, _ int) {
	s.delay, s.jitter = int64(d.Delay), int64(d.Jitter)
	s.table = tc.DistTable(d.JitterDist)
	s.reorder = d.Reorder
}

func (s *delayStage) admit(_ *packet, t int64) (int64, verdict) {
	due := t + s.delay
	if s.jitter > 0 {
		due += s.jitter * int64(s.table[s.rng.IntN(len(s.table))]) / tc.DistScale
	}
	due = max(due, t)
	if !s.reorder {
		due = max(due, s.last)
	}
	s.last = max(s.last, due)
	return due, pass
}
