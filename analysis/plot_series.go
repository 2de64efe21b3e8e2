package analysis

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// ThroughputPlot is goodput vs time, one line per flow, in Mbit/s.
func ThroughputPlot(r *Result, title string) (*plot.Plot, error) {
	p := newPlot(title, "time (s)", "goodput (Mbit/s)")
	ymax := 0.0
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
			ymax = max(ymax, g/mbit)
		}
		if err := addLine(p, i, flowLabel(f), xy, false); err != nil {
			return nil, err
		}
	}
	p.Y.Min = 0
	return p, nil
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
