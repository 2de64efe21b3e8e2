package suite

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/suite/expr"
	"github.com/emuctl/emuctl/tc/engine"
)

// runData is everything one run measured: the traffic result and what
// the runner adds (link-engine counters, CPU load).
type runData struct {
	res     *analysis.Result
	sum     analysis.RunSummary
	warmup  float64
	links   map[string]engine.DirStats // "a->b" → engine counter deltas
	cpuMax  float64
	cpuPeak float64
	cpuOK   bool
	cpuTot  float64
	stall   float64             // ms
	stalls  []analysis.Window   // host stall spans, seconds since res.Start
	idle    map[string]float64  // flow → idle-path RTT (ms)
	ovs     map[string]ovsQueue // "switch:port" → OVS queue counter deltas
	wifi    map[string]float64  // flow → the 802.11 model's goodput (Mbit/s), wifi.go
	tack    map[string]float64  // flow → the same with ACKs at TACK's frequency
}

func newRunData(res *analysis.Result, warmupS float64, links map[string]engine.DirStats, cpu cpuLoad) *runData {
	w := warmupS
	if w == 0 {
		w = -1 // analysis.Options: negative means no warm-up
	}
	rd := &runData{res: res, sum: res.Summarise(analysis.Options{WarmupS: w}), warmup: warmupS, links: links,
		cpuMax: cpu.Max, cpuPeak: cpu.Peak, cpuOK: cpu.OK, cpuTot: cpu.Total, stall: cpu.StallMs}
	for _, s := range cpu.Stalls {
		rd.stalls = append(rd.stalls, analysis.Window{FromS: s.from.Sub(res.Start).Seconds(), ToS: s.to.Sub(res.Start).Seconds()})
	}
	return rd
}

func missing(format string, args ...any) error { return expr.Missing(format, args...) }

// flows returns the indices of the flows a metric covers: the named flow
// (all its parallel streams), or every flow of the kind.
func (rd *runData) flows(arg string, udp bool) []int {
	var out []int
	for i, f := range rd.res.Flows {
		if arg != "" {
			if f.ID == arg || f.Group == arg {
				out = append(out, i)
			}
		} else if (f.Proto == "udp") == udp {
			out = append(out, i)
		}
	}
	return out
}

// metric computes one metric of this run.
func (rd *runData) metric(name, arg string) (expr.Value, error) {
	def := metricDefs[name]
	switch def.arg {
	case argLink:
		return rd.linkMetric(name, arg)
	case argLinkOpt:
		if arg != "" {
			return rd.linkMetric(name, arg)
		}
		worst, any := 0.0, false
		for k := range rd.links {
			if v, err := rd.linkMetric(name, k); err == nil {
				worst, any = math.Max(worst, v.Num), true
			}
		}
		if !any {
			return expr.NumV(0), nil // no userspace engine: the kernel (netem) keeps time
		}
		return expr.NumV(worst), nil
	case argNodeKey:
		return rd.nodeKeyMetric(name, arg)
	case argNode:
		return rd.wifiMetric(name, arg)
	}
	switch name {
	case "jain":
		idx := rd.flows("", false)
		if len(idx) < 2 {
			return expr.Value{}, missing("Jain's index needs two or more TCP/MPTCP flows")
		}
		fl := rd.pick(idx)
		w := analysis.CommonSteadyState(fl, rd.warmup)
		if w.Empty() {
			return expr.Value{}, missing("the flows have no common steady window")
		}
		j, _ := analysis.JainFlows(fl, w)
		return finite(j)
	case "delay_samples_stalled":
		if !rd.cpuOK {
			return expr.Value{}, missing("host stalls were not measured")
		}
		return rd.stalledShare()
	case "host_stall":
		if !rd.cpuOK {
			return expr.Value{}, missing("host stalls were not measured")
		}
		return expr.NumV(rd.stall), nil
	case "cpu_max", "cpu_peak", "cpu_total":
		if !rd.cpuOK {
			return expr.Value{}, missing("CPU load was not measured")
		}
		return expr.NumV(map[string]float64{"cpu_max": rd.cpuMax, "cpu_peak": rd.cpuPeak, "cpu_total": rd.cpuTot}[name]), nil
	case "goodput":
		return rd.goodput(arg)
	case "goodput_whole":
		if arg == "" {
			return rd.wholeAggregate()
		}
	case "idle_rtt":
		return rd.idleRTT(arg)
	case "wifi_model":
		return rd.wifiModel(arg)
	case "wifi_model_tack":
		return modelMetric(rd.tack, arg)
	case "wifi_late":
		if rd.res.WiFi == nil {
			return expr.Value{}, missing("the run had no Wi-Fi medium")
		}
		return expr.NumV(rd.res.WiFi.LateMeanUs / 1000), nil
	case "cc":
		idx := rd.flows(arg, false)
		if len(idx) == 0 {
			return expr.Value{}, missing("flow %q did not run", arg)
		}
		return expr.StrV(rd.res.Flows[idx[0]].CC), nil
	}
	if strings.HasPrefix(name, "probe_") {
		return rd.probeMetric(name, arg)
	}
	udp := map[string]bool{"udp_loss": true, "owd_mean": true, "owd_p95": true, "owd_p99": true, "owd_p99_unstalled": true, "owd_min": true,
		"owd_max": true, "jitter": true, "jitter_mad": true}[name]
	idx := rd.flows(arg, udp)
	if len(idx) == 0 {
		if arg != "" {
			return expr.Value{}, missing("flow %q did not run", arg)
		}
		return expr.Value{}, missing("no %s flow in this run", map[bool]string{true: "UDP", false: "TCP/MPTCP"}[udp])
	}
	var vals []float64
	for _, i := range idx {
		v, err := rd.flowMetric(name, i)
		if err != nil {
			return expr.Value{}, err
		}
		vals = append(vals, v)
	}
	if name == "retrans" || name == "recoveries" {
		return expr.NumV(sum(vals)), nil
	}
	if name == "rtos" || name == "tlps" {
		return rd.senderCounters(idx, map[string]string{"rtos": "TcpExtTCPTimeouts", "tlps": "TcpExtTCPLossProbes"}[name])
	}
	return expr.NumV(analysis.Mean(vals)), nil
}

