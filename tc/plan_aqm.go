package tc

import (
	"fmt"
	"math"

	"github.com/emuctl/emuctl/units"
)

// AQMOpts are the parameters of a queue-discipline leaf: codel, fq_codel,
// pie, red or cake (pfifo_head_drop, a FIFO, uses FIFOOpts).
type AQMOpts struct {
	AQM AQM // resolved: every default filled in (Dir.Discipline)
	// Limit is the hard limit: packets for codel, fq_codel and pie, bytes
	// for red, cake's memory limit in bytes (0: cake's default).
	Limit uint32
	// Rate is cake's own shaper (cake is shaper and queue in one).
	Rate units.ByteRate
	// MTU is the interface MTU, for fq_codel's memory limit.
	MTU int
}

// planAQM appends the tree of a direction whose queue has a discipline
// other than drop-tail: an orphaning netem stage (with the impairments)
// when withNetem, then tbf at the rate with the discipline as its leaf —
// or cake alone, which shapes itself:
//
//	1: root  netem impairments, rate OrderRate        limit L+N   (withNetem)
//	2: 1:1   tbf rate R burst b
//	3: 2:1   codel | fq_codel | pie | red | pfifo_head_drop  limit N
//
//	1: root  netem impairments, rate OrderRate        limit L+N   (withNetem)
//	2: 1:1   cake bandwidth R
//
// Without netem the tree starts at tbf (or cake) as 1:.
func planAQM(p *KernelPlan, d Dir, mtu int, withNetem bool) (*KernelPlan, error) {
	pkts, bytes := d.QueueLimits(mtu)
	a := d.Discipline(mtu)
	if err := a.KernelSupports(pkts, bytes); err != nil {
		return nil, err
	}
	parent, next := uint32(handleRoot), uint32(hMajor1)
	if withNetem {
		delay := netemImpair(d, mtu)
		if !(d.Jitter > 0 && d.Reorder) {
			delay.Rate = OrderRate // orphan the packet even without delay
		}
		held := int64(pkts) + bytes/64
		if a.Discipline == Cake {
			held = 10000
		}
		delay.Limit = clampU32(int64(delayLimit(d, mtu)) + held)
		p.add("netem", hMajor1, handleRoot, "delay", delay, nil, nil)
		parent, next = hMajor1|1, hMajor2
	}
	leaf := Qdisc{Kind: kernelKind(a.Discipline), Role: "queue " + a.Discipline}
	switch a.Discipline {
	case DropHead:
		leaf.FIFO = &FIFOOpts{Limit: uint32(pkts)}
	case Cake:
		leaf.AQM = &AQMOpts{AQM: a, Limit: clampU32(bytes), Rate: d.Rate.Bytes(), MTU: mtu}
		leaf.Handle, leaf.Parent, leaf.Role = next, parent, "bottleneck, queue cake"
		p.Qdiscs = append(p.Qdiscs, leaf)
		return p, nil
	case RED:
		limit := bytes
		if limit == 0 {
			limit = int64(pkts) * int64(frameBytes(mtu))
		}
		leaf.AQM = &AQMOpts{AQM: a, Limit: clampU32(limit), MTU: mtu}
	default:
		leaf.AQM = &AQMOpts{AQM: a, Limit: uint32(pkts), MTU: mtu}
	}
	// TBF's limit only sizes its default bfifo, which the leaf replaces.
	tbfLimit := clampU32(max(bytes, int64(pkts)*int64(frameBytes(mtu))))
	p.add("tbf", next, parent, "bottleneck", nil, tbfOpts(d.Rate, mtu, tbfLimit), nil)
	leaf.Handle, leaf.Parent = next+1<<16, next|1
	p.Qdiscs = append(p.Qdiscs, leaf)
	return p, nil
}

