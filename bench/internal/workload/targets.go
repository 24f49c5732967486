package workload

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// minEvents is the fewest false positives of the baseline that a ratio of
// false positives is judged on.
const minEvents = 20

// fpLimits are the targets for cuckoo(B)'s false-positive block reads as a
// share of bloom(B)'s.
var fpLimits = map[int]float64{10: 0.65, 12: 0.30, 16: 0.05}

func (r *Result) shapeNames() []string {
	var s []string
	for _, x := range r.Shapes {
		s = append(s, x.Spec.Name)
	}
	return s
}

func (r *Result) cellKeys() []cellKey {
	var ks []cellKey
	for k := range r.Cells {
		ks = append(ks, k)
	}
	order := func(list []string, x string) int { return slices.Index(list, x) }
	var shapes, regimes, paths []string
	for _, s := range allShapes {
		shapes = append(shapes, s.Name)
	}
	for _, g := range allRegimes {
		regimes = append(regimes, g.Name)
	}
	for _, p := range allPaths {
		paths = append(paths, p.Name)
	}
	slices.SortFunc(ks, func(a, b cellKey) int {
		if c := order(shapes, a.Shape) - order(shapes, b.Shape); c != 0 {
			return c
		}
		if c := order(regimes, a.Regime) - order(regimes, b.Regime); c != 0 {
			return c
		}
		if c := order(paths, a.Path) - order(paths, b.Path); c != 0 {
			return c
		}
		return a.Threads - b.Threads
	})
	return ks
}

func (r *Result) pathsRun() []string {
	seen := map[string]bool{}
	for k := range r.Cells {
		seen[k.Path] = true
	}
	var ps []string
	for _, p := range allPaths {
		if seen[p.Name] {
			ps = append(ps, p.Name)
		}
	}
	return ps
}

func verdict(target string, misses, unjudged []string, judged int, detail string) verdictRow {
	return verdictRow{Target: target, Judged: judged > 0, Pass: judged > 0 && len(misses) == 0,
		Detail: detail, Misses: misses, Unjudged: unjudged}
}

// computeVerdicts judges the targets from the numbers.
func (r *Result) computeVerdicts() {
	r.Verdicts = nil
	budgets := r.Config.Budgets
	// 1. False-positive block reads per operation.
	for _, b := range budgets {
		if limit, ok := fpLimits[b]; ok {
			r.Verdicts = append(r.Verdicts, r.fpVerdict(b, limit))
		}
	}
	// 2. Filter bytes at bloom(16)'s false-positive rate: the tuned cuckoo
	// configuration, and the integer budget.
	if slices.Contains(budgets, 16) {
		for _, m := range r.matched16() {
			r.Verdicts = append(r.Verdicts, r.filterBytesVerdict(m))
		}
	}
	// 3. Per-level spread.
	r.Verdicts = append(r.Verdicts, r.spreadVerdict())
	// 4. Time per operation.
	r.Verdicts = append(r.Verdicts, r.timeVerdicts()...)
	// 5. Loading time.
	r.Verdicts = append(r.Verdicts, r.loadVerdict())
	// 6. Filter plans.
	r.Verdicts = append(r.Verdicts, r.planVerdicts()...)
	// 7. The A/A twin, the pressure regimes and the lookups through L6
	// filters.
	if r.Config.Twin {
		r.Verdicts = append(r.Verdicts, r.twinVerdict())
	}
	r.Verdicts = append(r.Verdicts, r.pressureVerdicts()...)
	r.Verdicts = append(r.Verdicts, r.lookupVerdicts()...)
	// 8. Zero keys lost.
	r.Verdicts = append(r.Verdicts, r.lostVerdict())
}

// fpVerdict judges cuckoo(b)'s false-positive block reads per operation
// against limit times bloom(b)'s, in every shape and path.
func (r *Result) fpVerdict(b int, limit float64) verdictRow {
	var misses, unjudged []string
	judged := 0
	var ratios []float64
	worst, worstCI := math.Inf(-1), ""
	for _, s := range r.shapeNames() {
		for _, p := range r.pathsRun() {
			bfp, bn := r.fpPerOp(s, p, bloomName(b))
			cfp, cn := r.fpPerOp(s, p, cuckooName(b))
			cell := fmt.Sprintf("%s/%s", s, p)
			if math.IsNaN(bfp) || bn < minEvents {
				unjudged = append(unjudged, fmt.Sprintf("%s (bloom: %.0f false positives)", cell, bn))
				continue
			}
			judged++
			ratio := cfp / bfp
			ratios = append(ratios, ratio)
			lo, hi := rateRatioCI(cn, bn)
			ci := fmt.Sprintf("[%.3f, %.3f]", lo, hi)
			if ratio > worst {
				worst, worstCI = ratio, ci
			}
			if ratio > limit {
				misses = append(misses, fmt.Sprintf("%s: %.3f %s (cuckoo %.4f, bloom %.4f per op; %.0f and %.0f false positives)", cell, ratio, ci, cfp, bfp, cn, bn))
			}
		}
	}
	return verdict(
		fmt.Sprintf("False-positive block reads per op, cuckoo(%d) <= %.2fx bloom(%d), every shape and path", b, limit, b),
		misses, unjudged, judged, fmt.Sprintf("%d cells judged; ratios: median %.3f, highest %.3f %s (95%% interval from the counts)", judged, median(ratios), worst, worstCI))
}

