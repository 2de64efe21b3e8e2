package analysis

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure sizes and raster resolution used by Render and SavePlot.
const (
	FigWidth  = 7.5 * vg.Inch
	FigHeight = 3.6 * vg.Inch
	PNGDPI    = 150
)

// newPlot makes a plot with a title, axis labels and a grid.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	p.X.Tick.Marker, p.Y.Tick.Marker = roundTicks{}, roundTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	return p
}

// drawFigure draws p with its legend outside the data area, in a column on
// the right, so it never hides a curve.
func drawFigure(p *plot.Plot, c draw.Canvas) {
	leg := p.Legend
	r := leg.Rectangle(c)
	lw := r.Max.X - r.Min.X
	if lw <= 0 {
		p.Draw(c)
		return
	}
	pad := vg.Points(8)
	// a title wider than the area beside the legend is set smaller
	for avail := c.Max.X - c.Min.X - lw - 2*pad; p.Title.TextStyle.Width(p.Title.Text) > avail && p.Title.TextStyle.Font.Size > vg.Points(8); {
		p.Title.TextStyle.Font.Size *= 0.9
	}
	p.Legend = plot.NewLegend()
	p.Draw(draw.Crop(c, 0, -(lw + 2*pad), 0, 0))
	p.Legend = leg
	top := vg.Length(0)
	if p.Title.Text != "" {
		top = p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	}
	leg.Top, leg.Left = true, true
	leg.Draw(draw.Crop(c, c.Max.X-c.Min.X-lw-pad, 0, 0, -top-pad))
}

// Render draws p in format "svg" or "png" to w.
func Render(p *plot.Plot, format string, w io.Writer) error {
	switch format {
	case "svg":
		c := vgsvg.New(FigWidth, FigHeight)
		drawFigure(p, draw.New(c))
		_, err := c.WriteTo(w)
		return err
	case "png":
		c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(FigWidth, FigHeight), vgimg.UseDPI(PNGDPI))}
		drawFigure(p, draw.New(c))
		_, err := c.WriteTo(w)
		return err
	}
	return fmt.Errorf("unknown plot format %q (valid: svg, png)", format)
}

// SavePlot writes base.svg and base.png and returns their paths.
func SavePlot(p *plot.Plot, base string) ([]string, error) {
	var out []string
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return nil, err
	}
	for _, ext := range []string{"svg", "png"} {
		path := base + "." + ext
		f, err := os.Create(path)
		if err != nil {
			return out, err
		}
		err = Render(p, ext, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return out, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, path)
	}
	return out, nil
}

// addLine adds a line series with the i-th standard colour and dash.
func addLine(p *plot.Plot, i int, name string, xy plotter.XYs, dashed bool) error {
	if len(xy) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.Color = plotutil.Color(i)
	l.Width = vg.Points(1.3)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
	return nil
}

// flowLabel names a flow in legends.
func flowLabel(f *Flow) string {
	s := f.ID + " " + f.From + "→" + f.To
	if f.CC != "" {
		s += " (" + f.CC + ")"
	}
	return s
}
