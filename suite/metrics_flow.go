package suite

import (
	"fmt"
	"math"
	"strings"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/suite/expr"
)

// flowMetric computes a per-flow metric of flow i.
func (rd *runData) flowMetric(name string, i int) (float64, error) {
	f := &rd.res.Flows[i]
	fs := rd.sum.Flows[i]
	need := func(ok bool, what string) error {
		if !ok {
			return missing("flow %s has no %s", f.ID, what)
		}
		return nil
	}
	switch name {
	case "sched_follow":
		if err := need(fs.SRTTMs != nil, "RTT samples"); err != nil {
			return 0, err
		}
		return rd.schedFollow(f, fs.SRTTMs.Max/1000)
	case "sched_excess":
		return rd.schedExcess(f)
	case "goodput_whole":
		return fs.GoodputBps / 1e6, nil
	case "capacity":
		return fs.CapacityBps / 1e6, need(fs.CapacityBps > 0, "known bottleneck rate")
	case "util":
		return fs.Utilisation, need(fs.CapacityBps > 0, "known bottleneck rate")
	case "srtt", "srtt_p95", "srtt_std", "srtt_max":
		if err := need(fs.SRTTMs != nil, "RTT samples"); err != nil {
			return 0, err
		}
		return map[string]float64{"srtt": fs.SRTTMs.Mean, "srtt_p95": fs.SRTTMs.P95,
			"srtt_std": fs.SRTTMs.Stddev, "srtt_max": fs.SRTTMs.Max}[name], nil
	case "min_rtt":
		return fs.MinRTTMs, need(fs.MinRTTMs > 0, "minimum RTT")
	case "cwnd_mean", "cwnd_max":
		if err := need(fs.Cwnd != nil, "cwnd samples"); err != nil {
			return 0, err
		}
		if name == "cwnd_mean" {
			return fs.Cwnd.MeanBytes, nil
		}
		return fs.Cwnd.MaxBytes, nil
	case "retrans":
		last := lastTCP(f)
		if err := need(last != nil, "TCP samples"); err != nil {
			return 0, err
		}
		return float64(last.Retrans), nil
	case "retrans_ratio":
		if err := need(fs.RetransRatio != nil, "retransmission ratio"); err != nil {
			return 0, err
		}
		return *fs.RetransRatio, nil
	case "rtos", "tlps":
		return 0, nil // summed over senders by the caller
	case "recoveries", "recovery_mean", "recovery_p95":
		rec := analysis.Recovery(rd.res, f)
		switch name {
		case "recoveries":
			return float64(rec.Count), nil
		case "recovery_mean":
			return rec.MeanMs, need(rec.Count > 0, "completed loss-recovery episode")
		}
		return rec.P95Ms, need(rec.Count > 0, "completed loss-recovery episode")
	case "subflows":
		return float64(subflowsWithData(f)), need(f.Proto == "mptcp", "MPTCP subflows (it is "+f.Proto+")")
	case "mptcp":
		return b2f(f.Proto == "mptcp" && !f.MPTCPFallback), nil
	case "ack_ratio", "ack_rate", "data_rate":
		return rd.ackMetric(name, f)
	case "limited_net", "limited_rwnd", "limited_sndbuf", "limited_app", "busy", "busy_fast", "limited_sndbuf_fast":
		return limitedMetric(name, f, fs)
	}
	return rd.udpMetric(name, f, fs)
}

// limitedMetric reads a flow's limited-by diagnosis over its steady
// window (the summary's).
func limitedMetric(name string, f *analysis.Flow, fs analysis.FlowSummary) (float64, error) {
	l := fs.Limited
	if l == nil {
		if f.Proto == "udp" {
			return 0, missing("flow %s is UDP: no sender window to diagnose", f.ID)
		}
		return 0, missing("flow %s has no busy times in its samples (iperf3 engine, or a kernel before 4.10)", f.ID)
	}
	lim := l.Limits
	if strings.HasSuffix(name, "_fast") {
		if sf := l.Fastest(); sf != nil {
			lim = sf.Limits
		}
		name = strings.TrimSuffix(name, "_fast")
	}
	return map[string]float64{"limited_net": lim.Network, "limited_rwnd": lim.Rwnd, "limited_sndbuf": lim.Sndbuf,
		"limited_app": lim.App, "busy": lim.Busy}[name], nil
}

