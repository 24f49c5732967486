package bench

import (
	"image/color"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// curve is one plotted series.
type curve struct {
	name   string
	xy     plotter.XYs
	points bool // markers only, no line
	dashed bool
	gray   bool
}

// palette colours the curves of a plot in order: nine of the Tableau 10
// colours and three more, so that each of the FPR plot's curves gets
// their own (plotutil's palette has seven and repeats).
var palette = []color.Color{
	color.RGBA{31, 119, 180, 255},  // blue
	color.RGBA{214, 39, 40, 255},   // red
	color.RGBA{44, 160, 44, 255},   // green
	color.RGBA{255, 127, 14, 255},  // orange
	color.RGBA{148, 103, 189, 255}, // purple
	color.RGBA{140, 86, 75, 255},   // brown
	color.RGBA{227, 119, 194, 255}, // pink
	color.RGBA{23, 190, 207, 255},  // cyan
	color.RGBA{188, 189, 34, 255},  // olive
	color.RGBA{0, 0, 128, 255},     // navy
	color.RGBA{0, 128, 128, 255},   // teal
	color.RGBA{0, 0, 0, 255},       // black
}

// Curve is one series of a plot drawn with SavePlot: a line with markers,
// dashed if Dashed.
type Curve struct {
	Name   string
	XY     plotter.XYs
	Dashed bool
}

// SavePlot draws curves into dir/file as a PNG of 7x4.5 inches in the
// report's style (its palette, a marker shape per curve, the legend top right),
// y on a log axis if logY.
func SavePlot(dir, file, title, xlabel, ylabel string, logY bool, curves []Curve) error {
	cs := make([]curve, len(curves))
	for i, c := range curves {
		cs[i] = curve{name: c.Name, xy: c.XY, dashed: c.Dashed}
	}
	return savePlot(dir, file, title, xlabel, ylabel, logY, legendTopRight, 0, cs)
}

// legend positions.
const (
	legendTopRight = iota
	legendTopLeft
	legendBottomLeft
	legendBottomRight
)

// savePlot draws curves into dir/file as a PNG of 7x4.5 inches, with x ticks
// every xstep (0: automatic).
func savePlot(dir, file, title, xlabel, ylabel string, logY bool, legend int, xstep float64, curves []curve) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = legend == legendTopRight || legend == legendTopLeft
	p.Legend.Left = legend == legendTopLeft || legend == legendBottomLeft
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(5), vg.Points(5)
	if !p.Legend.Left {
		p.Legend.XOffs = -p.Legend.XOffs
	}
	if p.Legend.Top {
		p.Legend.YOffs = -p.Legend.YOffs
	}
	if xstep > 0 {
		p.X.Tick.Marker = xTicks(curves, xstep)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	drawn := 0
	for i, c := range curves {
		ok, err := addCurve(p, i, c, logY)
		if err != nil {
			return err
		}
		if ok {
			drawn++
		}
	}
	if drawn == 0 { // axes need a range to span; a log axis one above 0
		p.X.Min, p.X.Max = 0, 1
		p.Y.Min, p.Y.Max = 0, 1
		if logY {
			p.Y.Min = 0.1
		}
	} else if !logY { // from zero, with room above the highest line
		p.Y.Min = 0
		p.Y.Max *= 1.04
	} else if p.Y.Min == p.Y.Max { // one value: a range around it, above 0
		p.Y.Min, p.Y.Max = p.Y.Min/2, p.Y.Max*2
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, filepath.Join(dir, file))
}

// xTicks puts a tick every xstep over the curves' range of x.
func xTicks(curves []curve, xstep float64) plot.ConstantTicks {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range curves {
		for _, v := range c.xy {
			lo, hi = math.Min(lo, v.X), math.Max(hi, v.X)
		}
	}
	var ticks []plot.Tick
	for x := math.Floor(lo/xstep) * xstep; x <= hi+xstep/2; x += xstep {
		ticks = append(ticks, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', -1, 64)})
	}
	return ticks
}

// addCurve draws the i-th curve in its colour and shape: markers alone,
// or a line with markers. It leaves out the points an axis cannot show (NaN
// and infinite coordinates, and on a log axis zeros: no false positive seen), and
// reports whether any point was left to draw.
func addCurve(p *plot.Plot, i int, c curve, logY bool) (bool, error) {
	var xy plotter.XYs
	for _, v := range c.xy {
		finite := !math.IsInf(v.X, 0) && !math.IsNaN(v.X) && !math.IsInf(v.Y, 0) && !math.IsNaN(v.Y)
		if finite && (!logY || v.Y > 0) {
			xy = append(xy, v)
		}
	}
	if len(xy) == 0 {
		return false, nil
	}
	col := palette[i%len(palette)]
	if c.points {
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return false, err
		}
		s.Color = col
		s.Shape = plotutil.Shape(i)
		s.Radius = vg.Points(4)
		p.Add(s)
		p.Legend.Add(c.name, s)
		return true, nil
	}
	l, s, err := plotter.NewLinePoints(xy)
	if err != nil {
		return false, err
	}
	l.Color, s.Color = col, col
	s.Shape = plotutil.Shape(i)
	s.Radius = vg.Points(2)
	if c.dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		s.Radius = 0
	}
	if c.gray {
		l.Color = color.Gray{Y: 80}
	}
	p.Add(l, s)
	p.Legend.Add(c.name, l, s)
	return true, nil
}
