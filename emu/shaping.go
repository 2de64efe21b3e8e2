package emu

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/units"
)

// Interface names of the two engine ends inside a link namespace.
const (
	engineIfA = "ea" // towards the link's A end
	engineIfB = "eb" // towards the link's B end
)

// linkNetns is the namespace of a userspace link: "<lab>._l<index>". Node
// names start with a letter, so it never collides with a node.
func linkNetns(lab string, i int) string { return fmt.Sprintf("%s._l%d", lab, i) }

// frameBytes is the wire size of a full-MTU Ethernet frame.
func frameBytes(mtu int) int { return mtu + 14 }

// toDir turns one direction of a link's parameters into the shaping
// parameters tc applies. A queue given as a multiple of the BDP uses the
// link's rate in that direction and its round-trip delay (both directions'
// delays), counted in full-MTU frames, at least 2.
func toDir(p topo.LinkParams, rtt time.Duration, mtu int) tc.Dir {
	d := tc.Dir{Rate: p.Rate, Delay: p.Delay, Jitter: p.Jitter, JitterDist: p.JitterDist, Reorder: p.Reorder,
		Loss: p.Loss, Duplicate: p.Duplicate, Corrupt: p.Corrupt}
	if p.GE != nil {
		ge := *p.GE
		d.GE = &ge
	}
	if tr := p.Trace; tr != nil {
		d.Trace = &tc.Trace{File: tr.File, Loop: tr.Loop, Offset: tr.Offset, Ms: tr.Ms}
		d.Order = p.Order
		if q := p.Queue; q != nil {
			// mahimahi's queue: limits count waiting packets, none is infinite
			d.QueuePackets, d.QueueBytes = q.Packets, q.Bytes
			d.AQM = QueueAQM(q, mtu)
		}
		return d
	}
	if q := p.Queue; q != nil {
		switch {
		case q.Packets > 0:
			d.QueuePackets = q.Packets
		case q.Bytes > 0:
			d.QueueBytes = q.Bytes
		case q.BDP > 0:
			bdp := float64(p.Rate) / 8 * rtt.Seconds() * q.BDP
			d.QueuePackets = max(2, int(math.Ceil(bdp/float64(frameBytes(mtu)))))
		}
		d.AQM = QueueAQM(q, mtu)
	}
	return d
}

// QueueAQM is the discipline of a topology queue (nil: drop-tail) for an
// interface of the given MTU, with ECN at the discipline's default unless
// the queue says, and RED's thresholds in bytes (packets count full
// frames).
func QueueAQM(q *topo.Queue, mtu int) *tc.AQM {
	if q.DisciplineName() == topo.QueueDropTail {
		return nil
	}
	a := &tc.AQM{Discipline: q.Discipline, ECN: tc.DefaultECN(q.Discipline),
		Target: q.Target, Interval: q.Interval, Flows: q.Flows, Quantum: q.Quantum,
		TUpdate: q.TUpdate, Alpha: q.Alpha, Beta: q.Beta,
		Probability: q.Probability, Weight: q.Weight, Gentle: q.Gentle}
	if q.ECN != nil {
		a.ECN = *q.ECN
	}
	size := func(s topo.QueueSize) units.Bytes {
		if s.Bytes > 0 {
			return s.Bytes
		}
		return units.Bytes(s.Packets * frameBytes(mtu))
	}
	a.Min, a.Max = size(q.Min), size(q.Max)
	return a
}

// needsNetem reports whether a direction asks for more than a rate and a
// queue: delay, jitter, loss, duplication or corruption, which only netem
// (or the userspace engine) can do.
func needsNetem(d tc.Dir) bool {
	return d.Delay > 0 || d.Jitter > 0 || d.Loss > 0 || d.GE != nil || d.Duplicate > 0 || d.Corrupt > 0
}

