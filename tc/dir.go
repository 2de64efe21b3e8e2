package tc

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/emuctl/emuctl/units"
)

// Dir is what one direction of a link does to the frames that cross it.
// The zero Dir forwards everything unchanged (unshaped).
type Dir struct {
	Rate       units.BitRate // on the wire (Ethernet header included); 0 = unlimited
	Delay      time.Duration // one-way delay added to every frame
	Jitter     time.Duration // scale of the random delay variation (see JitterDist)
	JitterDist string        // "uniform" (default, ±Jitter), "normal" (σ = Jitter), "pareto"
	Reorder    bool          // let jitter reorder frames; false keeps arrival order
	Loss       units.Percent // independent (Bernoulli) loss per frame
	GE         *units.GilbertElliott
	Duplicate  units.Percent // frames sent twice
	Corrupt    units.Percent // frames with one bit flipped
	// QueuePackets and QueueBytes bound the bottleneck queue (drop-tail).
	// They count the frame being serialised too, and only matter with Rate.
	// Both zero means DefaultQueuePackets.
	QueuePackets int
	QueueBytes   units.Bytes
	// AQM is the queue's discipline (aqm.go); nil is drop-tail. Like the
	// limit it only exists with a Rate.
	AQM *AQM `json:"AQM,omitempty"`
	// Trace replaces Rate with a mahimahi delivery trace (trace.go):
	// engine only, the kernel path refuses it.
	Trace *Trace `json:"Trace,omitempty"`
	// Order is the order of the loss, link (rate or trace, with its
	// queue) and delay stages when it is not emuctl's (loss, link,
	// delay): mahimahi's shells nest, so "mm-delay D mm-loss uplink p
	// mm-link ..." runs link, loss, delay on the uplink and delay, loss,
	// link on the downlink. Only with a Trace; nil is emuctl's order.
	Order []string `json:"Order,omitempty"`
}

// Stage names in Dir.Order.
const (
	StageLoss  = "loss"
	StageLink  = "link"
	StageDelay = "delay"
)

// Jitter distributions. The names are iproute2's.
const (
	DistUniform = "uniform"
	DistNormal  = "normal"
	DistPareto  = "pareto"
)

// IsZero reports whether d leaves frames untouched.
func (d Dir) IsZero() bool {
	return d.Rate == 0 && d.Trace == nil && d.Delay == 0 && d.Jitter == 0 && d.Loss == 0 && d.GE == nil &&
		d.Duplicate == 0 && d.Corrupt == 0
}

// Validate reports every problem with d at once.
func (d Dir) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if d.Delay < 0 || d.Delay >= units.MaxDelay {
		bad("delay %v out of range [0, %v)", d.Delay, units.MaxDelay)
	}
	if d.Jitter < 0 || d.Jitter >= units.MaxDelay {
		bad("jitter %v out of range [0, %v)", d.Jitter, units.MaxDelay)
	}
	if d.Jitter > math.MaxInt32 {
		bad("jitter %v too large: netem stores jitter in 32 bits of ns (max %v)", d.Jitter, time.Duration(math.MaxInt32))
	}
	switch d.JitterDist {
	case "", DistUniform, DistNormal, DistPareto:
	default:
		bad("jitter distribution %q unknown (valid: uniform, normal, pareto)", d.JitterDist)
	}
	pct := func(name string, v units.Percent) {
		if math.IsNaN(float64(v)) || v < 0 || v > 100 {
			bad("%s %v out of range [0%%, 100%%]", name, v)
		}
	}
	pct("loss", d.Loss)
	pct("duplicate", d.Duplicate)
	pct("corrupt", d.Corrupt)
	if d.GE != nil {
		pct("gemodel p", d.GE.P)
		pct("gemodel r", d.GE.R)
		pct("gemodel 1-h", d.GE.BadLoss)
		pct("gemodel 1-k", d.GE.GoodLoss)
		if d.Loss != 0 {
			bad("loss %v and a Gilbert-Elliott model together: choose one", d.Loss)
		}
	}
	if d.QueuePackets < 0 {
		bad("queue %d packets is negative", d.QueuePackets)
	}
	if d.QueueBytes < 0 {
		bad("queue %d bytes is negative", d.QueueBytes)
	}
	if d.AQM != nil {
		if err := d.AQM.Validate(); err != nil {
			errs = append(errs, err)
		}
		if d.Rate == 0 && d.Trace == nil && !d.AQM.IsDropTail() {
			bad("queue discipline %s needs a rate: an unshaped direction never queues", d.AQM.Name())
		}
	}
	if d.Trace != nil {
		if err := d.Trace.Validate(); err != nil {
			errs = append(errs, err)
		}
		if d.Rate > 0 {
			bad("rate %s and a trace together: the trace is the link's rate", d.Rate.TC())
		}
		if n := d.AQM.Name(); n != DropTail && n != DropHead {
			bad("queue discipline %s on a trace: %v", n, errTraceQueue)
		}
	}
	if d.Order != nil {
		if d.Trace == nil {
			bad("a stage order (%s) without a trace: only a mahimahi link changes emuctl's order", strings.Join(d.Order, ", "))
		} else if !isStageOrder(d.Order) {
			bad("stage order %q is not an order of loss, link and delay", strings.Join(d.Order, " "))
		}
	}
	return errors.Join(errs...)
}