func (rd *runData) pick(idx []int) []analysis.Flow {
	out := make([]analysis.Flow, len(idx))
	for i, x := range idx {
		out[i] = rd.res.Flows[x]
	}
	return out
}

// goodput is the steady goodput of a flow (its streams together) or of
// every TCP/MPTCP flow, over their common steady window, in Mbit/s.
func (rd *runData) goodput(arg string) (expr.Value, error) {
	idx := rd.flows(arg, false) // with a name, any protocol
	if len(idx) == 0 {
		return expr.Value{}, missing("no flow %q in this run", arg)
	}
	if len(idx) == 1 {
		return expr.NumV(rd.sum.Flows[idx[0]].SteadyGoodputBps / 1e6), nil
	}
	fl := rd.pick(idx)
	return expr.NumV(analysis.AggregateGoodput(fl, analysis.CommonSteadyState(fl, rd.warmup)) / 1e6), nil
}

func sum(x []float64) float64 {
	t := 0.0
	for _, v := range x {
		t += v
	}
	return t
}

// senderCounters sums a counter over the distinct sending nodes. Only
// non-zero deltas are recorded, so a missing name is 0 — but a node with
// no counters at all was not read, and that is missing, not zero.
func (rd *runData) senderCounters(idx []int, counter string) (expr.Value, error) {
	seen := map[string]bool{}
	t := 0.0
	for _, i := range idx {
		n := rd.res.Flows[i].From
		if seen[n] {
			continue
		}
		seen[n] = true
		c, ok := rd.res.Counters[n]
		if !ok {
			return expr.Value{}, missing("no kernel counters were recorded for %s in this run", n)
		}
		t += float64(c[counter])
	}
	return expr.NumV(t), nil
}

// linkMetric reads the engine counters of one link direction.
func (rd *runData) linkMetric(name, arg string) (expr.Value, error) {
	key := strings.ReplaceAll(arg, " ", "")
	switch name {
	case "aqm_drops", "marks", "sojourn_p50", "sojourn_p95", "sojourn_p99", "queue_p50", "queue_p95":
		return rd.queueMetric(name, key)
	}
	st, ok := rd.links[key]
	if !ok {
		if st, ok = rd.qdiscLink(key); !ok {
			return expr.Value{}, missing("link %s has no link-engine or qdisc counters (unshaped?)", arg)
		}
	}
	switch name {
	case "link_in":
		return expr.NumV(float64(st.InPackets)), nil
	case "link_out":
		return expr.NumV(float64(st.OutPackets)), nil
	case "loss_drops":
		return expr.NumV(float64(st.LossDrops)), nil
	case "queue_drops":
		return expr.NumV(float64(st.QueueDrops)), nil
	case "loss_rate":
		if st.InPackets == 0 {
			return expr.Value{}, missing("no frame crossed %s", arg)
		}
		return expr.NumV(float64(st.LossDrops) / float64(st.InPackets)), nil
	case "queue_drop_ratio":
		in := float64(st.InPackets) - float64(st.LossDrops)
		if in <= 0 {
			return expr.Value{}, missing("no frame reached the queue of %s", arg)
		}
		return expr.NumV(float64(st.QueueDrops) / in), nil
	case "queue_peak":
		return expr.NumV(float64(st.QueuePeak)), nil
	case "trace_opps":
		return expr.NumV(float64(st.TraceOpps)), nil
	case "trace_use":
		if st.TraceOpps == 0 {
			return expr.Value{}, missing("link %s replays no trace (or it offered nothing)", arg)
		}
		return expr.NumV(float64(st.OutBytes-10*st.OutPackets) / (1504 * float64(st.TraceOpps))), nil
	case "engine_late_max":
		return expr.NumV(float64(st.LateMax) / 1e6), nil
	case "engine_late_mean":
		return expr.NumV(float64(st.LateMean) / 1e6), nil
	}
	return expr.Value{}, fmt.Errorf("unknown link metric %s", name)
}

