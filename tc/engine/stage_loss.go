package engine

import (
	"math/rand/v2"

	"github.com/emuctl/emuctl/tc"
)

// lossStage drops frames independently (Bernoulli) or by the
// Gilbert-Elliott model, with the same state machine as netem: each frame
// first draws a state transition, then is lost with the loss probability
// of the state it was in.
type lossStage struct {
	rng      *rand.Rand
	p        float64 // Bernoulli loss probability
	ge       bool
	pGB, pBG float64 // good→bad, bad→good
	lossBad  float64 // 1-h
	lossGood float64 // 1-k
	bad      bool
}

func (s *lossStage) reconfigure(d tc.Dir, _ int) {
	s.p = d.Loss.Prob()
	s.ge = d.GE != nil
	if s.ge {
		s.pGB, s.pBG = d.GE.P.Prob(), d.GE.R.Prob()
		s.lossBad, s.lossGood = d.GE.BadLoss.Prob(), d.GE.GoodLoss.Prob()
	} else {
		s.bad = false
	}
}

func (s *lossStage) lose() bool {
	if !s.ge {
		return s.p > 0 && s.rng.Float64() < s.p
	}
	if s.bad {
		if s.rng.Float64() < s.pBG {
			s.bad = false
		}
		return s.rng.Float64() < s.lossBad
	}
	if s.rng.Float64() < s.pGB {
		s.bad = true
	}
	return s.rng.Float64() < s.lossGood
}

func (s *lossStage) admit(_ *packet, t int64) (int64, verdict) {
	if s.lose() {
		return 0, dropLoss
	}
	return t, pass
}
