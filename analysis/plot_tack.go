package analysis

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// logAxes switches both axes to log scale with powers-of-ten ticks.
func logAxes(p *plot.Plot) {
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
}

// Measured is a measured ACK frequency to overlay on a TACK sweep: at X
// (RTT in ms for an "rtt" sweep, bandwidth in Mbit/s for "bw") the rate
// Hz.
type Measured struct {
	Name string
	X    float64
	Hz   float64
}

// TACKPlot draws a Fig. 22-style sweep on log–log axes: f_tack per curve
// (solid) and f_tcp(L=2) for the same curve (dashed), plus any measured
// points.
func TACKPlot(sw TACKSweep, title string, measured []Measured) (*plot.Plot, error) {
	xl, xs := "RTT_min (ms)", 1000.0
	if sw.Axis == "bw" {
		xl, xs = "bandwidth (Mbit/s)", 1/mbit
	}
	p := newPlot(title, xl, "ACK frequency (Hz)")
	for i, c := range sw.Curves {
		var tack, tcp plotter.XYs
		for _, pt := range c.Points {
			x := pt.RTTMinS * xs
			if sw.Axis == "bw" {
				x = pt.BwBps * xs
			}
			tack = append(tack, plotter.XY{X: x, Y: pt.FTackHz})
			tcp = append(tcp, plotter.XY{X: x, Y: pt.FTCP2Hz})
		}
		name := fmt.Sprintf("bw %s Mbit/s", FormatNumber(c.Fixed/mbit, 4))
		if sw.Axis == "bw" {
			name = fmt.Sprintf("RTT_min %s ms", FormatNumber(c.Fixed*1000, 4))
		}
		if err := addLine(p, i, name, tack, false); err != nil {
			return nil, err
		}
		if err := addLine(p, i, "", tcp, true); err != nil {
			return nil, err
		}
	}
	// One legend entry per curve (colour) and one per line style.
	for _, st := range []struct {
		name   string
		dashed bool
	}{{"TACK f_tack (solid)", false}, {"TCP f_tcp(L=2) (dashed)", true}} {
		l := &plotter.Line{LineStyle: draw.LineStyle{Color: color.Black, Width: vg.Points(1.3)}}
		if st.dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Legend.Add(st.name, l)
	}
	if len(measured) > 0 {
		xy := make(plotter.XYs, 0, len(measured))
		for _, m := range measured {
			if finite(m.X) && finite(m.Hz) {
				xy = append(xy, plotter.XY{X: m.X, Y: m.Hz})
			}
		}
		if len(xy) > 0 {
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle.Shape = draw.CrossGlyph{}
			sc.GlyphStyle.Radius = vg.Points(4)
			p.Add(sc)
			p.Legend.Add("measured", sc)
		}
	}
	logAxes(p)
	return p, nil
}

// finite reports whether v can be shown on a log axis.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v > 0 }