// nodeKeyMetric reads counter[node:Name] or sysctl[node:key].
func (rd *runData) nodeKeyMetric(name, arg string) (expr.Value, error) {
	node, key, _ := strings.Cut(arg, ":")
	if strings.HasPrefix(name, "ovs_") {
		return rd.ovsMetric(name, arg)
	}
	if name == "counter" {
		c, ok := rd.res.Counters[node]
		if !ok {
			if !rd.isEndpoint(node) {
				return expr.Value{}, missing("counters are recorded for flow endpoints only, and %s is not one", node)
			}
			return expr.Value{}, missing("no kernel counters were recorded for %s in this run", node)
		}
		return expr.NumV(float64(c[key])), nil
	}
	if name == "iface" {
		return rd.ifaceSetting(node, key)
	}
	v, ok := rd.res.Conditions["sysctl."+node+"."+key]
	if !ok {
		return expr.Value{}, missing("sysctl %s was not recorded in %s (flow endpoints only, traffic's list of TCP keys)", key, node)
	}
	return expr.StrV(v), nil
}

func (rd *runData) isEndpoint(node string) bool {
	for _, f := range rd.res.Flows {
		if f.From == node || f.To == node {
			return true
		}
	}
	return false
}

func finite(v float64) (expr.Value, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return expr.Value{}, missing("not defined for this run")
	}
	return expr.NumV(v), nil
}

// idleRTT is a flow's idle-path RTT, or the smallest over all flows.
func (rd *runData) idleRTT(arg string) (expr.Value, error) {
	if arg != "" {
		v, ok := rd.idle[arg]
		if !ok {
			return expr.Value{}, missing("no idle ping reply for flow %s", arg)
		}
		return expr.NumV(v), nil
	}
	best := math.Inf(1)
	for _, v := range rd.idle {
		best = math.Min(best, v)
	}
	return finite(best)
}

// ifaceSetting reads "gro" from the recorded "iface.node.if" condition
// ("rx-csum=on ... gro=off mtu=1500 ...").
func (rd *runData) ifaceSetting(node, key string) (expr.Value, error) {
	i := strings.LastIndex(key, ".")
	if i <= 0 {
		return expr.Value{}, fmt.Errorf("iface[%s:%s]: write [node:iface.key], e.g. [srv:srv-eth0.gro]", node, key)
	}
	ifc, k := key[:i], key[i+1:]
	desc, ok := rd.res.Conditions["iface."+node+"."+ifc]
	if !ok {
		return expr.Value{}, missing("interface %s of %s was not recorded (nodes on a flow's path only)", ifc, node)
	}
	for _, f := range strings.Fields(desc) {
		if kk, v, ok := strings.Cut(f, "="); ok && kk == k {
			return expr.StrV(v), nil
		}
	}
	return expr.Value{}, missing("interface %s of %s has no setting %q in %q", ifc, node, k, desc)
}

// wholeAggregate is every TCP/MPTCP flow's payload over the span from
// the first start to the last end, in Mbit/s: an upper bound that no
// window placement can inflate.
func (rd *runData) wholeAggregate() (expr.Value, error) {
	var bytes, from, to float64
	first := true
	for _, i := range rd.flows("", false) {
		f := &rd.res.Flows[i]
		w := analysis.WholeRun(f)
		bytes += f.BytesIn(w)
		if first || w.FromS < from {
			from = w.FromS
		}
		if first || w.ToS > to {
			to = w.ToS
		}
		first = false
	}
	if first || to <= from {
		return expr.Value{}, missing("no TCP/MPTCP flow in this run")
	}
	return expr.NumV(bytes * 8 / (to - from) / 1e6), nil
}