// matched16 names the cuckoo configurations at bloom(16)'s false-positive
// rate: the tuned ones, then the integer budget.
func (r *Result) matched16() []string {
	var matched16 []string
	for _, t := range r.Tuned {
		if t.For == 16 {
			matched16 = append(matched16, t.Name)
		}
	}
	if m, ok := r.Matched[16]; ok {
		matched16 = append(matched16, m)
	}
	return matched16
}

// filterBytesVerdict judges policy m's filter bytes per key against
// bloom(16)'s, and its data-block reads per operation.
func (r *Result) filterBytesVerdict(m string) verdictRow {
	var misses, unjudged []string
	judged := 0
	var detail []string
	for _, s := range r.shapeNames() {
		bm, ok1 := r.db(s, m)
		bb, ok2 := r.db(s, bloomName(16))
		if !ok1 || !ok2 {
			continue
		}
		mf, mk := bm.Shape.totalFilter()
		bf, bk := bb.Shape.totalFilter()
		ratio := (float64(mf) / float64(mk)) / (float64(bf) / float64(bk))
		judged++
		detail = append(detail, fmt.Sprintf("%s %.3f", s, ratio))
		if ratio > 0.72 {
			misses = append(misses, fmt.Sprintf("%s: filter bytes per key %.3fx", s, ratio))
		}
		for _, p := range r.pathsRun() {
			bd := r.dataReadsPerOp(s, p, bloomName(16))
			md := r.dataReadsPerOp(s, p, m)
			if math.IsNaN(bd) || bd < 0.05 {
				unjudged = append(unjudged, fmt.Sprintf("%s/%s (bloom(16)'s filters pass %.4f reads per op)", s, p, bd))
				continue
			}
			judged++
			if d := md/bd - 1; math.Abs(d) > 0.05 {
				misses = append(misses, fmt.Sprintf("%s/%s: data-block reads the filters pass %.4f vs %.4f per op (%+.1f%%)", s, p, md, bd, 100*d))
			}
		}
	}
	return verdict(
		fmt.Sprintf("Filter bytes of %s (at bloom(16)'s measured rate) <= 0.72x bloom(16)'s, data-block reads the filters pass (true and false positives, counting pass) per op within 5%%", m),
		misses, unjudged, judged, "bytes ratios: "+strings.Join(detail, ", "))
}

// spreadVerdict judges cuckoo-spread's false-positive reads per absent Get
// against bloom(10)'s and bloom-spread's.
func (r *Result) spreadVerdict() verdictRow {
	var misses, unjudged []string
	judged := 0
	var detail []string
	for _, s := range []string{"steady", "burst"} {
		if !slices.Contains(r.shapeNames(), s) {
			continue
		}
		b10, bn := r.fpPerOp(s, "get-absent", bloomName(10))
		cs, _ := r.fpPerOp(s, "get-absent", "cuckoo-spread")
		bs, bsn := r.fpPerOp(s, "get-absent", "bloom-spread")
		if math.IsNaN(b10) || math.IsNaN(cs) {
			unjudged = append(unjudged, fmt.Sprintf("%s (no filter probed by bloom(10) or cuckoo-spread)", s))
			continue
		}
		if bn < minEvents {
			unjudged = append(unjudged, fmt.Sprintf("%s (bloom(10): %.0f false positives)", s, bn))
		} else {
			judged++
			detail = append(detail, fmt.Sprintf("%s: cuckoo-spread %.5f, bloom(10) %.5f, bloom-spread %.5f per Get", s, cs, b10, bs))
			if cs > 0.02*b10 {
				misses = append(misses, fmt.Sprintf("%s: cuckoo-spread %.5f > 0.02 x bloom(10) %.5f", s, cs, b10))
			}
		}
		if bsn < minEvents {
			unjudged = append(unjudged, fmt.Sprintf("%s vs bloom-spread (%.0f false positives)", s, bsn))
		} else {
			judged++
			if cs > 0.5*bs {
				misses = append(misses, fmt.Sprintf("%s: cuckoo-spread %.5f > 0.5 x bloom-spread %.5f", s, cs, bs))
			}
		}
	}
	return verdict(
		"Per-level spread at bloom(10)'s filter bytes: false-positive reads per absent Get <= 0.02x bloom(10)'s and <= 0.5x bloom-spread's (steady, burst)",
		misses, unjudged, judged, strings.Join(detail, "; "))
}