// planLinks decides the backend of every shaped link and checks the
// parameters, before anything is created.
func planLinks(spec *topo.Spec, caps tc.Caps) ([]LinkState, []string) {
	var out []LinkState
	var errs []string
	for i, l := range spec.Links {
		if l.Params == nil {
			continue
		}
		pa, pb := l.Params.Dir(true), l.Params.Dir(false)
		mtu := 1500
		if ifc := findIface(spec.Node(l.A.Node), l.A.Iface); ifc != nil && ifc.MTU > 0 {
			mtu = ifc.MTU
		}
		rtt := pa.Delay + pb.Delay
		ls := LinkState{Index: i, Name: l.A.String() + " <-> " + l.B.String(), AtoB: toDir(pa, rtt, mtu), BtoA: toDir(pb, rtt, mtu)}
		if ls.AtoB.IsZero() && ls.BtoA.IsZero() && l.Params.Backend != topo.BackendUserspace {
			continue // unshaped; backend: userspace alone runs the engine, to be shaped in place later
		}
		where := l.Pos
		if where == "" {
			where = "link " + ls.Name
		}
		for _, e := range []struct {
			dir string
			d   tc.Dir
		}{{"a->b", ls.AtoB}, {"b->a", ls.BtoA}} {
			if err := e.d.Validate(); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %s: %v", where, e.dir, err))
			}
		}
		backend := l.Params.Backend
		if tr := tracedAt(l); tr != "" {
			// netem cannot replay a trace: only the engine can run the link
			switch backend {
			case "", topo.BackendAuto, topo.BackendUserspace:
				ls.Backend, ls.Netns = BackendEngine, linkNetns(spec.Name, i)
			default:
				errs = append(errs, fmt.Sprintf("%s: backend: %s cannot replay a trace (netem has no trace mode; its slot option batches at random): use backend: auto or userspace, which run a traced link on the userspace link engine", tr, backend))
			}
			out = append(out, ls)
			continue
		}
		qAt := queueWhere(l, where)
		kernelQ := kernelQueueErr(caps, ls.AtoB, ls.BtoA, mtu)
		engineQ := engineQueueErr(ls.AtoB, ls.BtoA)
		switch backend {
		case "", "auto":
			switch {
			case caps.Netem && kernelQ == nil:
				ls.Backend = BackendNetem
			case engineQ == nil:
				ls.Backend = BackendEngine
			default:
				if kernelQ == nil {
					kernelQ = fmt.Errorf("no sch_netem (%s)", caps.Reasons["netem"])
				}
				errs = append(errs, fmt.Sprintf("%s: no backend can run this queue: the kernel: %v; the userspace link engine: %v", qAt, kernelQ, engineQ))
			}
		case "userspace":
			ls.Backend = BackendEngine
			if engineQ != nil {
				errs = append(errs, fmt.Sprintf("%s: backend: userspace: %v", qAt, engineQ))
			}
		case "kernel":
			switch {
			case kernelQ != nil:
				errs = append(errs, fmt.Sprintf("%s: backend: kernel: %v; use backend: auto or userspace (the link engine implements drophead, codel, fq_codel, pie and red)", qAt, kernelQ))
			case caps.Netem:
				ls.Backend = BackendNetem
			case !needsNetem(ls.AtoB) && !needsNetem(ls.BtoA) && caps.TBF:
				ls.Backend = BackendShaper
				ls.Warning = "kernel-only layout without netem: TBF on each end's egress; on paths without an IP hop TCP Small Queues keep its queue about two packets deep, so queueing delay and bufferbloat will not show (use backend: userspace or auto for a faithful queue)"
			default:
				errs = append(errs, fmt.Sprintf("%s: backend: kernel needs sch_netem for delay, jitter, loss, duplicate or corrupt, and this kernel has none (%s); use backend: userspace or auto", where, caps.Reasons["netem"]))
			}
		default:
			errs = append(errs, fmt.Sprintf("%s: unknown backend %q (valid: auto, kernel, userspace)", where, backend))
		}
		if ls.Backend == BackendEngine {
			ls.Netns = linkNetns(spec.Name, i)
		}
		out = append(out, ls)
	}
	return out, errs
}

// UnavailableQueues says which links of spec have a queue discipline
// that no backend they may use can run on a kernel with caps (cake on
// the engine, a qdisc the kernel lacks on a pinned kernel backend): what
// up would refuse, for callers that leave such a scenario out (a suite's
// "where available"). Empty when every queue can run.
func UnavailableQueues(spec *topo.Spec, caps tc.Caps) []string {
	var out []string
	for _, l := range spec.Links {
		if l.Params == nil {
			continue
		}
		pa, pb := l.Params.Dir(true), l.Params.Dir(false)
		mtu := 1500
		rtt := pa.Delay + pb.Delay
		a, b := toDir(pa, rtt, mtu), toDir(pb, rtt, mtu)
		if a.AQM.IsDropTail() && b.AQM.IsDropTail() {
			continue
		}
		kq, eq := kernelQueueErr(caps, a, b, mtu), engineQueueErr(a, b)
		if kq == nil && !caps.Netem {
			kq = fmt.Errorf("no sch_netem")
		}
		var why error
		switch l.Params.Backend {
		case "", topo.BackendAuto:
			if kq != nil && eq != nil {
				why = fmt.Errorf("the kernel: %v; the link engine: %v", kq, eq)
			}
		case topo.BackendKernel:
			why = kq
		case topo.BackendUserspace:
			why = eq
		}
		if why != nil {
			out = append(out, fmt.Sprintf("link %s <-> %s: %v", l.A, l.B, why))
		}
	}
	return out
}

// tracedAt is "file:line:col" of a link's first trace, "" if it has none.
func tracedAt(l topo.Link) string {
	for _, aToB := range []bool{true, false} {
		if tr := l.Params.Dir(aToB).Trace; tr != nil {
			if tr.At != "" {
				return tr.At
			}
			return l.Pos
		}
	}
	return ""
}

