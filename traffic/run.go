package traffic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"sort"
	"sync"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
)

// Options tune Run.
type Options struct {
	// Log receives warnings (MPTCP fallback, send errors) and debug lines;
	// default: discard.
	Log *slog.Logger
	// Scenario and Repetition are copied into the result.
	Scenario   string
	Repetition int
	// Captures are packet captures taken for the whole run (pcapng), and
	// CaptureDir where those without a File go. Result.Captures refers to
	// them relative to ResultDir (the directory the result JSON is saved in).
	Captures   []CaptureSpec
	CaptureDir string
	ResultDir  string
}

// runner is one flow's engine.
type runner interface {
	// prepare opens the server side (listeners, receivers) so bad ports
	// fail before anything starts.
	prepare(ctx context.Context) error
	// run moves data for the flow's duration; it returns one record per
	// stream. When ctx is cancelled it returns what it measured so far.
	run(ctx context.Context, t0 time.Time) ([]analysis.Flow, error)
	// close releases every socket and stops every process; idempotent.
	close()
}

// plan is one validated flow with its resolved addresses and path.
type plan struct {
	f      Flow
	dst    netip.Addr // server address
	rxAddr netip.Addr // address of the data receiver (UDP)
	hops   []hop      // data path
	nodes  []string
	r      runner
	p      probeRunner
}

// probeRunner is a flow's echo probe: a prober, or on a lab over several
// machines a splitProber.
type probeRunner interface {
	prepare() error
	// run probes from start until end (or ctx) and returns the samples,
	// times relative to t0.
	run(ctx context.Context, t0, start, end time.Time) analysis.Probe
	close()
}