// timeVerdicts judges the time per operation of cuckoo(B) against
// bloom(B)'s, cell by cell (median of paired ratios with its sign-test
// interval): no cell measurably slower (interval entirely above 1.02), the
// median over cells at most 1.00, and on the slow device, where the saved
// false-positive reads alone predict at most 0.97, at most 0.98. A cell
// whose two databases' LSMs are not identical is not judged.
func (r *Result) timeVerdicts() []verdictRow {
	var slower, fast, unjudged []string
	var medians []float64
	fastJudged := 0
	for _, k := range r.cellKeys() {
		for _, b := range r.Config.Budgets {
			st := r.timeRatio(k, cuckooName(b), bloomName(b))
			if st.N == 0 {
				continue
			}
			cell := fmt.Sprintf("%s/%s/%s/t=%d B=%d", k.Shape, k.Regime, k.Path, k.Threads, b)
			if ok, why := r.identical(k.Shape, cuckooName(b), bloomName(b)); !ok {
				unjudged = append(unjudged, fmt.Sprintf("%s: not identical (%s)", cell, why))
				continue
			}
			medians = append(medians, st.Median)
			cell += fmt.Sprintf(": %.3f [%.3f, %.3f]", st.Median, st.Lo, st.Hi)
			if r.slowerThanTwin(k, st) {
				slower = append(slower, cell)
			}
			if pred, ok := r.savedReadsRatio(k, b); ok && k.Regime == "slow" && pred <= 0.97 {
				fastJudged++
				if st.Median > 0.98 {
					fast = append(fast, fmt.Sprintf("%s (the saved reads predict %.3f)", cell, pred))
				}
			}
		}
	}
	reps := r.Config.Reps
	note := fmt.Sprintf("%d cells, %d repetitions each", len(medians), reps)
	if reps < 10 {
		note += " (fewer than the 10 the target asks for)"
	}
	med := median(medians)
	var medMiss []string
	if med > 1.00 {
		medMiss = append(medMiss, fmt.Sprintf("median %.3f", med))
	}
	return []verdictRow{
		verdict("Time per op: no cell whose 95% interval of cuckoo(B)/bloom(B) lies entirely above 1.02 and above the A/A twin's interval (bloom(10)-twin/bloom(10)) in the same cell (every shape, regime, path, thread count)",
			slower, unjudged, len(medians), note),
		verdict("Time per op: the median of the cells' cuckoo(B)/bloom(B) medians <= 1.00",
			medMiss, nil, len(medians), fmt.Sprintf("median %.3f over %d cells", med, len(medians))),
		verdict("Time per op <= 0.98x bloom on the slow device where the saved false-positive reads alone predict <= 0.97",
			fast, nil, fastJudged, fmt.Sprintf("%d cells", fastJudged)),
	}
}

// savedReadsRatio is the time ratio cuckoo(b)'s saved false-positive reads
// alone would give in cell k: bloom(b)'s time per operation less the saved
// reads at the measured device delay each (their read and decoding cost
// left out), over bloom(b)'s time.
func (r *Result) savedReadsRatio(k cellKey, b int) (float64, bool) {
	bfp, _ := r.fpPerOp(k.Shape, k.Path, bloomName(b))
	cfp, _ := r.fpPerOp(k.Shape, k.Path, cuckooName(b))
	cell := r.Cells[k]
	if cell == nil || cell[bloomName(b)] == nil || math.IsNaN(bfp) || math.IsNaN(cfp) {
		return 0, false
	}
	ns := median(cell[bloomName(b)].NsPerOp)
	if !(ns > 0) {
		return 0, false
	}
	return 1 - (bfp-cfp)*float64(r.DelayMeasured)/ns, true
}

// loadVerdict judges the organic loading of cuckoo(B) against bloom(B)'s:
// the CPU time per sstable byte written, median of the paired ratios of
// every lockstep round on every measured shape; wall and CPU time beside it.
func (r *Result) loadVerdict() verdictRow {
	var misses, detail []string
	judged := 0
	for _, b := range r.Config.Budgets {
		var parts []string
		var all [3][]float64
		for _, s := range r.Shapes {
			for mi, m := range loadMetrics {
				all[mi] = append(all[mi], loadRatios(s.Loads, cuckooName(b), bloomName(b), m)...)
			}
		}
		if len(all[2]) == 0 {
			continue
		}
		judged++
		for mi, m := range loadMetrics {
			parts = append(parts, fmt.Sprintf("%s %.3f", m.Name, median(all[mi])))
		}
		med := median(all[2])
		detail = append(detail, fmt.Sprintf("B=%d: %d paired loads, medians: %s", b, len(all[2]), strings.Join(parts, ", ")))
		if med > 1.03 || len(all[2]) < 3 {
			misses = append(misses, fmt.Sprintf("B=%d: CPU time per byte written %.3f over %d paired loads", b, med, len(all[2])))
		}
	}
	return verdict("Loading: cuckoo(B)/bloom(B) CPU time per sstable byte written <= 1.03, median over >= 3 lockstep loads",
		misses, nil, judged, strings.Join(detail, "; "))
}

// lostVerdict judges that every present read found its value and no absent
// read found one.
func (r *Result) lostVerdict() verdictRow {
	var misses []string
	if r.Lost > 0 || r.Phantom > 0 {
		misses = append(misses, fmt.Sprintf("%d present keys not read back, %d absent keys found", r.Lost, r.Phantom))
	}
	return verdict("Zero keys lost: every present read answers with its value", misses, nil, 1, "")
}
