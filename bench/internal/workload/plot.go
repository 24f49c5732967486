package workload

import (
	"fmt"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/plot"
	"gonum.org/v1/plot/plotter"
)

// The plots are drawn in the style of bench's report (plot.SavePlot).
type series = plot.Curve

func writePlots(r *Result) error {
	dir := r.Config.Out
	// A smoke test's plots say so: their numbers are not measurements.
	smoke := ""
	if r.Config.Mode == "tiny" {
		smoke = "SMOKE TEST, not a measurement: "
	}
	// In-process false-positive rates.
	var ss []series
	for _, c := range []fprCurve{r.BloomFPR, r.CuckooFPR} {
		s := series{Name: c.Family + " (measured)"}
		e := series{Name: c.Family + " (extrapolated)", Dashed: true}
		for b := minBudget(c.Family); b <= 32; b++ {
			if c.Measured[b] {
				s.XY = append(s.XY, plotter.XY{X: float64(b), Y: 100 * c.FPR[b]})
			} else {
				e.XY = append(e.XY, plotter.XY{X: float64(b), Y: 100 * c.FPR[b]})
			}
		}
		ss = append(ss, s, e)
	}
	if err := plot.SavePlot(dir, "fpr.png", smoke+"False-positive rate, in process (NewWriter / MayContain)", "bits per key", "FPR (%)", true, ss); err != nil {
		return err
	}
	// False-positive reads per absent Get.
	ss = nil
	for _, s := range r.shapeNames() {
		for _, fam := range []string{famBloom, famCuckoo} {
			se := series{Name: fmt.Sprintf("%s %s", fam, s), Dashed: fam == famBloom}
			for _, b := range r.Config.Budgets {
				fp, _ := r.fpPerOp(s, "get-absent", fmt.Sprintf("%s(%d)", fam, b))
				se.XY = append(se.XY, plotter.XY{X: float64(b), Y: fp})
			}
			ss = append(ss, se)
		}
	}
	if err := plot.SavePlot(dir, "fp_per_get.png", smoke+"False-positive block reads per absent Get", "bits per key (B)", "reads per Get", true, ss); err != nil {
		return err
	}
	// Time ratios of absent Gets.
	ss = nil
	for _, s := range r.shapeNames() {
		for _, g := range allRegimes {
			se := series{Name: fmt.Sprintf("%s %s", s, g.Name)}
			for _, b := range r.Config.Budgets {
				st := r.timeRatio(cellKey{Shape: s, Regime: g.Name, Path: "get-absent", Threads: r.Config.Threads[0]}, cuckooName(b), bloomName(b))
				se.XY = append(se.XY, plotter.XY{X: float64(b), Y: st.Median})
			}
			ss = append(ss, se)
		}
	}
	if err := plot.SavePlot(dir, "time_ratio.png", smoke+fmt.Sprintf("Absent Get time, cuckoo(B) / bloom(B), %d thread(s), median of paired ratios", r.Config.Threads[0]),
		"bits per key (B)", "time ratio", false, ss); err != nil {
		return err
	}
	return writeIntervalPlot(r, smoke+"Time per operation, cuckoo(B) / bloom(B): each cell's median of paired ratios and its 95% interval")
}
