// Package plot draws the benchmarks' PNG figures in one style: a palette of
// twelve distinct colours, a marker shape per curve, a grid, and a legend in
// the corner the caller picks. It wraps gonum.org/v1/plot so that the
// report and the workload tool draw alike; points an axis cannot show (NaN,
// infinities, zeros on a log axis) are left out instead of failing the plot.
package plot

import (
	"image/color"
	"math"
	"path/filepath"
	"strconv"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Curve is one plotted series: a line with markers by default.
type Curve struct {
	Name   string
	XY     plotter.XYs
	Points bool // markers only, no line
	Dashed bool // a dashed line without markers
	Gray   bool // a gray line (a bound, not a measurement)
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

// Legend is the corner of a plot its legend goes in.
type Legend int

// Legend corners; the zero value is TopRight.
const (
	TopRight Legend = iota
	TopLeft
	BottomLeft
	BottomRight
)

// Figure is what a plot shows besides its curves.
type Figure struct {
	Title, XLabel, YLabel string
	LogY                  bool    // y on a log axis
	Legend                Legend  // the legend's corner
	XStep                 float64 // a tick on x every XStep; 0: automatic
}

// SavePlot draws curves into dir/file as a PNG of 7x4.5 inches in the
// report's style (its palette, a marker shape per curve, the legend top right),
// y on a log axis if logY.
func SavePlot(dir, file, title, xlabel, ylabel string, logY bool, curves []Curve) error {
	return Figure{Title: title, XLabel: xlabel, YLabel: ylabel, LogY: logY}.Save(dir, file, curves)
}

// Save draws curves into dir/file as a PNG of 7x4.5 inches.
func (f Figure) Save(dir, file string, curves []Curve) error {
	p := gonum.New()
	p.Title.Text = f.Title
	p.X.Label.Text = f.XLabel
	p.Y.Label.Text = f.YLabel
	p.Add(plotter.NewGrid())
	logY := f.LogY
	if logY {
		p.Y.Scale = gonum.LogScale{}
		p.Y.Tick.Marker = gonum.LogTicks{Prec: -1}
	}
	legend := f.Legend
	p.Legend.Top = legend == TopRight || legend == TopLeft
	p.Legend.Left = legend == TopLeft || legend == BottomLeft
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(5), vg.Points(5)
	if !p.Legend.Left {
		p.Legend.XOffs = -p.Legend.XOffs
	}
	if p.Legend.Top {
		p.Legend.YOffs = -p.Legend.YOffs
	}
	if f.XStep > 0 {
		p.X.Tick.Marker = xTicks(curves, f.XStep)
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
func xTicks(curves []Curve, xstep float64) gonum.ConstantTicks {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range curves {
		for _, v := range c.XY {
			lo, hi = math.Min(lo, v.X), math.Max(hi, v.X)
		}
	}
	var ticks []gonum.Tick
	for x := math.Floor(lo/xstep) * xstep; x <= hi+xstep/2; x += xstep {
		ticks = append(ticks, gonum.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', -1, 64)})
	}
	return ticks
}

// addCurve draws the i-th curve in its colour and shape: markers alone,
// or a line with markers. It leaves out the points an axis cannot show (NaN
// and infinite coordinates, and on a log axis zeros: no false positive seen), and
// reports whether any point was left to draw.
func addCurve(p *gonum.Plot, i int, c Curve, logY bool) (bool, error) {
	var xy plotter.XYs
	for _, v := range c.XY {
		finite := !math.IsInf(v.X, 0) && !math.IsNaN(v.X) && !math.IsInf(v.Y, 0) && !math.IsNaN(v.Y)
		if finite && (!logY || v.Y > 0) {
			xy = append(xy, v)
		}
	}
	if len(xy) == 0 {
		return false, nil
	}
	col := palette[i%len(palette)]
	if c.Points {
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return false, err
		}
		s.Color = col
		s.Shape = plotutil.Shape(i)
		s.Radius = vg.Points(4)
		p.Add(s)
		p.Legend.Add(c.Name, s)
		return true, nil
	}
	l, s, err := plotter.NewLinePoints(xy)
	if err != nil {
		return false, err
	}
	l.Color, s.Color = col, col
	s.Shape = plotutil.Shape(i)
	s.Radius = vg.Points(2)
	if c.Dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		s.Radius = 0
	}
	if c.Gray {
		l.Color = color.Gray{Y: 80}
	}
	p.Add(l, s)
	p.Legend.Add(c.Name, l, s)
	return true, nil
}
