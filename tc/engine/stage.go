package engine

import (
	"math"
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
	queued // held by the discipline's queue (aqmStage) until its dequeue
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
	// aqm replaces queue when the queue has a discipline other than
	// drop-tail (aqmOn); it runs in virtual time (stage_aqm.go).
	aqm   *aqmStage
	aqmOn bool
	// sojourn counts every transmitted packet's queueing delay, whichever
	// queue it went through.
	sojourn sojournHist
}

func newPipeline(d tc.Dir, mtu int, rng *rand.Rand) *pipeline {
	pl := &pipeline{
		rng:     rng,
		loss:    &lossStage{rng: rng},
		corrupt: &corruptStage{rng: rng},
		queue:   &queueStage{},
		delay:   &delayStage{rng: rng},
	}
	pl.aqm = &aqmStage{rng: rng, hist: &pl.sojourn}
	pl.queue.hist = &pl.sojourn
	pl.stages = []stage{pl.loss, pl.corrupt, pl.queue, pl.delay}
	pl.reconfigure(d, mtu, nil)
	return pl
}

// reconfigure applies d. A queue that changes between drop-tail and a
// discipline hands its packets over: leaving a discipline, its queued
// packets are transmitted back to back through emit (drained); entering
// one, the discipline's serialiser starts when the drop-tail queue's last
// packet is out.
func (pl *pipeline) reconfigure(d tc.Dir, mtu int, emit func(p *packet, end int64)) {
	pl.dup = d.Duplicate.Prob()
	pl.perPacket = d.Rate > 0 || d.Loss > 0 || d.GE != nil || d.Duplicate > 0 || d.Corrupt > 0
	on := aqmActive(d)
	switch {
	case pl.aqmOn && !on:
		pl.aqm.drain(emit)
		pl.queue.carry(pl.aqm.free, pl.aqm.frac)
	case !pl.aqmOn && on:
		pl.aqm.free, pl.aqm.frac = pl.queue.last, pl.queue.frac
	}
	pl.aqmOn = on
	for _, s := range pl.stages {
		s.reconfigure(d, mtu)
	}
	pl.aqm.reconfigure(d, mtu)
}

// run sends p through the stages; it returns the transmit time, a drop,
// or queued (the discipline holds it: see advance).
func (pl *pipeline) run(p *packet, t int64) (int64, verdict) {
	stages := pl.stages
	if pl.aqmOn {
		stages = stages[:2] // loss, corrupt
	}
	for _, s := range stages {
		var v verdict
		if t, v = s.admit(p, t); v != pass {
			return 0, v
		}
	}
	if pl.aqmOn {
		pl.aqm.enqueue(p, t)
		return 0, queued
	}
	return t, pass
}

// advance performs the discipline's dequeues due by now: each packet goes
// through the delay line to emit with its transmit time.
func (pl *pipeline) advance(now int64, emit func(p *packet, due int64)) {
	if !pl.aqmOn {
		return
	}
	pl.aqm.run(now, func(p *packet, end int64) {
		due, _ := pl.delay.admit(p, end)
		emit(p, due)
	})
}

// next is when the discipline must act again (MaxInt64: nothing queued).
func (pl *pipeline) next() int64 {
	if !pl.aqmOn {
		return math.MaxInt64
	}
	return pl.aqm.next()
}

// queueLen and queuePeak describe the bottleneck queue in force.
func (pl *pipeline) queueLen(now int64) int {
	if pl.aqmOn {
		return pl.aqm.length(now)
	}
	return pl.queue.length(now)
}

func (pl *pipeline) queuePeak() int { return max(pl.queue.peak, pl.aqm.peak) }

// held is the number of packets a discipline holds (not yet on the line).
func (pl *pipeline) held() int {
	if !pl.aqmOn || pl.aqm.q == nil {
		return 0
	}
	return pl.aqm.q.len()
}
