package suite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/tc/engine"
	"github.com/emuctl/emuctl/traffic"
)

// runOne waits for the kernel to settle, builds the scenario's lab, runs
// its flows and tears the lab down, whatever happens (Ctrl-C included).
func (r *runner) runOne(ctx context.Context, j job, attempt int) (rec *RunRecord) {
	rec = &RunRecord{ID: runID(j.sc, j.rep, attempt), Scenario: j.sc.Name, Labels: j.sc.Labels, Rep: j.rep,
		Attempt: attempt, Started: time.Now()}
	defer func() { rec.Seconds = time.Since(rec.Started).Seconds() }()
	lab := r.opt.Lab
	spec, err := j.sc.spec(lab)
	if err != nil {
		rec.Error = "topology: " + err.Error()
		return rec
	}
	settle := waitNetnsSettled(ctx, r.bar, settleHold(r.prevNetns))
	r.prevNetns = -1 // until this run's lab is known
	rec.NetnsSettle, rec.NetnsSettleS = settle.condition(), settle.took.Seconds()
	if settle.interrupted {
		rec.Interrupted = true
		return rec
	}
	r.bar.update(func(s *Status) { s.Phase = "running" })
	st, err := emu.Deploy(ctx, spec, emu.Options{Log: r.opt.Log})
	if err != nil {
		if ctx.Err() != nil {
			rec.Interrupted = true
		} else {
			rec.Error = "deploy: " + err.Error()
		}
		return rec
	}
	r.prevNetns = len(st.Namespaces)
	defer func() {
		if err := emu.Down(lab, r.opt.Log); err != nil {
			rec.Error = joinErr(rec.Error, "teardown: "+err.Error())
		}
	}()
	idle := idleRTTs(ctx, lab, spec, j.sc.Flows)
	if r.trace != nil {
		r.trace.clear()
	}
	before, ovsBefore := engineStats(lab), ovsQueues(lab)
	mon := startCPU()
	res, err := traffic.Run(ctx, lab, j.sc.Flows, traffic.Options{Scenario: j.sc.Name, Repetition: j.rep, Log: r.opt.Log})
	cpu := mon.stop()
	after, ovsAfter := engineStats(lab), ovsQueues(lab)
	if st, serr := emu.ReadState(lab); serr != nil || st.Status != emu.StatusUp {
		// Another emuctl (clean --all, down) took the lab away mid-run:
		// whatever was measured is not this scenario.
		rec.Error = "the lab was taken down during the run by another emuctl (clean --all or down)"
		return rec
	}
	switch {
	case res == nil && ctx.Err() != nil:
		rec.Interrupted = true
		return rec
	case res == nil:
		rec.Error = "traffic: " + err.Error()
		return rec
	case ctx.Err() != nil:
		rec.Interrupted = true
	case err != nil:
		rec.Error = "traffic: " + err.Error()
	}
	if r.trace != nil {
		res.CongStateEvents = r.trace.events(res)
	}
	links := deltas(before, after)
	annotate(res, r, links, cpu)
	res.Conditions["netns_settle"] = rec.NetnsSettle
	rec.data = newRunData(res, r.plan.Profile.Warmup.Seconds(), links, cpu)
	rec.data.idle = idle
	rec.data.wifi, rec.data.tack = wifiPredict(spec, res)
	for f, v := range rec.data.wifi {
		res.Conditions["wifi_model."+f] = fmt.Sprintf("%.3f Mbit/s (the pure 802.11 model for this flow's hop)", v)
	}
	if ovsAfter != nil {
		rec.data.ovs = ovsDeltas(ovsBefore, ovsAfter)
		for k, q := range rec.data.ovs {
			res.Conditions["ovs_queue."+k] = fmt.Sprintf("sent=%d drops=%d limit=%d", q.Packets, q.Drops, q.Limit)
		}
	}
	for f, v := range idle {
		res.Conditions["idle_rtt."+f] = fmt.Sprintf("%.3f ms (min of %d pings before the traffic)", v, idlePings)
	}
	return rec
}

