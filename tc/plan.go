package tc

import (
	"fmt"
	"math"
	"time"

	"github.com/emuctl/emuctl/units"
)

// KernelPlan is an ordered qdisc tree for the egress of one interface.
// It is pure data: PlanKernel and PlanShaper make it without syscalls,
// ApplyKernel installs it, ReadBack describes what is installed.
type KernelPlan struct {
	Dir Dir // what the plan implements
	MTU int // the interface MTU the plan was made for
	// Qdiscs in creation order: every parent before its child. Empty means
	// "unshaped": ApplyKernel removes the root qdisc so the device default
	// (noqueue on veth) is back.
	Qdiscs []Qdisc
}

// Qdisc is one node of a plan (or of a tree read back from the kernel).
// Exactly one of Netem, TBF, FIFO, AQM is set for the kinds this package
// plans.
type Qdisc struct {
	// "netem", "tbf", "pfifo", "bfifo", "pfifo_head_drop", "codel",
	// "fq_codel", "pie", "red", "cake" (anything when read back)
	Kind   string
	Handle uint32 // major:minor, minor 0
	Parent uint32 // TC_H_ROOT, or the parent's class (major:1)
	Role   string // what the node is for, in the plan ("delay", "bottleneck", "queue")

	Netem *NetemOpts
	TBF   *TBFOpts
	FIFO  *FIFOOpts
	AQM   *AQMOpts
	Stats *QdiscStats // only when read back
}

// NetemOpts are netem's parameters in the units of this package; the
// encoder converts them (ticks, 32-bit scaled probabilities, bytes/s).
type NetemOpts struct {
	Latency   time.Duration // sent as psched ticks (64 ns) and as TCA_NETEM_LATENCY64
	Jitter    time.Duration // likewise; 0 = none
	Dist      string        // table loaded when Jitter > 0: uniform, normal, pareto
	Limit     uint32        // packets held by this netem AND its child qdisc
	Loss      units.Percent // Bernoulli
	GE        *units.GilbertElliott
	Duplicate units.Percent
	Corrupt   units.Percent
	Rate      units.ByteRate // OrderRate when only used for ordering/orphaning
	Seed      uint64         // netem PRNG seed (TCA_NETEM_PRNG_SEED); 0 = kernel picks
}

// TBFOpts are a token bucket's parameters.
type TBFOpts struct {
	Rate  units.ByteRate // TCA_TBF_RATE64 above 2^32-1
	Burst uint32         // bytes (TCA_TBF_BURST; also sent as buffer ticks)
	// Limit is sent in tc_tbf_qopt.limit. The kernel passes it on to a
	// pfifo/bfifo child on every change (fifo_set_limit), so it always
	// equals the child's limit: packets under pfifo, bytes under bfifo.
	Limit uint32
}

// FIFOOpts is pfifo's (packets) or bfifo's (bytes) limit.
type FIFOOpts struct{ Limit uint32 }

// QdiscStats are the kernel's counters for one qdisc (TCA_STATS2, and
// the discipline's own TCA_STATS_APP for the AQM leaves).
type QdiscStats struct {
	Bytes, Packets    uint64
	Drops, Overlimits uint32
	QLen, Backlog     uint32 // packets, bytes
	// AQM leaves only (from their xstats): Marks are packets marked CE
	// instead of dropped; LimitDrops the drops at the hard limit (the
	// rest of Drops are the discipline's own early drops); Delay the
	// queueing delay it last measured (codel and fq_codel: the last
	// dequeued packet's sojourn, pie: its current estimate, cake: the
	// average over its tins); XStats says the xstats were read.
	Marks, LimitDrops uint32
	Delay             time.Duration
	XStats            bool
}

// AQMDrops are the drops the discipline chose (Drops less those at the
// hard limit); 0 without xstats.
func (s *QdiscStats) AQMDrops() uint32 {
	if s == nil || !s.XStats || s.LimitDrops > s.Drops {
		return 0
	}
	return s.Drops - s.LimitDrops
}

// Netlink handle values used by the plans.
const (
	handleRoot = 0xFFFFFFFF // TC_H_ROOT
	hMajor1    = 1 << 16    // 1:
	hMajor2    = 2 << 16    // 2:
	hMajor3    = 3 << 16    // 3:
)

// OrderRate (bytes/s) is the netem rate planned on a delay stage that must
// keep packets in order under jitter or must orphan them: with any rate
// netem schedules each packet no earlier than the previous one
// (time_to_send = max(now+delay, last) + len/rate), and this rate makes
// len/rate round to 0 ns for any frame below 1 MB.
const OrderRate units.ByteRate = 1 << 50

