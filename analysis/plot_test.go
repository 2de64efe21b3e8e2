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
