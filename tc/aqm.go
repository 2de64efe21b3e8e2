package tc

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/emuctl/emuctl/units"
)

// Queue disciplines of a bottleneck queue (AQM.Discipline). The names are
// the kernel's qdisc kinds where one exists (drophead is pfifo_head_drop).
const (
	DropTail = "droptail" // drop arrivals when full (the default)
	DropHead = "drophead" // drop the oldest packet when full
	CoDel    = "codel"    // RFC 8289
	FQCoDel  = "fq_codel" // RFC 8290: per-flow queues, DRR, CoDel per flow
	PIE      = "pie"      // RFC 8033
	RED      = "red"      // Floyd & Jacobson 1993, with ECN (RFC 3168)
	Cake     = "cake"     // kernel only (see EngineSupports)
)

// Disciplines lists every discipline, in documentation order.
var Disciplines = []string{DropTail, DropHead, CoDel, FQCoDel, PIE, RED, Cake}

// AQM is the discipline of a direction's bottleneck queue and its
// parameters. A nil *AQM in a Dir, or Discipline "" or droptail, is the
// drop-tail queue. Zero parameters mean the discipline's default (the
// kernel's, see Resolved); ECN is explicit (fq_codel and cake mark by
// default: package topo fills that in). The queue's limit stays in
// Dir.QueuePackets / Dir.QueueBytes.
type AQM struct {
	Discipline string `json:"discipline"`
	// ECN marks ECN-capable packets (ECT(0)/ECT(1)) CE instead of
	// dropping them; packets that are not ECN-capable are still dropped.
	ECN bool `json:"ecn,omitempty"`
	// Target is CoDel's and cake's acceptable standing delay (5 ms) and
	// PIE's reference delay (15 ms).
	Target time.Duration `json:"target,omitempty"`
	// Interval is CoDel's sliding window (100 ms); cake's rtt.
	Interval time.Duration `json:"interval,omitempty"`
	// Flows and Quantum are FQ-CoDel's number of flow queues (1024) and
	// DRR quantum in bytes (one full frame, MTU+14).
	Flows   int `json:"flows,omitempty"`
	Quantum int `json:"quantum,omitempty"`
	// TUpdate, Alpha and Beta are PIE's probability update period
	// (15 ms) and gains (0.125 and 1.25 per second; the kernel keeps them
	// in sixteenths, so they are rounded to 1/16).
	TUpdate time.Duration `json:"tupdate,omitempty"`
	Alpha   float64       `json:"alpha,omitempty"`
	Beta    float64       `json:"beta,omitempty"`
	// Min and Max are RED's average-queue thresholds in bytes (defaults,
	// iproute2's: Max = limit/4, Min = Max/3), Probability its marking
	// probability at Max (2 %), Weight the EWMA weight of the average, a
	// power of two (default from iproute2's burst rule; 1 = the
	// instantaneous queue, DCTCP's step marking). Gentle ramps the
	// probability from Probability to 100 % between Max and 2 × Max
	// instead of marking everything above Max (the engine only: the
	// kernel's red has no gentle mode).
	Min         units.Bytes   `json:"min,omitempty"`
	Max         units.Bytes   `json:"max,omitempty"`
	Probability units.Percent `json:"probability,omitempty"`
	Weight      float64       `json:"weight,omitempty"`
	Gentle      bool          `json:"gentle,omitempty"`
}

// Defaults of the disciplines' parameters (the Linux qdiscs' and RFCs').
const (
	DefaultCoDelTarget   = 5 * time.Millisecond
	DefaultCoDelInterval = 100 * time.Millisecond
	DefaultFQFlows       = 1024
	DefaultPIETarget     = 15 * time.Millisecond
	DefaultPIETUpdate    = 15 * time.Millisecond
	DefaultPIEAlpha      = 0.125
	DefaultPIEBeta       = 1.25
	DefaultREDProb       = units.Percent(2)
	// REDAvgPacket is iproute2's avpkt: the packet size RED's default
	// weight and its idle-time decay assume.
	REDAvgPacket = 1000
)

// Default limits (packets) of the disciplines that take one in packets:
// the kernel qdiscs' own defaults.
const (
	DefaultCoDelLimit   = 1000
	DefaultFQCoDelLimit = 10240
	DefaultPIELimit     = 1000
	DefaultREDLimit     = 1000 // packets of a full frame, as bytes
)

