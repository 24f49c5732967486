package workload

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// intervalColors colour the budgets of the interval plot (Tableau's blue,
// orange, green, red).
var intervalColors = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff},
}

// intervalPoints is one budget's cells: x the cell's position in report
// order, y its median, with the interval as error bars.
type intervalPoints struct {
	plotter.XYs
	plotter.YErrors
}

// writeIntervalPlot draws time_intervals.png: every cell's median ratio
// cuckoo(B)/bloom(B) with its 95% interval, one colour per budget, cells in
// the report's order (shape, regime, path, threads), with lines at 1.00
// and at 1.02 (an interval entirely above it is a measurably slower cell).
// Cells whose LSMs are not identical are left out.
func writeIntervalPlot(r *Result, title string) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "cell (shapes in order: " + fmt.Sprint(r.shapeNames()) + "; within each, regime, path, threads)"
	p.Y.Label.Text = "time ratio cuckoo(B) / bloom(B)"
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	keys := r.cellKeys()
	lo, hi := 1.0, 1.0
	for bi, b := range r.Config.Budgets {
		var pts intervalPoints
		for x, k := range keys {
			st := r.timeRatio(k, cuckooName(b), bloomName(b))
			if ok, _ := r.identical(k.Shape, cuckooName(b), bloomName(b)); !ok || st.N == 0 || math.IsNaN(st.Lo+st.Hi) {
				continue
			}
			off := float64(bi-len(r.Config.Budgets)/2) * 0.25
			pts.XYs = append(pts.XYs, plotter.XY{X: float64(x) + off, Y: st.Median})
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{st.Median - st.Lo, st.Hi - st.Median})
			lo, hi = math.Min(lo, st.Lo), math.Max(hi, st.Hi)
		}
		if len(pts.XYs) == 0 {
			continue
		}
		col := intervalColors[bi%len(intervalColors)]
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(1.5), Shape: draw.CircleGlyph{}}
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return err
		}
		bars.LineStyle.Color, bars.LineStyle.Width, bars.CapWidth = col, vg.Points(0.6), vg.Points(2)
		p.Add(bars, sc)
		p.Legend.Add(fmt.Sprintf("B=%d", b), sc)
	}
	for _, y := range []float64{1.00, 1.02} {
		line, err := plotter.NewLine(plotter.XYs{{X: -1, Y: y}, {X: float64(len(keys)), Y: y}})
		if err != nil {
			return err
		}
		line.LineStyle.Color = color.Gray{0x40}
		if y != 1 {
			line.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(line)
	}
	p.Y.Min, p.Y.Max = math.Min(lo, 0.95)-0.01, math.Max(hi, 1.05)+0.01
	return p.Save(10*vg.Inch, 4.5*vg.Inch, filepath.Join(r.Config.Out, "time_intervals.png"))
}