// LeafQdisc is d's queue alone, as one qdisc with the given handle under
// parent (a class of someone else's tree, e.g. an Open vSwitch linux-htb
// class): the discipline's qdisc with its limit (pfifo for a drop-tail
// queue, bfifo with a byte limit). d's rate is the class's, for RED's
// idle decay; nothing shapes here (cake gets no bandwidth: the class
// does the shaping).
func LeafQdisc(d Dir, mtu int, parent, handle uint32) (Qdisc, error) {
	if err := checkPlanInput(d, mtu); err != nil {
		return Qdisc{}, err
	}
	pkts, bytes := d.QueuePackets, int64(d.QueueBytes)
	if d.AQM.IsDropTail() {
		q := Qdisc{Kind: "pfifo", Handle: handle, Parent: parent, Role: "queue", FIFO: &FIFOOpts{Limit: uint32(pkts)}}
		if bytes > 0 {
			q.Kind, q.FIFO.Limit = "bfifo", clampU32(bytes)
		}
		return q, nil
	}
	if pkts == 0 && bytes == 0 && d.Rate > 0 {
		pkts, bytes = d.QueueLimits(mtu)
	}
	if pkts == 0 && bytes == 0 {
		pkts = DefaultQueuePackets(Dir{Rate: 1}, mtu)
	}
	a := d.AQM.Resolved(mtu, pkts, bytes)
	if err := a.KernelSupports(pkts, bytes); err != nil {
		return Qdisc{}, err
	}
	q := Qdisc{Kind: kernelKind(a.Discipline), Handle: handle, Parent: parent, Role: "queue " + a.Discipline}
	switch a.Discipline {
	case DropHead:
		q.FIFO = &FIFOOpts{Limit: uint32(pkts)}
	case RED:
		limit := bytes
		if limit == 0 {
			limit = int64(pkts) * int64(frameBytes(mtu))
		}
		q.AQM = &AQMOpts{AQM: a, Limit: clampU32(limit), Rate: d.Rate.Bytes(), MTU: mtu}
	case Cake:
		q.AQM = &AQMOpts{AQM: a, Limit: clampU32(bytes), MTU: mtu}
	default:
		q.AQM = &AQMOpts{AQM: a, Limit: uint32(pkts), MTU: mtu}
	}
	return q, nil
}

// REDParams are the kernel's fixed-point RED parameters for a resolved
// RED discipline (tc_red_qopt and TCA_RED_MAX_P / TCA_RED_STAB), also
// what the engine computes with.
type REDParams struct {
	MinTh, MaxTh uint32 // bytes
	Wlog         uint8  // W = 2^-Wlog
	Plog         uint8  // used only by kernels that ignore MaxP
	ScellLog     uint8
	MaxP         uint32 // probability at MaxTh × 2^32 (saturated)
	Stab         [256]byte
}

// RED returns the kernel encoding of a resolved RED discipline at rate.
func (a AQM) RED(rate units.ByteRate) REDParams {
	wlog, _ := weightLog(a.Weight)
	r := REDParams{MinTh: clampU32(int64(a.Min)), MaxTh: clampU32(int64(a.Max)), Wlog: uint8(wlog)}
	r.MaxP = uint32(min(math.Round(a.Probability.Prob()*(1<<32)), math.MaxUint32))
	// Plog = log2(delta/max_p), for kernels that would use it.
	if delta := float64(r.MaxTh) - float64(r.MinTh); delta > 0 && a.Probability > 0 {
		pl := math.Ceil(math.Log2(delta / a.Probability.Prob()))
		r.Plog = uint8(max(0, min(pl, 31)))
	}
	stab, cl := REDIdleTable(wlog, rate.Bits())
	r.Stab, r.ScellLog = stab, uint8(cl)
	return r
}

// describeAQM is the tc-like text of an AQM leaf.
func describeAQM(kind string, o *AQMOpts) string {
	a := o.AQM
	switch kind {
	case "red":
		return fmt.Sprintf(" limit %dB min %dB max %dB probability %g%% weight 2^-%d%s",
			o.Limit, a.Min, a.Max, float64(a.Probability), redWlog(a.Weight), ecnWord(a.ECN))
	case "cake":
		s := fmt.Sprintf(" bandwidth %s rtt %v target %v", o.Rate.Bits().TC(), a.Interval, a.Target)
		if o.Limit > 0 {
			s += fmt.Sprintf(" memlimit %dB", o.Limit)
		}
		return s
	case "pie":
		return fmt.Sprintf(" limit %d target %v tupdate %v alpha %g beta %g%s", o.Limit, a.Target, a.TUpdate, a.Alpha, a.Beta, ecnWord(a.ECN))
	case "fq_codel":
		return fmt.Sprintf(" limit %d flows %d quantum %d target %v interval %v%s", o.Limit, a.Flows, a.Quantum, a.Target, a.Interval, ecnWord(a.ECN))
	}
	return fmt.Sprintf(" limit %d target %v interval %v%s", o.Limit, a.Target, a.Interval, ecnWord(a.ECN))
}

func redWlog(w float64) int {
	n, _ := weightLog(w)
	return n
}

func ecnWord(on bool) string {
	if on {
		return " ecn"
	}
	return ""
}