// tbfBurstTime is how much line-rate time a TBF bucket holds on top of one
// full frame. A bucket of exactly one frame loses every microsecond its
// watchdog fires late (tokens cannot accumulate past the bucket): 15 µs of
// timer latency per 242 µs frame cost 6 % of the rate at 50 Mbit/s when
// measured. 1 ms absorbs timer and softirq latency on a loaded machine,
// and after idle lets at most 1 ms of traffic pass at line rate.
const tbfBurstTime = time.Millisecond

// assumedMaxRate bounds what can arrive at a delay stage when the link has
// no rate (or a lower one): a veth carries at most this much in MTU frames
// on the machines we target. It only sizes safety limits.
const assumedMaxRate = 10 * units.Gbit

// PlanKernel plans d for the egress of an interface with the given MTU on
// a kernel that has netem. See doc.go for the layout and why.
func PlanKernel(d Dir, mtu int) (*KernelPlan, error) {
	if err := checkPlanInput(d, mtu); err != nil {
		return nil, err
	}
	p := &KernelPlan{Dir: d, MTU: mtu}
	if d.IsZero() {
		return p, nil
	}
	if d.Rate > 0 && !d.AQM.IsDropTail() {
		return planAQM(p, d, mtu, true)
	}
	pkts, bytes := d.QueueLimits(mtu)
	if d.Rate > 0 && pkts > 0 && bytes > 0 {
		return nil, notSupported("queue", "the kernel path bounds a queue in packets or in bytes, not both (the engine can do both)")
	}
	impair := d.Delay > 0 || d.Jitter > 0 || d.Loss > 0 || d.GE != nil || d.Duplicate > 0 || d.Corrupt > 0
	delayStage := netemImpair(d, mtu)

	switch {
	case d.Rate == 0:
		delayStage.Limit = delayLimit(d, mtu)
		p.add("netem", hMajor1, handleRoot, "delay", delayStage, nil, nil)
	case bytes > 0:
		// netem cannot bound bytes: TBF + bfifo take the bottleneck, and
		// the delay netem gets OrderRate so it always orphans.
		delayStage.Rate = OrderRate
		delayStage.Limit = clampU32(int64(delayLimit(d, mtu)) + bytes/64)
		p.add("netem", hMajor1, handleRoot, "delay", delayStage, nil, nil)
		p.add("tbf", hMajor2, hMajor1|1, "bottleneck", nil, tbfOpts(d.Rate, mtu, clampU32(bytes)), nil)
		p.add("bfifo", hMajor3, hMajor2|1, "queue", nil, nil, &FIFOOpts{Limit: clampU32(bytes)})
	case !impair:
		p.add("netem", hMajor1, handleRoot, "bottleneck", nil, nil, nil)
		p.Qdiscs[0].Netem = &NetemOpts{Rate: d.Rate.Bytes(), Limit: uint32(pkts)}
	case d.Duplicate > 0:
		// Kernels from mid-2025 refuse a duplicating netem in a tree with
		// another netem, so everything goes into one netem. Its limit
		// counts the frames in flight too: add what the rate puts there.
		delayStage.Rate = d.Rate.Bytes()
		delayStage.Limit = clampU32(int64(pkts) + inflightFrames(d.Rate, d, mtu))
		p.add("netem", hMajor1, handleRoot, "delay+bottleneck", delayStage, nil, nil)
	default:
		delayStage.Limit = clampU32(int64(pkts) + int64(delayLimit(d, mtu)))
		p.add("netem", hMajor1, handleRoot, "delay", delayStage, nil, nil)
		p.add("netem", hMajor2, hMajor1|1, "bottleneck", &NetemOpts{Rate: d.Rate.Bytes(), Limit: uint32(pkts)}, nil, nil)
	}
	return p, nil
}