// queueMetric reads what traffic recorded of a link direction's queue
// (either backend): its discipline's drops and marks, sojourn and sampled
// occupancy percentiles.
func (rd *runData) queueMetric(name, key string) (expr.Value, error) {
	// the link engine's own counters cover every engine link, also those
	// no flow's resolved path names
	if st, ok := rd.links[key]; ok && name != "queue_p50" && name != "queue_p95" {
		ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
		switch name {
		case "aqm_drops":
			return expr.NumV(float64(st.AQMDrops)), nil
		case "marks":
			return expr.NumV(float64(st.Marks)), nil
		}
		if st.Sojourn.Packets == 0 {
			return expr.Value{}, missing("no packet went through the queue of %s", key)
		}
		return expr.NumV(map[string]float64{"sojourn_p50": ms(st.Sojourn.P50), "sojourn_p95": ms(st.Sojourn.P95), "sojourn_p99": ms(st.Sojourn.P99)}[name]), nil
	}
	a, b, _ := strings.Cut(key, "->")
	for _, l := range rd.res.Links {
		if la, lb := linkEnds(l.Name); la != a || lb != b {
			continue
		}
		switch name {
		case "aqm_drops":
			return expr.NumV(float64(l.AQMDrops)), nil
		case "marks":
			return expr.NumV(float64(l.Marks)), nil
		case "queue_p50", "queue_p95":
			if l.QueueSamples == 0 {
				return expr.Value{}, missing("the queue of %s was not sampled (unshaped, or no rate)", key)
			}
			if name == "queue_p50" {
				return expr.NumV(l.QueueP50Pkts), nil
			}
			return expr.NumV(l.QueueP95Pkts), nil
		}
		if l.SojournFrom == "" {
			return expr.Value{}, missing("no queueing delay was measured on %s (unshaped, or no rate)", key)
		}
		ms := map[string]float64{"sojourn_p50": l.SojournP50Ms, "sojourn_p95": l.SojournP95Ms, "sojourn_p99": l.SojournP99Ms}[name]
		return expr.NumV(ms), nil
	}
	return expr.Value{}, missing("no flow crossed %s", key)
}

// qdiscLink stands in for engine counters on kernel-shaped links (netem):
// traffic records each crossed direction's qdisc sent and dropped
// packets. The drops are queue overflow on a rated direction without
// random loss, random loss on a direction without a rate; with both they
// cannot be told apart and count as loss. An engine's link on another
// machine (a lab over several machines, whose engines this process does
// not reach) has its engine's counters in the result, read there by
// traffic: queue and discipline drops apart from random loss.
func (rd *runData) qdiscLink(key string) (engine.DirStats, bool) {
	a, b, _ := strings.Cut(key, "->")
	for _, l := range rd.res.Links {
		la, lb := linkEnds(l.Name)
		if la != a || lb != b || l.Backend == "" || strings.HasPrefix(l.Backend, "none") {
			continue
		}
		if l.Backend == "userspace" {
			if l.SentPackets == 0 && l.DroppedPackets == 0 && l.RandomDrops == 0 {
				continue
			}
			return engine.DirStats{InPackets: uint64(l.SentPackets + l.DroppedPackets + l.RandomDrops), OutPackets: uint64(l.SentPackets),
				QueueDrops: uint64(max(0, l.DroppedPackets-l.AQMDrops)), AQMDrops: uint64(l.AQMDrops), LossDrops: uint64(l.RandomDrops),
				Marks: uint64(l.Marks), Discipline: l.Discipline}, true
		}
		st := engine.DirStats{InPackets: uint64(l.SentPackets + l.DroppedPackets), OutPackets: uint64(l.SentPackets),
			AQMDrops: uint64(l.AQMDrops), Marks: uint64(l.Marks), Discipline: l.Discipline}
		// a discipline's own drops are counted apart (aqm_drops)
		drops := uint64(max(0, l.DroppedPackets-l.AQMDrops))
		if l.RateBps > 0 && l.LossPct == 0 {
			st.QueueDrops = drops
		} else {
			st.LossDrops = drops
		}
		return st, true
	}
	return engine.DirStats{}, false
}

// stalledShare is the share of the run's delay samples (probe RTTs and
// UDP one-way delays, in their steady windows) whose flight overlapped a
// host stall span.
func (rd *runData) stalledShare() (expr.Value, error) {
	kept, dropped := 0, 0
	for i := range rd.res.Probes {
		d, n := analysis.ProbeRTTsMsUnstalled(&rd.res.Probes[i], rd.sum.Probes[i].Window, rd.stalls)
		kept, dropped = kept+len(d), dropped+n
	}
	for i := range rd.res.Flows {
		d, n := analysis.UDPDelaysMsUnstalled(&rd.res.Flows[i], rd.res.Start.UnixNano(), rd.sum.Flows[i].Steady, rd.stalls)
		kept, dropped = kept+len(d), dropped+n
	}
	if kept+dropped == 0 {
		return expr.Value{}, missing("no delay samples (no probe, no UDP flow)")
	}
	return expr.NumV(float64(dropped) / float64(kept+dropped)), nil
}
