package analysis

import (
	"bytes"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

// TestPlotsRender draws every plot kind in both formats.
func TestPlotsRender(t *testing.T) {
	r := exampleResult()
	rtts := []Series{{"srtt f1", SRTTsMs(&r.Flows[0], WholeRun(&r.Flows[0]))}, {"probe p1", ProbeRTTsMs(&r.Probes[0], ProbeSpan(&r.Probes[0]))}}
	mk := map[string]func() (*plot.Plot, error){
		"throughput": func() (*plot.Plot, error) { return ThroughputPlot(r, "goodput") },
		"cwnd":       func() (*plot.Plot, error) { return CwndPlot(r, "cwnd", false) },
		"cwnd-bytes": func() (*plot.Plot, error) { return CwndPlot(r, "cwnd", true) },
		"cdf":        func() (*plot.Plot, error) { return CDFPlot("RTT", "RTT (ms)", rtts) },
		"bars": func() (*plot.Plot, error) {
			return BarPlot("goodput", "Mbit/s", []Bar{{"a", Repetitions([]float64{9, 10, 11}, 0.95)}, {"b", Repetitions([]float64{5, 6}, 0.95)}})
		},
		"tack": func() (*plot.Plot, error) {
			return TACKPlot(SweepBw([]float64{0.01, 0.08}, LogSpace(1e3, 1e9, 50), DefaultTACK), "tack", []Measured{{"run", 47, 2055}})
		},
	}
	for name, f := range mk {
		p, err := f()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var svg, png bytes.Buffer
		if err := Render(p, "svg", &svg); err != nil || !strings.Contains(svg.String(), "<svg") {
			t.Fatalf("%s svg: %v", name, err)
		}
		if err := Render(p, "png", &png); err != nil || !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")) {
			t.Fatalf("%s png: %v", name, err)
		}
	}
	if err := Render(plot.New(), "gif", &bytes.Buffer{}); err == nil {
		t.Fatal("gif accepted")
	}
}

// TestThroughputPlotSteps: schedule steps are drawn as labelled markers.
func TestThroughputPlotSteps(t *testing.T) {
	r := &Result{Flows: []Flow{{ID: "f1", Samples: []Sample{{TS: 1, Bytes: 125000, GoodputBps: 1e6}, {TS: 2, Bytes: 250000, GoodputBps: 2e6}}}}}
	svg := func() string {
		p, err := ThroughputPlot(r, "steps")
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := Render(p, "svg", &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	without := svg()
	r.Steps = []Step{{Schedule: "s", AtS: 1.5, What: "at 1.5s l rate=1mbit"}}
	with := svg()
	if strings.Contains(without, "schedule step") || !strings.Contains(with, "schedule step") {
		t.Errorf("the step marker's legend: without steps %v, with %v", strings.Contains(without, "schedule step"), strings.Contains(with, "schedule step"))
	}
}
