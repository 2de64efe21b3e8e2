package analysis

import "testing"

func TestEpisodesFromSamples(t *testing.T) {
	states := []uint8{0, 0, 3, 3, 0, 1, 4, 4, 3, 1, 0, 3}
	f := &Flow{}
	for i, s := range states {
		f.Samples = append(f.Samples, Sample{TS: float64(i) * 0.1, TCP: &TCPInfo{CAState: s}})
	}
	eps, open := EpisodesFromSamples(f)
	if len(eps) != 2 || open != 1 {
		t.Fatalf("episodes %+v open %d", eps, open)
	}
	if !near(eps[0].DurationMs(), 200, 1e-9) || eps[0].RTO || !near(eps[1].DurationMs(), 300, 1e-9) || !eps[1].RTO {
		t.Fatalf("%+v", eps)
	}
	st := RecoveryOf("samples", eps, open)
	if st.Count != 2 || st.RTOs != 1 || st.Unfinished != 1 || !near(st.MeanMs, 250, 1e-9) || !near(st.TotalMs, 500, 1e-9) {
		t.Fatalf("%+v", st)
	}
}

func TestRecoveryPrefersTrace(t *testing.T) {
	r := &Result{
		Flows: []Flow{{ID: "a", Samples: []Sample{{TS: 1, TCP: &TCPInfo{CAState: 3}}, {TS: 2, TCP: &TCPInfo{}}}}, {ID: "b"}},
		CongStateEvents: []CongStateEvent{
			{TS: 1.250, Flow: "a", State: 0}, {TS: 1.010, Flow: "a", State: 3}, // out of order on purpose
			{TS: 1.100, Flow: "b", State: 4}, {TS: 1.500, Flow: "b", State: 0},
		},
	}
	st := Recovery(r, &r.Flows[0])
	if st.Source != "trace" || st.Count != 1 || !near(st.MeanMs, 240, 1e-9) || st.RTOs != 0 {
		t.Fatalf("%+v", st)
	}
	st = Recovery(r, &r.Flows[1])
	if st.Count != 1 || st.RTOs != 1 || !near(st.P50Ms, 400, 1e-9) {
		t.Fatalf("%+v", st)
	}
}