// queueWhere is "file:line:col" of a link's queue with a discipline (the
// a->b one first), else where.
func queueWhere(l topo.Link, where string) string {
	for _, aToB := range []bool{true, false} {
		if q := l.Params.Dir(aToB).Queue; q != nil && q.At != "" && q.DisciplineName() != topo.QueueDropTail {
			return q.At
		}
	}
	return where
}

// kernelQueueErr says why the kernel cannot run a link's queues (nil:
// it can): a discipline whose qdisc it lacks, or parameters its qdisc
// does not have.
func kernelQueueErr(caps tc.Caps, a, b tc.Dir, mtu int) error {
	for _, e := range []struct {
		dir string
		d   tc.Dir
	}{{"a->b", a}, {"b->a", b}} {
		if e.d.Rate == 0 || e.d.AQM.IsDropTail() {
			continue
		}
		disc := e.d.AQM.Name()
		if err := caps.Err(disc); err != nil {
			return fmt.Errorf("%s queue %s: this kernel has no %s qdisc (%s)", e.dir, disc, tc.KernelKind(disc), caps.Reasons[disc])
		}
		pk, by := e.d.QueueLimits(mtu)
		if err := e.d.AQM.KernelSupports(pk, by); err != nil {
			return fmt.Errorf("%s queue %s: %w", e.dir, disc, err)
		}
	}
	return nil
}

// engineQueueErr says why the link engine cannot run a link's queues.
func engineQueueErr(a, b tc.Dir) error {
	for _, e := range []struct {
		dir string
		d   tc.Dir
	}{{"a->b", a}, {"b->a", b}} {
		if e.d.AQM != nil {
			if err := e.d.AQM.EngineSupports(); err != nil {
				return fmt.Errorf("%s queue %s: %w", e.dir, e.d.AQM.Name(), err)
			}
		}
	}
	return nil
}

// applyKernelShaping installs the qdisc plans of netem and shaper links on
// the egress of both ends, with GSO limits so packet counts mean full
// frames.
func (d *deployer) applyKernelShaping(ls LinkState) error {
	l := d.spec.Links[ls.Index]
	for _, end := range []struct {
		ep  topo.Endpoint
		dir tc.Dir
	}{{l.A, ls.AtoB}, {l.B, ls.BtoA}} {
		n := d.nodes[end.ep.Node]
		if err := with(func() error { return d.shapeEnd(n, end.ep, end.dir, ls.Backend) }, n); err != nil {
			return err
		}
	}
	return nil
}

// shapeEnd installs one end's plan; n is held.
func (d *deployer) shapeEnd(n *node, ep topo.Endpoint, dir tc.Dir, backend string) error {
	link, err := n.h.LinkByName(ep.Iface)
	if err != nil {
		return fmt.Errorf("%s: %w", ep, err)
	}
	if err := tc.SetGSOLimits(n.h, link); err != nil {
		return fmt.Errorf("%s: GSO limits: %w", ep, err)
	}
	if dir.IsZero() && dir.QueuePackets == 0 && dir.QueueBytes == 0 {
		return nil
	}
	plan, err := kernelPlan(backend, dir, link.Attrs().MTU)
	if err != nil {
		return fmt.Errorf("%s: %w", ep, err)
	}
	if err := tc.ApplyKernel(n.ns, link, plan); err != nil {
		return fmt.Errorf("%s: %w", ep, err)
	}
	d.log.Debug("qdiscs applied", "iface", ep.String(), "backend", backend)
	return nil
}

// shaping applies kernel layouts and starts the supervisor that runs the
// userspace engines.
func (d *deployer) shaping(ctx context.Context) error {
	engines := 0
	for i := range d.spec.Links {
		if !d.buildsLink(i) {
			continue
		}
		kind := d.kindOf(i)
		if err := kind.shape(d, i); err != nil {
			return err
		}
		if _, ok := kind.(engineLink); ok {
			engines++
		}
	}
	if engines == 0 {
		return nil
	}
	if err := d.save(); err != nil {
		return err
	}
	// The lab's one supervisor (supervisor.go) runs the engines; it reads
	// the saved links as it starts, so it must not predate them: this phase
	// comes before the Wi-Fi daemons and the medium, which join it later.
	started, err := d.ensureSupervisor(ctx)
	if err != nil {
		return err
	}
	if !started && d.scope != nil {
		// a run-time change: the running supervisor takes the new links
		_, err := supervisorCall(d.spec.Name, ctlRequest{Op: "engines-sync"})
		return err
	}
	if !started {
		return fmt.Errorf("link engines: the lab's supervisor started before its %d engine link(s) were recorded, so it does not run them", engines)
	}
	d.log.Debug("supervisor started", "pid", d.supervisorPID(), "engines", engines)
	return nil
}

// kernelPlan is the qdisc plan of one direction on a kernel-shaped link.
func kernelPlan(backend string, d tc.Dir, mtu int) (*tc.KernelPlan, error) {
	if backend == BackendShaper {
		return tc.PlanShaper(d, mtu)
	}
	return tc.PlanKernel(d, mtu)
}