// Run runs flows in a running lab: each starts at its offset, they run
// concurrently, and the result holds every stream's samples, the probes,
// the links crossed and the conditions. Bad input is reported before
// anything starts, every problem at once. When ctx is cancelled (Ctrl-C)
// the flows stop, everything is closed, and Run returns what was measured
// together with ctx's error.
func Run(ctx context.Context, lab string, flows []Flow, opt Options) (*analysis.Result, error) {
	log := opt.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if len(flows) == 0 {
		return nil, errors.New("no flows to run")
	}
	st, err := emu.ReadState(lab)
	if err != nil {
		return nil, err
	}
	if st.Status != emu.StatusUp {
		return nil, fmt.Errorf("lab %s is %s, not up", lab, st.Status)
	}
	// a lab over several machines: only what runs on the nodes' machines
	cluster := st.Spec.Cluster != nil
	plans, err := resolve(st.Spec, flows)
	if err != nil {
		return nil, err
	}
	shaped := stateLinks(lab)
	if cluster {
		shaped = clusterStateLinks(lab)
	}
	var allHops []hop
	nodeSet, endpoints := map[string]bool{}, map[string]bool{}
	for _, p := range plans {
		allHops = append(allHops, p.hops...)
		for _, n := range p.nodes {
			nodeSet[n] = true
		}
		endpoints[p.f.Client], endpoints[p.f.Server] = true, true
	}
	nodes := sortedKeys(nodeSet)
	before, snapErr := snapshotNodes(st, nodes, endpoints)
	mediumBefore := mediumSnapshot(st)

	var clocks map[[2]string]*clockPair
	if cluster {
		clocks = measureClocks(lab, st, plans)
	}
	defer func() {
		for _, p := range plans {
			if p.r != nil {
				p.r.close()
			}
			if p.p != nil {
				p.p.close()
			}
		}
	}()
	for i, p := range plans {
		switch {
		case p.f.Engine == EngineIperf3:
			ip := newIperf3Flow(lab, p.f, p.dst, log)
			ip.remote = cluster
			p.r = ip
		case cluster: // the flow's ends on their machines (split.go)
			var off time.Duration
			c := st.Spec.Cluster
			if cp := clocks[[2]string{c.Nodes[p.f.dataFrom()], c.Nodes[p.f.dataTo()]}]; cp != nil {
				off = cp.offset
			}
			p.r = newSplitFlow(lab, p.f, p.dst, p.rxAddr, off, log)
		case p.f.Proto == UDP:
			p.r = newUDPFlow(lab, p.f, p.rxAddr, log)
		default:
			p.r = newTCPFlow(lab, p.f, p.dst, log)
		}
		if err := p.r.prepare(ctx); err != nil {
			return nil, fmt.Errorf("flow %s: %w", p.f.Name, err)
		}
		if p.f.Probe != "" {
			if cluster {
				p.p = &splitProber{lab: lab, f: p.f, dst: p.dst, id: fmt.Sprintf("p%d", i+1), log: log}
			} else {
				p.p = newProber(lab, p.f, p.dst, fmt.Sprintf("p%d", i+1))
			}
			if err := p.p.prepare(); err != nil {
				return nil, fmt.Errorf("flow %s: probe: %w", p.f.Name, err)
			}
		}
	}

	capCtx, capCancel := context.WithCancel(context.Background())
	defer capCancel()
	caps, err := startCaptures(capCtx, st, opt.Captures, opt.CaptureDir)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var qw *queueWatch
	if cluster { // the links' queues are on their machines
		qw = watchQueuesCluster(st, allHops)
	} else {
		qw = watchQueues(st, allHops)
	}
	t0 := time.Now()
	// schedules with t0: traffic start with the flows (schedule.go in emu)
	if _, err := emu.StartTrafficSchedules(lab); err != nil {
		qw.finish()
		return nil, fmt.Errorf("lab %s: the schedules with t0: traffic did not start: %w", lab, err)
	}
	if _, err := emu.StartTrafficMobility(lab); err != nil {
		qw.finish()
		return nil, fmt.Errorf("lab %s: the mobility with t0: traffic did not start: %w", lab, err)
	}
	track := watchTrack(st) // wifi_track.go; nil when nothing moves
	recs := make([][]analysis.Flow, len(plans))
	probes := make([]*analysis.Probe, len(plans))
	errs := make([]error, len(plans))
	var wg sync.WaitGroup
	for i, p := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-time.After(time.Until(t0.Add(p.f.Start))):
			case <-runCtx.Done():
				return
			}
			var pw sync.WaitGroup
			if p.p != nil {
				pw.Add(1)
				go func() {
					defer pw.Done()
					now := time.Now()
					pr := p.p.run(runCtx, t0, now, now.Add(p.f.Duration))
					probes[i] = &pr
				}()
			}
			recs[i], errs[i] = p.r.run(runCtx, t0)
			if errs[i] != nil && runCtx.Err() == nil {
				cancel() // one failed flow stops the run
			}
			pw.Wait()
		}()
	}
	wg.Wait()
	qw.finish()
	places := track.finish(t0)
	time.Sleep(50 * time.Millisecond) // the last ACKs reach the capture
	capCancel()
	capRefs, capErr := finishCaptures(caps, opt.ResultDir)
	if err := firstError(ctx, plans, errs); err != nil {
		return nil, err
	}
	if capErr != nil {
		return nil, capErr
	}
	after, err := snapshotNodes(st, nodes, endpoints)
	if snapErr == nil {
		snapErr = err
	}
	mediumAfter := mediumSnapshot(st)

	res := &analysis.Result{
		Version:    analysis.Version,
		Tool:       toolVersion(),
		Engine:     engineName(plans),
		Lab:        lab,
		Scenario:   opt.Scenario,
		Repetition: opt.Repetition,
		Start:      t0,
		IntervalS:  plans[0].f.Interval.Seconds(),
		Links:      resultLinks(st.Spec, shaped, allHops, before, after, qw),
		Counters:   counters(before, after),
		Conditions: conditions(st, planFlows(plans), shaped, allHops, before),
		Captures:   capRefs,
		WiFi:       wifiResult(st, mediumBefore, mediumAfter),
		Steps:      runSteps(lab, t0),
	}
	if res.WiFi != nil {
		res.WiFi.Track = places
		res.WiFi.Handovers = handovers(mediumBefore, mediumAfter, t0)
	}
	if cluster {
		clusterConditions(st, res.Conditions, clocks)
	}
	if e := qw.failed(); e != "" {
		res.Conditions["queue_samples_error"] = e
		log.Warn("some links' queues were not sampled", "error", e)
	}
	if snapErr != nil { // what a machine could not read is missing, and said
		res.Conditions["snapshot_error"] = snapErr.Error()
		log.Warn("some nodes were not read", "error", snapErr)
	}
	for i, p := range plans {
		bn := bottleneck(st.Spec, shaped, p.hops)
		if p.f.Proto == MPTCP {
			bn = 0 // several paths: no single bottleneck
		}
		for _, fr := range recs[i] {
			fr.BottleneckBps = bn
			res.Flows = append(res.Flows, fr)
			res.DurationS = max(res.DurationS, fr.EndS)
		}
		if probes[i] != nil {
			res.Probes = append(res.Probes, *probes[i])
		}
	}
	res.Summary = res.Summarise(analysis.Options{}).Flows
	if ctx.Err() != nil {
		res.Conditions["interrupted"] = "true"
		return res, ctx.Err()
	}
	return res, nil
}

func engineName(plans []*plan) string {
	native, iperf := false, false
	for _, p := range plans {
		if p.f.Engine == EngineIperf3 {
			iperf = true
		} else {
			native = true
		}
	}
	switch {
	case native && iperf:
		return "emuctl+iperf3"
	case iperf:
		return "iperf3"
	}
	return "emuctl"
}

func planFlows(plans []*plan) []Flow {
	out := make([]Flow, len(plans))
	for i, p := range plans {
		out[i] = p.f
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// firstError picks the error that stopped the run: a flow's own failure
// rather than the cancellation it caused in the others. Nothing is an
// error when the caller cancelled (Ctrl-C): the result is partial.
func firstError(ctx context.Context, plans []*plan, errs []error) error {
	if ctx.Err() != nil {
		return nil
	}
	var first error
	for i, err := range errs {
		if err == nil {
			continue
		}
		err = fmt.Errorf("flow %s: %w", plans[i].f.Name, err)
		if !errors.Is(err, context.Canceled) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// runSteps are the schedule steps the lab's supervisor applied since t0.
func runSteps(lab string, t0 time.Time) []analysis.Step {
	var out []analysis.Step
	for _, s := range emu.StepsBetween(lab, t0, time.Now()) {
		out = append(out, analysis.Step{Schedule: s.Schedule, AtS: s.Applied.Sub(t0).Seconds(), LateS: s.Late.Seconds(),
			Link: s.Link, Dir: s.Dir, RateBps: s.RateBps, What: s.What, Error: s.Error})
	}
	return out
}