func (rd *runData) udpMetric(name string, f *analysis.Flow, fs analysis.FlowSummary) (float64, error) {
	if f.UDP == nil {
		return 0, missing("flow %s is not a UDP flow", f.ID)
	}
	switch name {
	case "udp_loss":
		return *fs.UDPLoss, nil
	case "jitter", "jitter_mad":
		if fs.JitterRFC3550Ms == nil {
			return 0, missing("flow %s has no one-way delays in its steady window", f.ID)
		}
		if name == "jitter" {
			return *fs.JitterRFC3550Ms, nil
		}
		return *fs.JitterMeanAbsDeltaMs, nil
	}
	if fs.OWDMs == nil {
		return 0, missing("flow %s has no one-way delays in its steady window", f.ID)
	}
	if name == "owd_p99_unstalled" {
		d, _ := analysis.UDPDelaysMsUnstalled(f, rd.res.Start.UnixNano(), fs.Steady, rd.stalls)
		if err := noDelaySample(f.ID, len(d)); err != nil {
			return 0, err
		}
		return analysis.Summarise(d).P99, nil
	}
	o := fs.OWDMs
	return map[string]float64{"owd_mean": o.Mean, "owd_p95": o.P95, "owd_p99": o.P99, "owd_min": o.Min, "owd_max": o.Max}[name], nil
}

// ackMetric compares the receiver's and the sender's segment counters:
// a bulk receiver sends nothing but ACKs.
func (rd *runData) ackMetric(name string, f *analysis.Flow) (float64, error) {
	if rd.res.Counters[f.From] == nil || rd.res.Counters[f.To] == nil {
		return 0, missing("no kernel counters were recorded for %s or %s in this run", f.From, f.To)
	}
	tx, rx := rd.res.Counters[f.From]["TcpOutSegs"], rd.res.Counters[f.To]["TcpOutSegs"]
	span := f.EndS - f.StartS
	if tx == 0 || span <= 0 {
		return 0, missing("flow %s: no segment counters", f.ID)
	}
	switch name {
	case "ack_ratio":
		return float64(rx) / float64(tx), nil
	case "ack_rate":
		return float64(rx) / span, nil
	}
	return float64(tx) / span, nil
}

func lastTCP(f *analysis.Flow) *analysis.TCPInfo {
	for i := len(f.Samples) - 1; i >= 0; i-- {
		if f.Samples[i].TCP != nil {
			return f.Samples[i].TCP
		}
	}
	return nil
}

// subflowsWithData counts the MPTCP subflows that carried payload.
func subflowsWithData(f *analysis.Flow) int {
	bytes := map[string]int64{}
	for _, s := range f.Samples {
		for _, sf := range s.Subflows {
			bytes[sf.ID] += sf.Bytes
		}
	}
	n := 0
	for _, b := range bytes {
		if b > 0 {
			n++
		}
	}
	return n
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// probeMetric summarises the probes of a flow (or all probes).
func (rd *runData) probeMetric(name, arg string) (expr.Value, error) {
	var vals []float64
	for i := range rd.res.Probes {
		p := &rd.res.Probes[i]
		if arg != "" && p.Flow != arg {
			continue
		}
		ps := rd.sum.Probes[i]
		var v float64
		switch name {
		case "probe_rtt":
			v = ps.RTTMs.Mean
		case "probe_rtt_p95":
			v = ps.RTTMs.P95
		case "probe_rtt_p99":
			v = ps.RTTMs.P99
		case "probe_rtt_p99_unstalled":
			d, _ := analysis.ProbeRTTsMsUnstalled(p, ps.Window, rd.stalls)
			if err := noDelaySample(p.ID, len(d)); err != nil {
				return expr.Value{}, err
			}
			v = analysis.Summarise(d).P99
		case "probe_rtt_max":
			v = ps.RTTMs.Max
		case "probe_rtt_min":
			v = analysis.RTTFromProbes(p, analysis.ProbeSpan(p)).Min
		case "probe_jitter":
			v = ps.JitterRFC3550Ms
		case "probe_loss":
			v = ps.Loss
		default:
			return expr.Value{}, fmt.Errorf("unknown probe metric %s", name)
		}
		if name != "probe_loss" && ps.RTTMs.N == 0 && name != "probe_rtt_min" {
			return expr.Value{}, missing("probe %s got no reply after the warm-up", p.ID)
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		if arg != "" {
			return expr.Value{}, missing("flow %s has no probe (add probe: icmp to it)", arg)
		}
		return expr.Value{}, missing("no probe in this run")
	}
	if name == "probe_rtt_min" {
		m := math.Inf(1)
		for _, v := range vals {
			m = math.Min(m, v)
		}
		return finite(m)
	}
	return finite(analysis.Mean(vals))
}

// noDelaySample says a stall-corrected percentile has no samples.
func noDelaySample(id string, n int) error {
	if n == 0 {
		return missing("%s has no delay sample", id)
	}
	return nil
}