// discipline returns a's discipline with "" read as drop-tail.
func (a *AQM) discipline() string {
	if a == nil || a.Discipline == "" {
		return DropTail
	}
	return a.Discipline
}

// Name is the discipline, "droptail" for a nil AQM.
func (a *AQM) Name() string { return a.discipline() }

// IsDropTail reports whether a is the plain drop-tail queue.
func (a *AQM) IsDropTail() bool { return a.discipline() == DropTail }

// CanMark reports whether the discipline can mark ECN (all but the FIFOs).
func CanMark(discipline string) bool {
	return discipline != DropTail && discipline != DropHead && discipline != ""
}

// DefaultECN is the kernel's default: fq_codel and cake mark, the others
// drop unless asked.
func DefaultECN(discipline string) bool { return discipline == FQCoDel || discipline == Cake }

// Validate reports every problem with a's parameters at once.
func (a *AQM) Validate() error {
	if a == nil {
		return nil
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	disc := a.discipline()
	known := false
	for _, d := range Disciplines {
		known = known || d == disc
	}
	if !known {
		return fmt.Errorf("queue discipline %q unknown (valid: %s)", disc, strings.Join(Disciplines, ", "))
	}
	if a.ECN && !CanMark(disc) {
		bad("%s cannot mark ECN (it only drops): remove ecn, or choose codel, fq_codel, pie, red or cake", disc)
	}
	if disc == Cake && !a.ECN {
		bad("cake always marks ECN-capable packets (the kernel has no switch to turn that off): remove ecn: false")
	}
	dur := func(name string, v time.Duration, applies bool) {
		switch {
		case v != 0 && !applies:
			bad("%s has no %s", disc, name)
		case v < 0 || v >= units.MaxDelay:
			bad("%s %v out of range (0, %v)", name, v, units.MaxDelay)
		case v > 0 && v < time.Microsecond:
			bad("%s %v is below the kernel's 1 µs resolution", name, v)
		}
	}
	codelish := disc == CoDel || disc == FQCoDel || disc == Cake
	dur("target", a.Target, codelish || disc == PIE)
	dur("interval", a.Interval, codelish)
	dur("tupdate", a.TUpdate, disc == PIE)
	if a.Target > 0 && a.Interval > 0 && a.Target >= a.Interval {
		bad("target %v must be below interval %v (CoDel drops when the delay stays above target for an interval)", a.Target, a.Interval)
	}
	if a.Flows != 0 && (disc != FQCoDel || a.Flows < 1 || a.Flows > 65536) {
		if disc != FQCoDel {
			bad("%s has no flows", disc)
		} else {
			bad("flows %d out of range [1, 65536]", a.Flows)
		}
	}
	if a.Quantum != 0 && (disc != FQCoDel || a.Quantum < 64 || a.Quantum > 1<<20) {
		if disc != FQCoDel {
			bad("%s has no quantum", disc)
		} else {
			bad("quantum %d bytes out of range [64, 1048576]", a.Quantum)
		}
	}
	gain := func(name string, v float64) {
		switch {
		case v != 0 && disc != PIE:
			bad("%s has no %s", disc, name)
		case math.IsNaN(v) || v < 0 || v > 2:
			bad("%s %g out of range [0, 2] (the kernel keeps it in sixteenths, at most 32/16)", name, v)
		}
	}
	gain("alpha", a.Alpha)
	gain("beta", a.Beta)
	isRED := disc == RED
	if !isRED {
		for _, f := range []struct {
			name string
			set  bool
		}{{"min", a.Min != 0}, {"max", a.Max != 0}, {"probability", a.Probability != 0}, {"weight", a.Weight != 0}, {"gentle", a.Gentle}} {
			if f.set {
				bad("%s has no %s (a RED parameter)", disc, f.name)
			}
		}
	} else {
		if a.Min < 0 || a.Max < 0 {
			bad("red thresholds must be positive (min %d, max %d bytes)", a.Min, a.Max)
		}
		if a.Min > 0 && a.Max > 0 && a.Min > a.Max {
			bad("red min %d bytes is above max %d bytes", a.Min, a.Max)
		}
		if math.IsNaN(float64(a.Probability)) || a.Probability < 0 || a.Probability > 100 {
			bad("red probability %v out of range (0%%, 100%%]", a.Probability)
		}
		if a.Weight != 0 {
			if _, ok := weightLog(a.Weight); !ok {
				bad("red weight %g must be a power of two in [2^-31, 1] (the kernel stores its log2), e.g. 1, 0.5, 0.001953125 (2^-9)", a.Weight)
			}
		}
	}
	return errors.Join(errs...)
}

// weightLog returns n with w = 2^-n.
func weightLog(w float64) (int, bool) {
	if !(w > 0 && w <= 1) {
		return 0, false
	}
	n := -math.Log2(w)
	r := math.Round(n)
	if math.Abs(n-r) > 1e-9 || r > 31 {
		return 0, false
	}
	return int(r), true
}

// RoundWeight is the power of two nearest to w in [2^-31, 1], for RED's
// EWMA weight (topo rounds what a file says with it).
func RoundWeight(w float64) float64 {
	if !(w > 0) {
		return 0
	}
	n := math.Round(-math.Log2(min(w, 1)))
	return math.Pow(2, -min(n, 31))
}

// Resolved returns a with every default filled in for a direction of the
// given rate and MTU whose queue limit is (pkts, bytes) (see
// Dir.QueueLimits): the parameters both backends run with.
func (a *AQM) Resolved(mtu int, pkts int, bytes int64) AQM {
	r := AQM{Discipline: a.discipline()}
	if a != nil {
		r = *a
		r.Discipline = a.discipline()
	}
	orD := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	switch r.Discipline {
	case CoDel, FQCoDel, Cake:
		orD(&r.Target, DefaultCoDelTarget)
		orD(&r.Interval, DefaultCoDelInterval)
		if r.Discipline == FQCoDel {
			if r.Flows == 0 {
				r.Flows = DefaultFQFlows
			}
			if r.Quantum == 0 {
				r.Quantum = frameBytes(mtu)
			}
		}
	case PIE:
		orD(&r.Target, DefaultPIETarget)
		orD(&r.TUpdate, DefaultPIETUpdate)
		if r.Alpha == 0 && (a == nil || a.Alpha == 0) {
			r.Alpha = DefaultPIEAlpha
		}
		if r.Beta == 0 && (a == nil || a.Beta == 0) {
			r.Beta = DefaultPIEBeta
		}
		r.Alpha, r.Beta = math.Round(r.Alpha*16)/16, math.Round(r.Beta*16)/16
	case RED:
		limit := bytes
		if limit == 0 {
			limit = int64(pkts) * int64(frameBytes(mtu))
		}
		// iproute2's rules (q_red.c, after Floyd's REDparameters.txt).
		if r.Max == 0 {
			if r.Min > 0 {
				r.Max = 3 * r.Min
			} else {
				r.Max = units.Bytes(limit / 4)
			}
		}
		if r.Min == 0 {
			r.Min = r.Max / 3
		}
		if r.Probability == 0 {
			r.Probability = DefaultREDProb
		}
		if r.Weight == 0 {
			r.Weight = math.Pow(2, -float64(redEWMALog(r.Min, r.Max)))
		}
	}
	return r
}

// redEWMALog is iproute2's tc_red_eval_ewma with its default burst,
// (2·min + max) / (3·avpkt): the largest weight W = 2^-n such that a
// burst of that many packets arriving at an empty queue does not push the
// average past min.
func redEWMALog(minTh, maxTh units.Bytes) int {
	burst := float64((2*minTh + maxTh) / (3 * REDAvgPacket))
	a := burst + 1 - float64(minTh)/REDAvgPacket
	if a < 1 {
		return 1
	}
	w := 0.5
	for n := 1; n < 32; n, w = n+1, w/2 {
		if a <= (1-math.Pow(1-w, burst))/w {
			return n
		}
	}
	return 31
}

// REDIdleTable is the kernel's idle-time decay of RED's average (Stab and
// Scell_log, computed as iproute2's tc_red_eval_idle_damping does for
// avpkt REDAvgPacket at the link's rate, but in microseconds, the unit
// the kernel indexes it with since it measures idle time with ktime):
// after an idle time of i µs, i.e. m = i/xmit(avpkt) packet times, the
// average is shifted right by stab[(i >> cellLog) & 255] = -m·ln(1-W)
// bits (iproute2's formula), or, where that is 0, reduced linearly (red.h,
// red_calc_qavg_from_idle_time). The engine uses the same table, so both
// age the average alike.
func REDIdleTable(wlog int, rate units.BitRate) (stab [256]byte, cellLog int) {
	bps := float64(rate.Bytes())
	if bps <= 0 {
		bps = 1
	}
	xmit := REDAvgPacket / bps * 1e6 // µs per average packet
	lW := -math.Log(1-1/math.Pow(2, float64(wlog))) / xmit
	if wlog == 0 {
		lW = math.Inf(1)
	}
	maxTime := 31 / lW
	for cellLog = 0; cellLog < 31; cellLog++ {
		if maxTime/math.Pow(2, float64(cellLog)) < 512 {
			break
		}
	}
	for i := 1; i < 255; i++ {
		v := float64(i<<cellLog) * lW
		stab[i] = byte(min(31, v))
	}
	stab[255] = 31
	return stab, cellLog
}

// KernelSupports returns nil when the kernel's qdisc for a's discipline
// can run a as given, else an error wrapping ErrNotSupported saying what
// it lacks (whether the running kernel has the qdisc at all is Caps').
func (a *AQM) KernelSupports(pkts int, bytes int64) error {
	disc := a.discipline()
	switch {
	case disc == RED && a.Gentle:
		return notSupported("red gentle", "the kernel's red qdisc has no gentle mode (marking ramps to 100 %% between max and 2·max only in the engine): use backend: userspace or auto, or drop gentle")
	case bytes > 0 && (disc == CoDel || disc == FQCoDel || disc == PIE || disc == DropHead):
		return notSupported(disc+" byte limit", "the kernel's %s counts its limit in packets; give the limit in packets (the engine takes bytes too)", kernelKind(disc))
	case pkts > 0 && bytes > 0:
		return notSupported("queue", "the kernel path bounds a queue in packets or in bytes, not both (the engine can do both)")
	}
	return nil
}

// EngineSupports returns nil when the userspace link engine implements
// a's discipline, else an error wrapping ErrNotSupported saying why not.
func (a *AQM) EngineSupports() error {
	if a.discipline() == Cake {
		return notSupported("cake in the engine", "the userspace link engine does not implement cake: its COBALT AQM (CoDel with BLUE for unresponsive flows), 8-way set-associative flow hashing with per-host fairness (triple-isolate), diffserv tins, ACK filtering and its overhead-compensating shaper are not modelled, and a partial cake would not be cake; run it on a kernel with sch_cake (backend: kernel or auto), or use fq_codel")
	}
	return nil
}

// kernelKind is the Linux qdisc kind of a discipline.
func kernelKind(disc string) string {
	switch disc {
	case DropTail:
		return "pfifo"
	case DropHead:
		return "pfifo_head_drop"
	}
	return disc
}

// KernelKind is the Linux qdisc that implements a discipline ("pfifo" for
// drop-tail, "pfifo_head_drop" for drop-head), for probes and messages.
func KernelKind(discipline string) string { return kernelKind(discipline) }

// String describes a as tc would, e.g. "codel target 5ms interval 100ms ecn".
func (a *AQM) String() string {
	if a == nil {
		return DropTail
	}
	var b strings.Builder
	b.WriteString(a.discipline())
	add := func(format string, args ...any) { fmt.Fprintf(&b, " "+format, args...) }
	if a.Target > 0 {
		add("target %v", a.Target)
	}
	if a.Interval > 0 {
		add("interval %v", a.Interval)
	}
	if a.Flows > 0 {
		add("flows %d", a.Flows)
	}
	if a.Quantum > 0 {
		add("quantum %d", a.Quantum)
	}
	if a.TUpdate > 0 {
		add("tupdate %v", a.TUpdate)
	}
	if a.Alpha > 0 {
		add("alpha %g", a.Alpha)
	}
	if a.Beta > 0 {
		add("beta %g", a.Beta)
	}
	if a.Min > 0 {
		add("min %dB", a.Min)
	}
	if a.Max > 0 {
		add("max %dB", a.Max)
	}
	if a.Probability > 0 {
		add("probability %g%%", float64(a.Probability))
	}
	if a.Weight > 0 {
		add("weight %g", a.Weight)
	}
	if a.Gentle {
		add("gentle")
	}
	if a.ECN {
		add("ecn")
	}
	return b.String()
}
