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
	// trace replaces queue when the direction replays a mahimahi trace
	// (stage_trace.go); its stages then run in d.Order: pre before the
	// link, post after it (applied when a held packet leaves).
	trace     *traceStage
	traceOn   bool
	pre, post []stage
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
	pl.trace = &traceStage{hist: &pl.sojourn}
	pl.queue.hist = &pl.sojourn
	pl.stages = []stage{pl.loss, pl.corrupt, pl.queue, pl.delay}
	pl.reconfigure(d, mtu, 0, nil)
	return pl
}

// order builds the stages around a trace from d.Order (nil: loss and
// corruption, the trace, delay).
func (pl *pipeline) order(d tc.Dir) {
	o := d.Order
	if o == nil {
		o = []string{tc.StageLoss, tc.StageLink, tc.StageDelay}
	}
	pl.pre, pl.post = pl.pre[:0], pl.post[:0]
	into := &pl.pre
	for _, name := range o {
		switch name {
		case tc.StageLoss:
			*into = append(*into, pl.loss, pl.corrupt)
		case tc.StageDelay:
			*into = append(*into, pl.delay)
		case tc.StageLink:
			into = &pl.post
		}
	}
}

// reconfigure applies d. A queue that changes between drop-tail and a
// discipline hands its packets over: leaving a discipline, its queued
// packets are transmitted back to back through emit (drained); entering
// one, the discipline's serialiser starts when the drop-tail queue's last
// packet is out.
//
// A trace starts at now (engine time); leaving a trace, its held packets
// go at the times it gave them.
func (pl *pipeline) reconfigure(d tc.Dir, mtu int, now int64, emit func(p *packet, end int64)) {
	pl.dup = d.Duplicate.Prob()
	pl.perPacket = d.Rate > 0 || d.Trace != nil || d.Loss > 0 || d.GE != nil || d.Duplicate > 0 || d.Corrupt > 0
	if pl.traceOn && d.Trace == nil {
		pl.trace.run(math.MaxInt64)
		for _, p := range pl.trace.ready {
			emit(p, p.due)
		}
		pl.trace.ready = pl.trace.ready[:0]
	}
	pl.traceOn = d.Trace != nil
	pl.trace.configure(d, now)
	if pl.traceOn {
		pl.order(d)
	}
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
	if pl.traceOn {
		return pl.runTrace(p, t)
	}
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

// runTrace sends p through the stages before the trace, the trace, and
// (unless the trace holds it) the stages after it.
func (pl *pipeline) runTrace(p *packet, t int64) (int64, verdict) {
	var v verdict
	for _, s := range pl.pre {
		if t, v = s.admit(p, t); v != pass {
			return 0, v
		}
	}
	if t, v = pl.trace.admit(p, t); v != pass {
		return 0, v
	}
	return pl.after(p, t)
}

// after runs the stages after the trace.
func (pl *pipeline) after(p *packet, t int64) (int64, verdict) {
	var v verdict
	for _, s := range pl.post {
		if t, v = s.admit(p, t); v != pass {
			return 0, v
		}
	}
	return t, pass
}

// advance performs the discipline's dequeues due by now, or releases
// the packets a trace held: each goes through the stages after it to
// emit with its transmit time, or to drop.
func (pl *pipeline) advance(now int64, emit func(p *packet, due int64), drop func(p *packet, v verdict)) {
	if pl.traceOn {
		pl.trace.run(now)
		for i, p := range pl.trace.ready {
			if due, v := pl.after(p, p.due); v == pass {
				emit(p, due)
			} else {
				drop(p, v)
			}
			pl.trace.ready[i] = nil
		}
		pl.trace.ready = pl.trace.ready[:0]
		return
	}
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
	if pl.traceOn {
		return pl.trace.next()
	}
	if !pl.aqmOn {
		return math.MaxInt64
	}
	return pl.aqm.next()
}

// queueLen and queuePeak describe the bottleneck queue in force.
func (pl *pipeline) queueLen(now int64) int {
	if pl.traceOn {
		return pl.trace.length(now)
	}
	if pl.aqmOn {
		return pl.aqm.length(now)
	}
	return pl.queue.length(now)
}

func (pl *pipeline) queuePeak() int { return max(pl.queue.peak, pl.aqm.peak, pl.trace.peak) }

// shaped reports whether frames are paced (rate or trace): such
// directions never join segments again.
func (pl *pipeline) shaped(d tc.Dir) bool { return d.Rate > 0 || d.Trace != nil }

// held is the number of packets a discipline holds (not yet on the line).
func (pl *pipeline) held() int {
	if pl.traceOn {
		return pl.trace.held()
	}
	if !pl.aqmOn || pl.aqm.q == nil {
		return 0
	}
	return pl.aqm.q.len()
}

// retime re-times the drop-tail queue's packets for d's rate at now
// (see queueStage.retime); it reports whether any moved. Disciplines
// serialise at dequeue, so their waiting packets take a new rate anyway
// (the frame in service keeps its end); a trace has no rate.
func (pl *pipeline) retime(now int64, d tc.Dir) bool {
	if pl.aqmOn || pl.traceOn || aqmActive(d) || d.Trace != nil || d.Rate == pl.queue.rate {
		return false
	}
	if !pl.queue.retime(now, d.Rate) {
		return false
	}
	// the delay line's order follows the newest packet's new time
	if e := pl.queue.ring[(pl.queue.head+pl.queue.n-1)%len(pl.queue.ring)]; e.p != nil {
		pl.delay.last = e.p.due
	}
	return true
}
