package analysis

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// TestRoundTicks: time and rate axes are marked at round values (1, 2 or
// 5 × 10^k, at most 9 labels), never at 2, 8, 14 as gonum's default
// marked a 15-s run, and labelled without float noise.
func TestRoundTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (roundTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	cases := []struct {
		lo, hi float64
		want   string
	}{
		{0, 15.2, "0 2 4 6 8 10 12 14"},
		{0, 30, "0 5 10 15 20 25 30"},
		{0, 100, "0 20 40 60 80 100"},
		{0.5, 14.8, "2 4 6 8 10 12 14"},
		{0, 0.7, "0.0 0.1 0.2 0.3 0.4 0.5 0.6 0.7"},
		{0, 23.4, "0 5 10 15 20"},
		{-3, 3, "-3 -2 -1 0 1 2 3"},
	}
	for _, c := range cases {
		if got := strings.Join(labels(c.lo, c.hi), " "); got != c.want {
			t.Errorf("ticks over [%g, %g]: %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	for _, span := range []float64{0.013, 0.7, 3, 15, 47, 130, 999, 12345} {
		n := len(labels(0, span))
		if n < 4 || n > 9 {
			t.Errorf("span %g: %d labels, want 4-9", span, n)
		}
	}
}

// TestSmoothedGoodput: an MPTCP-like series whose 100-ms samples swing
// between 1 and 22 Mbit/s around a 12 Mbit/s path is drawn with a 1-s mean
// line that stays near the mean; a flow sampled once a second is drawn as
// it is.
func TestSmoothedGoodput(t *testing.T) {
	f := Flow{ID: "f1", Proto: "mptcp", StartS: 0}
	for i := 1; i <= 150; i++ {
		g := 2e6
		if i%2 == 0 {
			g = 22e6
		}
		f.Samples = append(f.Samples, Sample{TS: float64(i) / 10, GoodputBps: g, Bytes: int64(g / 80)})
	}
	r := &Result{Flows: []Flow{f}}
	sm := smoothed(&r.Flows[0], toXYs(&r.Flows[0]))
	if sm == nil {
		t.Fatal("no mean line for 100-ms samples")
	}
	for _, p := range sm {
		if p.X < 1 || p.X > 14 {
			continue // the window is cut at the ends
		}
		if math.Abs(p.Y-12) > 1.05 {
			t.Fatalf("1-s mean at %.1f s: %.2f Mbit/s, want 12 ± 1.05 (the mean of 2 and 22)", p.X, p.Y)
		}
	}
	slow := Flow{ID: "f2"}
	for i := 1; i <= 15; i++ {
		slow.Samples = append(slow.Samples, Sample{TS: float64(i), GoodputBps: 5e6})
	}
	if s := smoothed(&slow, toXYs(&slow)); s != nil {
		t.Errorf("a flow sampled every second got a mean line: %v", s[:2])
	}
	p, err := ThroughputPlot(r, "mptcp")
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Min != 0 {
		t.Errorf("time axis starts at %g, want 0", p.X.Min)
	}
	keep(t, p, "smoothed-goodput")
}

// toXYs is a flow's per-sample goodput in Mbit/s, as ThroughputPlot
// computes it.
func toXYs(f *Flow) plotter.XYs {
	var xy plotter.XYs
	for _, s := range f.Samples {
		xy = append(xy, plotter.XY{X: s.TS, Y: s.GoodputBps / 1e6})
	}
	return xy
}

// TestBarLabelsFit: asym-mptcp's eight scenario names side by side would
// overlap at the figure's width; they are turned so that they do not,
// while three short ones stay level.
func TestBarLabelsFit(t *testing.T) {
	bar := func(names ...string) *plot.Plot {
		var bars []Bar
		for i, n := range names {
			bars = append(bars, Bar{n, Repetitions([]float64{float64(i + 1)}, 0.95)})
		}
		p, err := BarPlot("goodput", "Mbit/s", bars)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := bar("g54", "n7", "auto-45m"); p.X.Tick.Label.Rotation != 0 {
		t.Errorf("three short labels turned %g rad", p.X.Tick.Label.Rotation)
	}
	long := []string{"engine/tcp", "engine/mptcp-noqm", "engine/mptcp-qm", "engine/mptcp-strict", "engine/mptcp-aqm",
		"engine/mptcp-qm-lowat", "engine/mptcp-qm-wmem", "engine/mptcp-qm-rcvbuf"}
	p := bar(long...)
	rot := p.X.Tick.Label.Rotation
	if rot == 0 {
		t.Fatal("eight long labels left level: they overlap")
	}
	// turned by rot, neighbours a slot apart are separated by slot·sin(rot)
	// across the text: at least the font's height
	slot := barArea / 8
	if sep := float64(slot) * math.Sin(rot); sep < float64(p.X.Tick.Label.FontExtents().Height) {
		t.Errorf("turned %.0f°: %.1f pt between labels, font %.1f pt high", rot*180/math.Pi, sep, float64(p.X.Tick.Label.FontExtents().Height))
	}
	keep(t, p, "bars-long-labels")
}

// TestJainOneClass: a run's Jain index compares its bulk flows, not a
// 30 kbit/s UDP probe flow with them (which read 0.5 for two equal TCP
// flows and a probe).
func TestJainOneClass(t *testing.T) {
	mk := func(id, proto string, bps float64) Flow {
		f := Flow{ID: id, Proto: proto, StartS: 0, EndS: 20}
		for i := 1; i <= 20; i++ {
			f.Samples = append(f.Samples, Sample{TS: float64(i), Bytes: int64(bps / 8), GoodputBps: bps})
		}
		return f
	}
	r := &Result{Flows: []Flow{mk("a", "tcp", 12e6), mk("b", "tcp", 12e6), mk("p", "udp", 30e3)}}
	s := r.Summarise(Options{})
	if s.Jain == nil || math.Abs(*s.Jain-1) > 1e-3 {
		t.Fatalf("Jain over two equal TCP flows and a UDP probe: %v, want 1", s.Jain)
	}
	r = &Result{Flows: []Flow{mk("a", "tcp", 12e6), mk("p", "udp", 30e3)}}
	if s := r.Summarise(Options{}); s.Jain != nil {
		t.Errorf("one TCP flow and a probe: Jain %v, want none", *s.Jain)
	}
	r = &Result{Flows: []Flow{mk("u1", "udp", 10e6), mk("u2", "udp", 5e6)}}
	if s := r.Summarise(Options{}); s.Jain == nil || math.Abs(*s.Jain-0.9) > 1e-3 {
		t.Errorf("two UDP flows 10 and 5 Mbit/s: Jain %v, want 0.9", s.Jain)
	}
}

// keep writes a plot into $EMUCTL_PLOT_DIR, when set, for a person to
// look at.
func keep(t *testing.T, p *plot.Plot, name string) {
	dir := os.Getenv("EMUCTL_PLOT_DIR")
	if dir == "" {
		return
	}
	if _, err := SavePlot(p, filepath.Join(dir, name)); err != nil {
		t.Error(err)
	}
}
