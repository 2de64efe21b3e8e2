package analysis

// Options select the windows the summaries use.
type Options struct {
	// WarmupS is the start-up period steady-state windows leave out
	// (DefaultWarmupS when 0; use a negative value for none).
	WarmupS float64
}

func (o Options) warmup() float64 {
	switch {
	case o.WarmupS == 0:
		return DefaultWarmupS
	case o.WarmupS < 0:
		return 0
	}
	return o.WarmupS
}

// FlowSummary is the standard set of metrics of one flow. Goodputs are in
// bits/s, times in ms. Optional metrics are omitted (nil) when the result
// does not carry what they need.
type FlowSummary struct {
	Flow  string `json:"flow"`
	Proto string `json:"proto"`
	CC    string `json:"cc,omitempty"`
	From  string `json:"from"`
	To    string `json:"to"`
	// Whole is the flow's active period; Steady the same without warm-up.
	Whole  Window `json:"whole"`
	Steady Window `json:"steady"`
	// GoodputBps is over Whole, SteadyGoodputBps over Steady.
	GoodputBps       float64 `json:"goodput_bps"`
	SteadyGoodputBps float64 `json:"steady_goodput_bps"`
	// CapacityBps is the bottleneck's goodput capacity (rate × payload/
	// frame) and Utilisation = SteadyGoodputBps / CapacityBps; both omitted
	// when the bottleneck rate is unknown.
	CapacityBps float64 `json:"capacity_bps,omitempty"`
	Utilisation float64 `json:"utilisation,omitempty"`
	// SRTTMs summarises tcpi_rtt over Steady; MinRTTMs is tcpi_min_rtt.
	SRTTMs   *Summary `json:"srtt_ms,omitempty"`
	MinRTTMs float64  `json:"min_rtt_ms,omitempty"`
	// Cwnd is over Steady.
	Cwnd *CwndStats `json:"cwnd,omitempty"`
	// RetransRatio is over Whole.
	RetransRatio *float64 `json:"retrans_ratio,omitempty"`
	// Recovery summarises loss-recovery episodes over the whole flow.
	Recovery *RecoveryStats `json:"recovery,omitempty"`
	// Limited says what limited the sender over Steady (over Whole when
	// the flow is shorter than its warm-up): network, receive window,
	// send buffer or application; omitted without the kernel's busy times.
	Limited *LimitedBy `json:"limited_by,omitempty"`
	// UDP flows: loss over the whole run, one-way delay and both jitter
	// definitions over Steady.
	UDPLoss              *float64 `json:"udp_loss,omitempty"`
	OWDMs                *Summary `json:"owd_ms,omitempty"`
	JitterRFC3550Ms      *float64 `json:"jitter_rfc3550_ms,omitempty"`
	JitterMeanAbsDeltaMs *float64 `json:"jitter_mean_abs_delta_ms,omitempty"`
}

// ProbeSummary is the standard set of metrics of one probe, over its
// steady-state part (probes sent after the warm-up). Jitter here is over
// the RTT sequence in send order.
type ProbeSummary struct {
	Probe                string  `json:"probe"`
	Kind                 string  `json:"kind"`
	From                 string  `json:"from"`
	To                   string  `json:"to"`
	Window               Window  `json:"window"`
	RTTMs                Summary `json:"rtt_ms"`
	Loss                 float64 `json:"loss"`
	JitterRFC3550Ms      float64 `json:"jitter_rfc3550_ms"`
	JitterMeanAbsDeltaMs float64 `json:"jitter_mean_abs_delta_ms"`
}

// RunSummary is the standard set of metrics of one result.
type RunSummary struct {
	Flows  []FlowSummary  `json:"flows"`
	Probes []ProbeSummary `json:"probes,omitempty"`
	// Common is the common steady-state window of all flows;
	// AggregateBps the summed goodput over it; Jain the fairness index over
	// it (omitted for fewer than two flows).
	Common       Window   `json:"common"`
	AggregateBps float64  `json:"aggregate_bps"`
	Jain         *float64 `json:"jain,omitempty"`
}

func ptr(v float64) *float64 { return &v }

// SummariseFlow computes a flow's standard metrics.
func SummariseFlow(r *Result, f *Flow, o Options) FlowSummary {
	fs := FlowSummary{
		Flow: f.ID, Proto: f.Proto, CC: f.CC, From: f.From, To: f.To,
		Whole: WholeRun(f), Steady: SteadyState(f, o.warmup()),
	}
	fs.GoodputBps = Goodput(f, fs.Whole)
	fs.SteadyGoodputBps = Goodput(f, fs.Steady)
	if c := FlowCapacity(f); c > 0 {
		fs.CapacityBps = c
		fs.Utilisation = Utilisation(fs.SteadyGoodputBps, c)
	}
	if f.Proto != "udp" {
		if s := RTTFromSRTT(f, fs.Steady); s.N > 0 {
			fs.SRTTMs = &s
		}
		fs.MinRTTMs = MinRTTMs(f)
		if c := Cwnd(f, fs.Steady); c.N > 0 {
			fs.Cwnd = &c
		}
		if v, ok := RetransRatio(f, fs.Whole); ok {
			fs.RetransRatio = ptr(v)
		}
		if rec := Recovery(r, f); rec.Count > 0 || rec.Unfinished > 0 || hasCAState(f) {
			fs.Recovery = &rec
		}
		w := fs.Steady
		if w.Empty() {
			w = fs.Whole
		}
		if l, ok := Limited(f, w); ok {
			fs.Limited = &l
		}
	}
	if f.UDP != nil {
		fs.UDPLoss = ptr(UDPLoss(f.UDP))
		d := UDPDelaysMs(f, r.Start.UnixNano(), fs.Steady)
		if len(d) > 0 {
			s := Summarise(d)
			fs.OWDMs = &s
			fs.JitterRFC3550Ms = ptr(JitterRFC3550(d))
			fs.JitterMeanAbsDeltaMs = ptr(JitterMeanAbsDelta(d))
		}
	}
	return fs
}

func hasCAState(f *Flow) bool {
	for _, s := range f.Samples {
		if s.TCP != nil {
			return true
		}
	}
	return false
}

// SummariseProbe computes a probe's standard metrics.
func SummariseProbe(p *Probe, o Options) ProbeSummary {
	w := ProbeSpan(p)
	w.FromS += o.warmup()
	rtts := ProbeRTTsMs(p, w)
	return ProbeSummary{
		Probe: p.ID, Kind: p.Kind, From: p.From, To: p.To, Window: w,
		RTTMs:                Summarise(rtts),
		Loss:                 ProbeLoss(p, w),
		JitterRFC3550Ms:      JitterRFC3550(rtts),
		JitterMeanAbsDeltaMs: JitterMeanAbsDelta(rtts),
	}
}

// Summarise computes the standard metrics of a result.
func (r *Result) Summarise(o Options) RunSummary {
	var rs RunSummary
	for i := range r.Flows {
		rs.Flows = append(rs.Flows, SummariseFlow(r, &r.Flows[i], o))
	}
	for i := range r.Probes {
		rs.Probes = append(rs.Probes, SummariseProbe(&r.Probes[i], o))
	}
	rs.Common = CommonSteadyState(r.Flows, o.warmup())
	if rs.Common.Empty() {
		rs.Common = Window{}
	} else {
		rs.AggregateBps = AggregateGoodput(r.Flows, rs.Common)
		if fl := FairnessClass(r.Flows); len(fl) >= 2 {
			j, _ := JainFlows(fl, rs.Common)
			rs.Jain = ptr(j)
		}
	}
	return rs
}
