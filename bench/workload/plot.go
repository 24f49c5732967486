package workload

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// The plots follow bench's report: its palette, markers per series, 7x4.5
// inch PNGs, legends in 8 pt.
var palette = bench.Palette

type series struct {
	name   string
	xy     plotter.XYs
	dashed bool
}

func savePlot(dir, file, title, xlabel, ylabel string, logY bool, ss []series) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = true
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(5), -vg.Points(5)
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	drawn := 0
	for i, s := range ss {
		var xy plotter.XYs
		for _, v := range s.xy {
			if math.IsNaN(v.Y) || math.IsInf(v.Y, 0) || (logY && v.Y <= 0) {
				continue
			}
			xy = append(xy, v)
		}
		if len(xy) == 0 {
			continue
		}
		l, pt, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		col := palette[i%len(palette)]
		l.Color, pt.Color = col, col
		pt.Shape = plotutil.Shape(i)
		pt.Radius = vg.Points(3)
		if s.dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l, pt)
		p.Legend.Add(s.name, l, pt)
		drawn++
	}
	if drawn == 0 {
		p.Add(plotter.NewFunction(func(float64) float64 { return 1 }))
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, filepath.Join(dir, file))
}

func writePlots(r *Result) error {
	dir := r.Config.Out
	// In-process false-positive rates.
	var ss []series
	for _, c := range []fprCurve{r.BloomFPR, r.CuckooFPR} {
		s := series{name: c.Family + " (measured)"}
		e := series{name: c.Family + " (extrapolated)", dashed: true}
		for b := minBudget(c.Family); b <= 32; b++ {
			if c.Measured[b] {
				s.xy = append(s.xy, plotter.XY{X: float64(b), Y: 100 * c.FPR[b]})
			} else {
				e.xy = append(e.xy, plotter.XY{X: float64(b), Y: 100 * c.FPR[b]})
			}
		}
		ss = append(ss, s, e)
	}
	if err := savePlot(dir, "fpr.png", "False-positive rate, in process (NewWriter / MayContain)", "bits per key", "FPR (%)", true, ss); err != nil {
		return err
	}
	// False-positive reads per absent Get.
	ss = nil
	for _, s := range r.shapeNames() {
		for _, fam := range []string{famBloom, famCuckoo} {
			se := series{name: fmt.Sprintf("%s %s", fam, s), dashed: fam == famBloom}
			for _, b := range r.Config.Budgets {
				fp, _ := r.fpPerOp(s, "get-absent", fmt.Sprintf("%s(%d)", fam, b))
				se.xy = append(se.xy, plotter.XY{X: float64(b), Y: fp})
			}
			ss = append(ss, se)
		}
	}
	if err := savePlot(dir, "fp_per_get.png", "False-positive block reads per absent Get", "bits per key (B)", "reads per Get", true, ss); err != nil {
		return err
	}
	// Time ratios of absent Gets.
	ss = nil
	for _, s := range r.shapeNames() {
		for _, g := range allRegimes {
			se := series{name: fmt.Sprintf("%s %s", s, g.Name)}
			for _, b := range r.Config.Budgets {
				st := r.timeRatio(cellKey{Shape: s, Regime: g.Name, Path: "get-absent", Threads: r.Config.Threads[0]}, cuckooName(b), bloomName(b))
				se.xy = append(se.xy, plotter.XY{X: float64(b), Y: st.Median})
			}
			ss = append(ss, se)
		}
	}
	return savePlot(dir, "time_ratio.png", fmt.Sprintf("Absent Get time, cuckoo(B) / bloom(B), %d thread(s), median of paired ratios", r.Config.Threads[0]),
		"bits per key (B)", "time ratio", false, ss)
}