func isStageOrder(o []string) bool {
	if len(o) != 3 {
		return false
	}
	seen := map[string]bool{}
	for _, s := range o {
		if s != StageLoss && s != StageLink && s != StageDelay || seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}

// dist returns the jitter distribution name with the default filled in.
func (d Dir) dist() string {
	if d.JitterDist == "" {
		return DistUniform
	}
	return d.JitterDist
}

// frameBytes is the largest untagged Ethernet frame for mtu (no FCS):
// what HTB, TBF, netem and the engine count per full-size packet.
func frameBytes(mtu int) int { return mtu + 14 }

// DefaultQueuePackets is the bottleneck queue used when a Dir with a rate
// sets neither QueuePackets nor QueueBytes: the bandwidth-delay product of
// a round trip over this link (Rate × 2 × Delay) in full-size frames, and
// never less than 100 frames (Mininet's and Linux's txqueuelen habit).
// It is 0 without a rate: an unshaped direction never queues.
func DefaultQueuePackets(d Dir, mtu int) int {
	if d.Rate == 0 {
		return 0
	}
	bdp := float64(d.Rate) * 2 * d.Delay.Seconds() / (8 * float64(frameBytes(mtu)))
	return max(100, int(math.Ceil(bdp)))
}

// QueueLimits returns the effective queue bounds of d (packets, bytes)
// for an interface of the given MTU. Without a limit of its own a
// drop-tail or drop-head queue gets DefaultQueuePackets, codel, fq_codel,
// pie and red their Linux qdisc's default (1000, 10240, 1000 packets;
// red 1000 full frames, counted in bytes by both backends), and cake none
// (its own memory limit).
func (d Dir) QueueLimits(mtu int) (int, int64) {
	if d.Rate == 0 {
		return 0, 0
	}
	if d.QueuePackets == 0 && d.QueueBytes == 0 {
		switch d.AQM.Name() {
		case CoDel:
			return DefaultCoDelLimit, 0
		case FQCoDel:
			return DefaultFQCoDelLimit, 0
		case PIE:
			return DefaultPIELimit, 0
		case RED:
			return DefaultREDLimit, 0
		case Cake:
			return 0, 0
		}
		return DefaultQueuePackets(d, mtu), 0
	}
	return d.QueuePackets, int64(d.QueueBytes)
}

// Discipline is d's queue discipline with its defaults filled in for
// an interface of the given MTU (drop-tail: a zero AQM with Discipline
// droptail).
func (d Dir) Discipline(mtu int) AQM {
	pk, by := d.QueueLimits(mtu)
	return d.AQM.Resolved(mtu, pk, by)
}

// String is a compact tc-like description, for logs and errors.
func (d Dir) String() string {
	if d.IsZero() {
		return "unshaped"
	}
	var b strings.Builder
	add := func(format string, args ...any) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, format, args...)
	}
	if d.Rate > 0 {
		add("rate %s", d.Rate.TC())
	}
	if d.Trace != nil {
		add("%s", d.Trace)
	}
	if d.Delay > 0 {
		add("delay %v", d.Delay)
	}
	if d.Jitter > 0 {
		add("jitter %v %s", d.Jitter, d.dist())
		if d.Reorder {
			add("reorder")
		}
	}
	if d.Loss > 0 {
		add("loss %g%%", d.Loss)
	}
	if d.GE != nil {
		add("gemodel p %g%% r %g%% 1-h %g%% 1-k %g%%", float64(d.GE.P), float64(d.GE.R), float64(d.GE.BadLoss), float64(d.GE.GoodLoss))
	}
	if d.Duplicate > 0 {
		add("duplicate %g%%", d.Duplicate)
	}
	if d.Corrupt > 0 {
		add("corrupt %g%%", d.Corrupt)
	}
	if d.QueuePackets > 0 {
		add("queue %dp", d.QueuePackets)
	}
	if d.QueueBytes > 0 {
		add("queue %dB", d.QueueBytes)
	}
	if !d.AQM.IsDropTail() {
		add("%s", d.AQM)
	}
	return b.String()
}