// PlanShaper plans rate and queue only, with TBF and a fifo, for kernels
// without netem. TBF does not orphan packets, so the queue is faithful
// only where the packets were orphaned before (an L3 hop's egress, or
// behind the userspace engine); on a sender's own interface TCP Small
// Queues keep it nearly empty. Any other parameter is ErrNotSupported.
func PlanShaper(d Dir, mtu int) (*KernelPlan, error) {
	if err := checkPlanInput(d, mtu); err != nil {
		return nil, err
	}
	if d.Delay > 0 || d.Jitter > 0 || d.Loss > 0 || d.GE != nil || d.Duplicate > 0 || d.Corrupt > 0 {
		return nil, notSupported("netem", "delay, jitter, loss, duplication and corruption need netem or the userspace engine (%s)", d)
	}
	p := &KernelPlan{Dir: d, MTU: mtu}
	if d.Rate == 0 {
		return p, nil
	}
	if !d.AQM.IsDropTail() {
		return planAQM(p, d, mtu, false)
	}
	pkts, bytes := d.QueueLimits(mtu)
	if pkts > 0 && bytes > 0 {
		return nil, notSupported("queue", "the kernel path bounds a queue in packets or in bytes, not both (the engine can do both)")
	}
	kind, limit := "pfifo", uint32(pkts)
	if bytes > 0 {
		kind, limit = "bfifo", clampU32(bytes)
	}
	p.add("tbf", hMajor1, handleRoot, "bottleneck", nil, tbfOpts(d.Rate, mtu, limit), nil)
	p.add(kind, hMajor2, hMajor1|1, "queue", nil, nil, &FIFOOpts{Limit: limit})
	return p, nil
}

// SetSeed makes every netem of the plan draw from a seeded PRNG (kernels
// without TCA_NETEM_PRNG_SEED ignore it).
func (p *KernelPlan) SetSeed(seed uint64) {
	for i := range p.Qdiscs {
		if n := p.Qdiscs[i].Netem; n != nil {
			n.Seed = seed + uint64(i)
		}
	}
}

// String lists the plan one qdisc per line, as ReadBack does.
func (p *KernelPlan) String() string {
	if len(p.Qdiscs) == 0 {
		return "(unshaped: device default qdisc)"
	}
	return formatTree(p.Qdiscs)
}

func (p *KernelPlan) add(kind string, handle, parent uint32, role string, n *NetemOpts, t *TBFOpts, f *FIFOOpts) {
	p.Qdiscs = append(p.Qdiscs, Qdisc{Kind: kind, Handle: handle, Parent: parent, Role: role, Netem: n, TBF: t, FIFO: f})
}

func checkPlanInput(d Dir, mtu int) error {
	if mtu < 68 || mtu > 65535 {
		return fmt.Errorf("mtu %d out of range [68, 65535]", mtu)
	}
	if err := d.Validate(); err != nil {
		return err
	}
	if d.Trace != nil {
		return notSupported("trace", "netem cannot replay a delivery trace (its slot option batches at random, it replays nothing): a traced link runs on the userspace link engine")
	}
	return nil
}

// netemImpair is the delay stage's parameters (everything but the rate).
func netemImpair(d Dir, mtu int) *NetemOpts {
	n := &NetemOpts{
		Latency: d.Delay, Jitter: d.Jitter, Loss: d.Loss, GE: d.GE,
		Duplicate: d.Duplicate, Corrupt: d.Corrupt,
	}
	if d.Jitter > 0 {
		n.Dist = d.dist()
		if !d.Reorder {
			n.Rate = OrderRate
		}
	}
	return n
}

// delayLimit is the packet limit of a delay-only netem stage: it must never
// be the bottleneck (netem's default of 1000 packets causes tail loss at
// high rate × delay), so it is four times what max(rate, 10 Gbit/s) puts
// in flight during the longest delay, in full-size frames, and at least
// 10000.
func delayLimit(d Dir, mtu int) uint32 {
	return clampU32(max(10000, 4*inflightFrames(max(d.Rate, assumedMaxRate), d, mtu)))
}

// inflightFrames is how many full frames rate keeps in the delay (with the
// jitter's span), rounded up.
func inflightFrames(rate units.BitRate, d Dir, mtu int) int64 {
	span := d.Jitter
	if d.dist() != DistUniform {
		span = 4 * d.Jitter
	}
	return int64(math.Ceil(float64(rate) * (d.Delay + span).Seconds() / (8 * float64(frameBytes(mtu)))))
}

func tbfOpts(rate units.BitRate, mtu int, limit uint32) *TBFOpts {
	b := rate.Bytes()
	burst := uint64(mtu+18) + uint64(float64(b)*tbfBurstTime.Seconds())
	return &TBFOpts{Rate: b, Burst: uint32(min(burst, math.MaxUint32)), Limit: limit}
}

func clampU32(v int64) uint32 { return uint32(max(0, min(v, math.MaxUint32))) }
