package engine

import (
	"math/rand/v2"

	"github.com/emuctl/emuctl/tc"
)

// A direction of the engine is a pipeline of stages run on each packet in
// arrival order, under the direction's lock:
//
//	loss → corrupt → rate + bounded drop-tail queue → delay/jitter line → transmit
//
// Each stage maps the time a packet enters it to the time it leaves, or
// drops it, so the whole path of a packet is decided when it arrives and
// only the transmit time is waited for. That is exact for FIFO stages
// whose behaviour depends on the past only (a serialising link, a
// propagation delay, a loss process); a trace-driven link fits the same
// interface (the next delivery opportunity is known), and so does a
// shared medium that books airtime on a common timeline, or a multi-link
// stage that picks one of several sub-pipelines.
type stage interface {
	// admit returns the time p leaves the stage (not before t), or a drop.
	admit(p *packet, t int64) (int64, verdict)
	// reconfigure applies new parameters and keeps the stage's state
	// (queue contents, loss-model state, order), so a link changed at run
	// time carries on instead of restarting.
	reconfigure(d tc.Dir, mtu int)
}

type verdict uint8

const (
	pass verdict = iota
	dropLoss
	dropQueue
)

// pipeline is one direction's stages plus what happens before them.
type pipeline struct {
	rng       *rand.Rand
	dup       float64 // probability a frame is sent twice
	perPacket bool    // GSO super-frames must be split (rate, loss, ...)
	loss      *lossStage
	corrupt   *corruptStage
	queue     *queueStage
	delay     *delayStage
	stages    []stage // in order
}

func newPipeline(d tc.Dir, mtu int, rng *rand.Rand) *pipeline {
	pl := &pipeline{
		rng:     rng,
		loss:    &lossStage{rng: rng},
		corrupt: &corruptStage{rng: rng},
		queue:   &queueStage{},
		delay:   &delayStage{rng: rng},
	}
	pl.stages = []stage{pl.loss, pl.corrupt, pl.queue, pl.delay}
	pl.reconfigure(d, mtu)
	return pl
}

func (pl *pipeline) reconfigure(d tc.Dir, mtu int) {
	pl.dup = d.Duplicate.Prob()
	pl.perPacket = d.Rate > 0 || d.Loss > 0 || d.GE != nil || d.Duplicate > 0 || d.Corrupt > 0
	for _, s := range pl.stages {
		s.reconfigure(d, mtu)
	}
}

// run sends p through the stages; it returns the transmit time or a drop.
func (pl *pipeline) run(p *packet, t int64) (int64, verdict) {
	for _, s := range pl.stages {
		var v verdict
		if t, v = s.admit(p, t); v != pass {
			return 0, v
		}
	}
	return t, pass
}
