package engine

import (
	"math/rand/v2"

	"github.com/emuctl/emuctl/tc"
)

// corruptStage flips one random bit of the IP packet (never the Ethernet
// header, so the frame still reaches its destination), after completing
// a partial checksum in software so the receiver sees a bad checksum.
type corruptStage struct {
	rng *rand.Rand
	p   float64
	n   uint64 // frames corrupted
}

func (s *corruptStage) reconfigure(d tc.Dir, _ int) { s.p = d.Corrupt.Prob() }

func (s *corruptStage) admit(p *packet, t int64) (int64, verdict) {
	if s.p == 0 || s.rng.Float64() >= s.p {
		return t, pass
	}
	f := p.frame()
	if len(f) <= ethHdrLen {
		return t, pass
	}
	h := parseVnet(p.buf)
	if h.needsCsum() && h.gso() == 0 && finishCsum(f, h) {
		h.flags &^= 1 // NEEDS_CSUM done
		h.put(p.buf)
	}
	i := ethHdrLen + s.rng.IntN(len(f)-ethHdrLen)
	f[i] ^= 1 << s.rng.IntN(8)
	p.origin = 0 // its checksum is final now: never join it with others
	s.n++
	return t, pass
}
