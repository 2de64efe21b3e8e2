package traffic

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
)

// Traffic on a lab over two local machines: a shaped cut link (10 Mbit/s,
// 5 ms) carries an iperf3 flow whose ends run on their own machines (the
// workers' exec): goodput R × 1448/1514 within [0.95, 1.02], the sender's
// RTT at least the 2 × 5 ms floor, the result saying which machines ran
// it and what was not read. The native engine, probes and captures are
// refused with what to use instead, before anything starts.
func TestClusterTrafficIperf3(t *testing.T) {
	needRoot(t)
	needIperf3(t)
	lab := yamlLab(t, `name: ttrcl
machines:
  m1: {ssh: local, underlay: 192.168.253.1}
  m2: {ssh: local, underlay: 192.168.253.2}
nodes: {h1: {machine: m1}, h2: {machine: m2}}
links:
  - endpoints: [h1, h2]
    link: {rate: 10mbit, delay: 5ms}
`)
	_, err := Run(context.Background(), lab, []Flow{{Client: "h1", Server: "h2", Duration: time.Second, Probe: "ping"}}, Options{Captures: []CaptureSpec{{Node: "h2", Iface: "h2-eth0"}}})
	for _, want := range []string{"spread over several machines", "flow f1: the native engine", "--engine iperf3", "probe: ping probes", "emuctl capture NODE:IFACE"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("native flow with a probe and a capture: want %q in %v", want, err)
		}
	}
	capacity := 10e6 * 1448 / 1514
	r := testutil.RetryStarved(t, "iperf3 across two machines", true, func() *struct {
		g, rtt float64
		cond   map[string]string
	} {
		res := run(t, lab, Flow{Name: "f1", Client: "h1", Server: "h2", Duration: 4 * time.Second, Interval: 500 * time.Millisecond, Engine: EngineIperf3, Sock: SockOpts{CC: "cubic"}})
		f := res.Flow("f1")
		if f == nil || len(f.Samples) == 0 {
			t.Fatalf("no flow f1 or no samples: %+v", res.Flows)
		}
		minRTT := 0.0
		for _, s := range f.Samples {
			if s.TCP != nil && s.TCP.SrttUs > 0 && (minRTT == 0 || float64(s.TCP.SrttUs)/1e3 < minRTT) {
				minRTT = float64(s.TCP.SrttUs) / 1e3
			}
		}
		return &struct {
			g, rtt float64
			cond   map[string]string
		}{goodputOf(res, "f1"), minRTT, res.Conditions}
	})
	t.Logf("iperf3 h1 (m1) -> h2 (m2) over the cut link: %.3f Mbit/s = %.3f × capacity, smallest sender RTT %.2f ms; conditions machines=%q",
		r.g/1e6, r.g/capacity, r.rtt, r.cond["machines"])
	if r.g < 0.95*capacity || r.g > 1.02*capacity {
		t.Errorf("goodput %.3f Mbit/s, want [0.95, 1.02] × %.3f", r.g/1e6, capacity/1e6)
	}
	if r.rtt < 10 {
		t.Errorf("sender RTT %.2f ms below the 2 × 5 ms floor", r.rtt)
	}
	if r.cond["machines"] != "m1, m2" || !strings.Contains(r.cond["machines_not_read"], "node counters") {
		t.Errorf("conditions %v", r.cond)
	}
}
