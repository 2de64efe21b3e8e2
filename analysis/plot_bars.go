package analysis

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// Bar is one bar with a confidence interval.
type Bar struct {
	Name string
	Stat RepStats
}

// errBars adapts bars to plotter's XYer and YErrorer.
type errBars []Bar

func (b errBars) Len() int                    { return len(b) }
func (b errBars) XY(i int) (float64, float64) { return float64(i), b[i].Stat.Mean }
func (b errBars) YError(i int) (float64, float64) {
	return b[i].Stat.HalfWidth, b[i].Stat.HalfWidth
}

// BarPlot draws one bar per scenario (the mean) with its confidence
// interval as an error bar; y is the axis label.
func BarPlot(title, y string, bars []Bar) (*plot.Plot, error) {
	p := newPlot(title, "", y)
	vals := make(plotter.Values, len(bars))
	names := make([]string, len(bars))
	for i, b := range bars {
		vals[i], names[i] = b.Stat.Mean, b.Name
	}
	bc, err := plotter.NewBarChart(vals, vg.Points(40))
	if err != nil {
		return nil, err
	}
	bc.Color = plotutil.Color(0)
	bc.LineStyle.Width = 0
	p.Add(bc)
	eb, err := plotter.NewYErrorBars(errBars(bars))
	if err != nil {
		return nil, err
	}
	eb.LineStyle.Width = vg.Points(1.2)
	p.Add(eb)
	p.NominalX(names...)
	fitLabels(p, names)
	p.X.Min, p.X.Max = -0.6, float64(len(bars))-0.4 // room for the outer bars
	p.Y.Min = 0
	top := 0.0
	for _, b := range bars {
		top = math.Max(top, b.Stat.Mean+b.Stat.HalfWidth)
	}
	if top > 0 {
		p.Y.Max = top * 1.12 // headroom so the highest cap stays visible
	}
	if lvl := barsLevel(bars); lvl > 0 {
		p.Title.Text += fmt.Sprintf(" (error bars: %g %% CI)", lvl*100)
	}
	return p, nil
}

func barsLevel(bars []Bar) float64 {
	for _, b := range bars {
		if b.Stat.N >= 2 {
			return b.Stat.Level
		}
	}
	return 0
}

// barArea is the width the bars share: the figure less the y axis and
// its label (an estimate; legends are not drawn on bar charts).
const barArea = FigWidth - 0.9*vg.Inch

// fitLabels turns the x labels when they would not fit side by side:
// 30° when each fits in its slot turned so, else upright (90°), where
// each needs only the font's height.
func fitLabels(p *plot.Plot, names []string) {
	if len(names) == 0 {
		return
	}
	slot := barArea / vg.Length(len(names))
	st := &p.X.Tick.Label
	widest := vg.Length(0)
	for _, n := range names {
		widest = max(widest, st.Width(n))
	}
	h := st.FontExtents().Height
	switch {
	case widest <= 0.9*slot:
		return
	case h/vg.Length(math.Sin(math.Pi/6)) <= 0.9*slot && widest*vg.Length(math.Cos(math.Pi/6)) <= 3*slot:
		st.Rotation = math.Pi / 6
	default:
		st.Rotation = math.Pi / 2
	}
	st.XAlign, st.YAlign = text.XRight, text.YCenter
}
