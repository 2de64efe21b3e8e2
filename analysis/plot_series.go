package analysis

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// ThroughputPlot is goodput vs time, one line per flow, in Mbit/s. Where
// a flow was sampled faster than twice a second, its samples are drawn
// thin and pale and their 1-s mean (smoothWindowS) bold over them: per
// 100-ms interval, the in-order bytes an MPTCP receiver releases swing
// between a fraction and twice the path's rate as one subflow's hole is
// filled, which hides the rate itself.
func ThroughputPlot(r *Result, title string) (*plot.Plot, error) {
	p := newPlot(title, "time (s)", "goodput (Mbit/s)")
	ymax := 0.0
	rawMax, smoothedAll := 0.0, len(r.Flows) > 0
	defer func() { markSteps(p, r.Steps, ymax) }()
	for i := range r.Flows {
		f := &r.Flows[i]
		xy := make(plotter.XYs, 0, len(f.Samples))
		for j, s := range f.Samples {
			g := s.GoodputBps
			if g == 0 && s.Bytes != 0 {
				if d := s.TS - f.sampleStart(j); d > 0 {
					g = float64(s.Bytes) * 8 / d
				}
			}
			xy = append(xy, plotter.XY{X: s.TS, Y: g / mbit})
		}
		for _, v := range xy {
			rawMax = max(rawMax, v.Y)
		}
		sm := smoothed(f, xy)
		smoothedAll = smoothedAll && sm != nil
		if sm == nil {
			for _, v := range xy {
				ymax = max(ymax, v.Y)
			}
			if err := addLine(p, i, flowLabel(f), xy, false); err != nil {
				return nil, err
			}
			continue
		}
		for _, v := range sm {
			ymax = max(ymax, v.Y)
		}
		raw, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		c := color.NRGBAModel.Convert(plotutil.Color(i)).(color.NRGBA)
		c.A = 70
		raw.Color, raw.Width = c, vg.Points(0.7)
		p.Add(raw)
		if err := addLine(p, i, flowLabel(f)+", 1-s mean", sm, false); err != nil {
			return nil, err
		}
	}
	p.Y.Min = 0
	if smoothedAll && ymax > 0 {
		// the scale follows the mean lines: the pale samples may swing to
		// twice them and are cut above that (a run's last, short interval
		// can read ten times the rate)
		p.Y.Max = min(rawMax, 2*ymax) * 1.05
	}
	p.X.Min = min(p.X.Min, 0)
	return p, nil
}

// smoothWindowS is the window of ThroughputPlot's mean line.
const smoothWindowS = 1.0

// smoothed is a flow's goodput averaged over the smoothWindowS around
// each sample (bytes over time, so uneven intervals weigh as they
// should), or nil when its samples are 0.5 s apart or more (nothing to
// smooth) or too few. xy holds each sample's goodput (Mbit/s).
func smoothed(f *Flow, xy plotter.XYs) plotter.XYs {
	n := len(xy)
	if n < 8 {
		return nil
	}
	span := xy[n-1].X - f.sampleStart(0)
	if span <= 0 || span/float64(n) >= smoothWindowS/2 {
		return nil
	}
	out := make(plotter.XYs, 0, n)
	first := 0 // samples end in time order: none before first reaches lo
	for i := range xy {
		lo, hi := xy[i].X-smoothWindowS/2, xy[i].X+smoothWindowS/2
		for first < n && xy[first].X <= lo {
			first++
		}
		var bits, dur float64
		for j := first; j < n && f.sampleStart(j) < hi; j++ {
			a, b := f.sampleStart(j), xy[j].X
			ov := math.Min(b, hi) - math.Max(a, lo)
			if ov <= 0 || b <= a {
				continue
			}
			bits += xy[j].Y * ov
			dur += ov
		}
		if dur >= 0.9*smoothWindowS { // not where the run's ends cut the window
			out = append(out, plotter.XY{X: xy[i].X, Y: bits / dur})
		}
	}
	return out
}

// CwndPlot is the congestion window vs time, one line per flow (and per
// MPTCP subflow), in segments or, with bytes, in kB.
func CwndPlot(r *Result, title string, bytes bool) (*plot.Plot, error) {
	unit := "cwnd (segments)"
	if bytes {
		unit = "cwnd (kB)"
	}
	p := newPlot(title, "time (s)", unit)
	val := func(t *TCPInfo) float64 {
		if bytes {
			b := float64(t.CwndBytes)
			if b == 0 {
				b = float64(t.CwndSegs) * float64(t.MSS)
			}
			return b / kB
		}
		return float64(t.CwndSegs)
	}
	k := 0
	ymax := 0.0
	defer func() { markSteps(p, r.Steps, ymax) }()
	for i := range r.Flows {
		f := &r.Flows[i]
		var xy plotter.XYs
		sub := map[string]plotter.XYs{}
		var subIDs []string
		for _, s := range f.Samples {
			if s.TCP != nil {
				xy = append(xy, plotter.XY{X: s.TS, Y: val(s.TCP)})
			}
			for _, sf := range s.Subflows {
				if _, ok := sub[sf.ID]; !ok {
					subIDs = append(subIDs, sf.ID)
				}
				sub[sf.ID] = append(sub[sf.ID], plotter.XY{X: s.TS, Y: val(&sf.TCP)})
			}
		}
		for _, v := range xy {
			ymax = max(ymax, v.Y)
		}
		if len(xy) > 0 {
			if err := addLine(p, k, flowLabel(f), xy, false); err != nil {
				return nil, err
			}
			k++
		}
		for _, id := range subIDs {
			if err := addLine(p, k, f.ID+" subflow "+id, sub[id], true); err != nil {
				return nil, err
			}
			k++
		}
	}
	p.Y.Min = 0
	p.X.Min = min(p.X.Min, 0)
	return p, nil
}

// Series is a named sample of values.
type Series struct {
	Name   string
	Values []float64
}

// CDFPlot draws the empirical CDF of each series as a step line; x is the
// axis label (e.g. "RTT (ms)").
func CDFPlot(title, x string, series []Series) (*plot.Plot, error) {
	p := newPlot(title, x, "CDF")
	for i, s := range series {
		cdf := CDF(s.Values)
		xy := make(plotter.XYs, 0, 2*len(cdf)+1)
		prev := 0.0
		for _, c := range cdf {
			xy = append(xy, plotter.XY{X: c.X, Y: prev}, plotter.XY{X: c.X, Y: c.P})
			prev = c.P
		}
		if err := addLine(p, i, s.Name, xy, false); err != nil {
			return nil, err
		}
	}
	p.Y.Min, p.Y.Max = 0, 1
	return p, nil
}

// markSteps draws each schedule step of the run as a dashed vertical line
// at the time it took effect, from 0 to ymax (one legend entry).
func markSteps(p *plot.Plot, steps []Step, ymax float64) {
	if len(steps) == 0 || ymax <= 0 {
		return
	}
	for i, st := range steps {
		l, err := plotter.NewLine(plotter.XYs{{X: st.AtS, Y: 0}, {X: st.AtS, Y: ymax}})
		if err != nil {
			return
		}
		l.Color = color.Gray{Y: 0x80}
		l.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(l)
		if i == 0 {
			p.Legend.Add("schedule step", l)
		}
	}
}