// runID names a run's files: the scenario's labels, the repetition and,
// for a retry, the attempt.
func runID(sc *Scenario, rep, attempt int) string {
	var b strings.Builder
	for _, c := range sc.Name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			b.WriteRune(c)
		case c == '%':
			b.WriteString("pct")
		case c == '=':
			b.WriteByte('-')
		default:
			b.WriteByte('_')
		}
	}
	id := fmt.Sprintf("%s_r%d", b.String(), rep)
	if attempt > 1 {
		id += fmt.Sprintf("_try%d", attempt)
	}
	return id
}

// engineStats reads the link engine's counters, keyed "a->b" by node.
func engineStats(lab string) map[string]engine.DirStats {
	infos, err := emu.ShowLinks(lab)
	if err != nil {
		return nil
	}
	out := map[string]engine.DirStats{}
	for _, li := range infos {
		if li.Stats == nil {
			continue
		}
		a, _, _ := strings.Cut(li.A, ":")
		b, _, _ := strings.Cut(li.B, ":")
		if _, dup := out[a+"->"+b]; !dup {
			out[a+"->"+b] = li.Stats.AToB
			out[b+"->"+a] = li.Stats.BToA
		}
	}
	return out
}

// deltas subtracts counters; peaks and lateness are kept from after
// (each run has a fresh lab, so they cover this run).
func deltas(before, after map[string]engine.DirStats) map[string]engine.DirStats {
	out := map[string]engine.DirStats{}
	for k, a := range after {
		b := before[k]
		d := a
		d.InPackets, d.InBytes = a.InPackets-b.InPackets, a.InBytes-b.InBytes
		d.OutPackets, d.OutBytes = a.OutPackets-b.OutPackets, a.OutBytes-b.OutBytes
		d.TraceOpps = a.TraceOpps - b.TraceOpps
		d.LossDrops, d.QueueDrops = a.LossDrops-b.LossDrops, a.QueueDrops-b.QueueDrops
		d.Duplicated, d.Corrupted = a.Duplicated-b.Duplicated, a.Corrupted-b.Corrupted
		d.SendErrors, d.RecvDrops = a.SendErrors-b.SendErrors, a.RecvDrops-b.RecvDrops
		d.AQMDrops, d.Marks = a.AQMDrops-b.AQMDrops, a.Marks-b.Marks
		out[k] = d
	}
	return out
}

// annotate adds the suite's context and the engine's counters to a
// result, so the raw file stands on its own.
func annotate(res *analysis.Result, r *runner, links map[string]engine.DirStats, cpu cpuLoad) {
	c := res.Conditions
	if c == nil {
		c = map[string]string{}
		res.Conditions = c
	}
	c["suite"] = r.plan.Suite.Name
	c["suite_profile"] = r.plan.Profile.Name
	c["suite_seed"] = fmt.Sprint(r.opt.Seed)
	if cpu.OK {
		c["cpu"] = fmt.Sprintf("machine %.1f%% busy; busiest core %.1f%% (peak 1-s sample %.1f%%); longest host stall %.1f ms",
			cpu.Total*100, cpu.Max*100, cpu.Peak*100, cpu.StallMs)
	}
	for k, st := range links {
		c["engine."+k] = fmt.Sprintf("in=%d out=%d loss_drops=%d queue_drops=%d queue_peak=%d late_max=%v",
			st.InPackets, st.OutPackets, st.LossDrops, st.QueueDrops, st.QueuePeak, st.LateMax)
		if st.TraceOpps > 0 { // a traced direction: what its trace offered against what it delivered
			c["engine."+k] += fmt.Sprintf(" out_bytes=%d trace_opps=%d", st.OutBytes, st.TraceOpps)
		}
	}
}

// linkEnds reads "a:if->b:if" as node names.
func linkEnds(name string) (string, string) {
	l, r, _ := strings.Cut(name, "->")
	a, _, _ := strings.Cut(l, ":")
	b, _, _ := strings.Cut(r, ":")
	return a, b
}
