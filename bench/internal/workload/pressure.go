package workload

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// The pressure regimes: one block cache per database of a fixed share of
// the shape's tables without their filter blocks (regimeSpec.Pressure, the
// same bytes for every policy), shared by filter, index and data blocks
// with no headroom for filters, and the slow device's delay on every
// sstable read. Pebble accounts an open database's memtables in its block
// cache (Cache.Reserve: 768 KiB here, measured at each opening), so the
// cache is that reservation plus the share, and the blocks get the share.
// How the blocks are counted, per operation:
//
//   - Block-cache misses by kind: the ReadAt calls on .sst files, each
//     classified by the block at its offset (ioFS, sstblock.Kinds). Pebble
//     reads a block from the file only when the block cache misses, one
//     ReadAt per block at the block's offset, so the reads of data, filter,
//     index and value blocks are the misses by kind
//     (TestPressureCountsMisses checks that they add up to the cache's own
//     miss count). Each waits the device delay.
//   - Block lookups by kind: Pebble v2.1.7 counts block-cache lookups
//     (db.Metrics().BlockCache hits and misses, per database here: each has
//     its own cache) but not by kind. A filter probe (db.Metrics().Filter
//     hits plus misses) looks its table's filter block up in the cache
//     once, so filter lookups are the probes, and the cache's lookups less
//     the probes are the index, data and value blocks together.

// pressureCache is the block cache of pressure regime g in shape s, less
// the memtables' reservation: its share of the smallest unfiltered bytes
// among the shape's databases, as openRegime gives it to the blocks.
func (r *Result) pressureCache(g regimeSpec, shape string) int64 {
	var u int64
	for _, s := range r.Shapes {
		if s.Spec.Name != shape {
			continue
		}
		for i, d := range s.DBs {
			if x := unfilteredBytes(d.Shape); i == 0 || x < u {
				u = x
			}
		}
	}
	return cacheSize(g, lsmShape{}, 0, u)
}

// pressureRegimes are the pressure regimes that ran.
func (r *Result) pressureRegimes() []regimeSpec {
	var out []regimeSpec
	for _, g := range allRegimes {
		if g.Pressure == 0 {
			continue
		}
		for k := range r.Cells {
			if k.Regime == g.Name {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// slowerThanTwin is the twin rule: the time ratio st of cell k is judged
// slower only if its interval lies above 1.02 and above the A/A twin's
// interval in the same cell (twin/bloom(10)); where the twin was not timed,
// above 1.02 alone.
func (r *Result) slowerThanTwin(k cellKey, st ratioStat) bool {
	if !(st.Lo > 1.02) {
		return false
	}
	tw := r.timeRatio(k, twinName, planBase)
	return tw.N == 0 || st.Lo > tw.Hi
}

// twinCell is the A/A twin's ratio to bloom(10) in cell k, for the time
// tables.
func (r *Result) twinCell(k cellKey) string {
	return r.timeCell(k, twinName, planBase)
}

// writePressure writes the pressure regimes: per shape the cache against
// the filter and index bytes each policy's lookups load, then per regime
// and path every policy's time, its ratios to bloom(10) (with the twin
// rule) and to bloom(10)-noL6, and its block lookups and cache misses by
// kind per operation.
func (r *Result) writePressure(w func(string, ...any)) {
	regs := r.pressureRegimes()
	if len(regs) == 0 {
		return
	}
	r.writePressureIntro(w, regs)
	r.writePressureBytes(w, regs)
	r.writeCachePlans(w)
	r.writePressureShort(w)
	r.writePressureCells(w, regs)
}

// writePressureIntro writes the section's heading and how it counts.
func (r *Result) writePressureIntro(w func(string, ...any), regs []regimeSpec) {
	w("\n## Memory pressure\n\n")
	w("One block cache per database of a fixed share of the shape's tables without their filter blocks (the same bytes for every policy), shared by filter, index and data blocks with no headroom for filters (the cache is the share plus the %s an open database's memtables reserve in it, so that the blocks get the share):", mib(float64(r.MemtableReserve)))
	for _, g := range regs {
		w(" %s = %.0f%%;", g.Name, 100*g.Pressure)
	}
	w(" every sstable read waits the slow device's %s (measured %s per read). Warmed by one untimed pass of every path; the timed runs read keys no earlier run read.\n\n", r.Config.Delay, r.DelayMeasured.Round(100*time.Nanosecond))
	w("Counted per operation. Cache misses by kind: the reads of the file system (ReadAt on .sst files), each classified by the block at its offset; Pebble reads a block from the file only when the block cache misses, one read per block, so these are the misses, and each waits the device delay (f / i / d: filter, index, data; v+o: value blocks and the rest, e.g. a table's metaindex). Lookups: block-cache lookups (the database's own cache, db.Metrics().BlockCache hits + misses); Pebble v2.1.7 does not count them by kind, but a filter probe (db.Metrics().Filter) looks its filter block up once, so f = filter probes and i+d = the other lookups (index, data and value blocks). Device µs: the misses times the delay as calibrated at the start of the run (%s per read), the time per operation the model says the device takes; waited µs: the time the reads of the cell actually spent in the delay (a nanosleep overshoots by a varying amount on a busy machine); both divided by the number of goroutines, whose waits overlap; device share: waited µs over the measured time (the rest is the CPU's). Time: median over repetitions; ×bloom(10) and ×noL6 (CockroachDB's bloom(10)-noL6): medians of paired ratios [sign-test interval]; the twin's row is the A/A noise floor of its cell, and \"slower\" marks a ratio to bloom(10) whose interval lies above 1.02 and above the twin's.\n\n", r.DelayMeasured.Round(100*time.Nanosecond))
}

// writePressureBytes writes, per shape and regime, the cache against the
// filter and index bytes each policy's lookups load.
func (r *Result) writePressureBytes(w func(string, ...any), regs []regimeSpec) {
	w("| shape | regime | cache | index bytes | policy | filter bytes L0-L5 | ×cache | filter bytes L0-L6 | ×cache |\n|---|---|---:|---:|---|---:|---:|---:|---:|\n")
	for _, s := range r.Shapes {
		for _, g := range regs {
			if !r.ranRegime(s.Spec.Name, g.Name) {
				continue
			}
			c := r.pressureCache(g, s.Spec.Name)
			for _, d := range s.DBs {
				if !slices.Contains(g.Policies, d.Cfg.Name) {
					continue
				}
				up, all := d.Shape.loadedFilter(false), d.Shape.loadedFilter(true)
				w("| %s | %s | %s | %s | %s | %s | %.2f | %s | %.2f |\n", s.Spec.Name, g.Name, mib(float64(c)), mib(float64(d.Shape.totalIndex())), d.Cfg.Name,
					mib(float64(up)), float64(up)/float64(c), mib(float64(all)), float64(all)/float64(c))
			}
		}
	}
}

// writePressureShort writes the short table: every policy's time as a
// ratio to bloom(10)-noL6, on the first thread count.
func (r *Result) writePressureShort(w func(string, ...any)) {
	w("\nIn short: time per operation as a ratio to CockroachDB's configuration (bloom(10)-noL6), median of paired ratios, on %d goroutine(s); whatif -cache: the plan it recommends for the row's regime (whatif-<regime>; \"budget 0\" where that is bloom(10)-noL6 itself); twin: bloom(10)-twin/bloom(10) [interval], the noise floor of the row.\n\n", r.Config.Threads[0])
	var short []string
	for _, n := range pressurePolicies {
		if n != planBloomNoL6 {
			short = append(short, n)
		}
	}
	tableHead(w, "shape | regime | path | bloom(10)-noL6 µs", "---|---|---|---:|", append(slices.Clone(short), "whatif -cache", "twin"), "---:|")
	for _, k := range r.cellKeys() {
		if !isPressure(k.Regime) || k.Threads != r.Config.Threads[0] {
			continue
		}
		us := math.NaN()
		if cs := r.Cells[k][planBloomNoL6]; cs != nil {
			us = median(cs.NsPerOp) / 1e3
		}
		w("| %s | %s | %s | %s |", k.Shape, k.Regime, k.Path, f3(us))
		for _, n := range short {
			w(" %s |", f3(r.timeRatio(k, n, planBloomNoL6).Median))
		}
		w(" %s | %s |\n", r.cachePlanCell(k), r.twinCell(k))
	}
	w("\n")
}

// writePressureCells writes the full table: a row per pressure cell and
// policy, the twin included.
func (r *Result) writePressureCells(w func(string, ...any), regs []regimeSpec) {
	w("| shape | regime | path | threads | policy | µs/op | ×bloom(10) | ×noL6 | lookups f / i+d | hit rate | misses f / i / d / v+o | device µs | waited µs | device share |\n|---|---|---|---:|---|---:|---|---|---|---:|---|---:|---:|---:|\n")
	for _, k := range r.cellKeys() {
		i := slices.IndexFunc(regs, func(g regimeSpec) bool { return g.Name == k.Regime })
		if i < 0 {
			continue
		}
		names := append(slices.Clone(regs[i].Policies), twinName)
		for _, n := range names {
			if cs := r.Cells[k][n]; cs != nil && cs.Ops > 0 {
				r.writePressureRow(w, k, n, cs)
			}
		}
	}
}

// writePressureRow writes policy n's row of cell k in the full table.
func (r *Result) writePressureRow(w func(string, ...any), k cellKey, n string, cs *cellStats) {
	o := float64(cs.Ops)
	us := median(cs.NsPerOp) / 1e3
	vsBase := "-"
	if n != planBase {
		vsBase = r.timeCell(k, n, planBase)
		if st := r.timeRatio(k, n, planBase); st.N > 0 && n != twinName && r.slowerThanTwin(k, st) {
			vsBase += " slower"
		}
	}
	vsNoL6 := "-"
	if n != planBloomNoL6 {
		vsNoL6 = r.timeCell(k, n, planBloomNoL6)
	}
	fl := float64(cs.Hits+cs.Misses) / o
	lookups := float64(cs.Cache.Hits+cs.Cache.Misses) / o
	hit := math.NaN()
	if cs.Cache.Hits+cs.Cache.Misses > 0 {
		hit = float64(cs.Cache.Hits) / float64(cs.Cache.Hits+cs.Cache.Misses)
	}
	rd := cs.IO.Reads
	var all int64
	for _, x := range rd {
		all += x
	}
	// The waits of concurrent operations overlap: on t goroutines
	// the device takes a t-th of its waits' sum per operation.
	dev := float64(all) / o * float64(r.DelayMeasured) / 1e3 / float64(k.Threads)
	waited := float64(cs.IO.Waited) / o / 1e3 / float64(k.Threads)
	w("| %s | %s | %s | %d | %s | %.1f | %s | %s | %.2f / %.2f | %s | %.2f / %.2f / %.2f / %.2f | %.1f | %.1f | %s |\n",
		k.Shape, k.Regime, k.Path, k.Threads, n, us, vsBase, vsNoL6, fl, lookups-fl, f3(hit),
		float64(rd[kindFilter])/o, float64(rd[kindIndex])/o, float64(rd[kindData])/o, float64(rd[kindValue]+rd[kindOther])/o,
		dev, waited, f3(waited/us))
}

// isPressure says whether the regime named name is a pressure regime.
func isPressure(name string) bool {
	return slices.ContainsFunc(allRegimes, func(g regimeSpec) bool { return g.Name == name && g.Pressure > 0 })
}

// ranRegime says whether regime g ran on shape s.
func (r *Result) ranRegime(s, g string) bool {
	for k := range r.Cells {
		if k.Shape == s && k.Regime == g {
			return true
		}
	}
	return false
}

// twinVerdict judges the A/A twin: the median of twin/bloom(10) within
// [0.98, 1.02] in every timed cell.
func (r *Result) twinVerdict() verdictRow {
	var misses []string
	judged := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, k := range r.cellKeys() {
		st := r.timeRatio(k, twinName, planBase)
		if st.N == 0 {
			continue
		}
		judged++
		lo, hi = min(lo, st.Median), max(hi, st.Median)
		if st.Median < 0.98 || st.Median > 1.02 {
			misses = append(misses, fmt.Sprintf("%s/%s/%s/t=%d: %.3f [%.3f, %.3f]", k.Shape, k.Regime, k.Path, k.Threads, st.Median, st.Lo, st.Hi))
		}
	}
	detail := fmt.Sprintf("%d cells", judged)
	if judged > 0 {
		detail += fmt.Sprintf("; medians from %.3f to %.3f", lo, hi)
	}
	return verdict("A/A twin: bloom(10)-twin/bloom(10), two identical databases timed side by side, median within [0.98, 1.02] in every timed cell", misses, nil, judged, detail)
}

// pressurePairs are plan.Fit's plans and the best bloom-only plan at the
// same ceiling, compared in the pressure regimes.
var pressurePairs = [][2]string{
	{planForGet, planBloomOnlyGet}, {planForNoL6Bytes, planBloomOnlyNoL6},
	{planForL6, planBloomOnlyL6}, {planForL6NoL6Bytes, planBloomOnlyL6NoL6},
}

// fitsCache says whether policy x's filters on every level and its
// indexes fit the block cache of pressure regime g in shape s.
func (r *Result) fitsCache(s string, g regimeSpec, x string) bool {
	d, ok := r.db(s, x)
	return ok && int64(d.Shape.loadedFilter(true)+d.Shape.totalIndex()) <= r.pressureCache(g, s)
}

// pressureVerdicts judges the pressure regimes: the device model, the L6
// plans and the plan whatif -cache recommends against CockroachDB's
// configuration at the smaller cache, and plan.Fit's plans against the best
// bloom-only plans at the same bytes.
func (r *Result) pressureVerdicts() []verdictRow {
	regs := r.pressureRegimes()
	if len(regs) == 0 {
		return nil
	}
	small := regs[0]
	for _, g := range regs {
		if g.Pressure < small.Pressure {
			small = g
		}
	}
	return []verdictRow{r.deviceModelVerdict(), r.l6PlanVerdict(small), r.cachePlanVerdict(small), r.bloomOnlyVerdict()}
}

// deviceModelVerdict judges the device model: the misses by kind times the
// device delay predict the time.
func (r *Result) deviceModelVerdict() verdictRow {
	var model planJudge
	var shares []float64
	for _, k := range r.cellKeys() {
		if !isPressure(k.Regime) || k.Threads != 1 {
			continue
		}
		for n, cs := range r.Cells[k] {
			if cs.Ops == 0 || len(cs.NsPerOp) == 0 {
				continue
			}
			// The misses times the delay each actually waited.
			pred := float64(cs.IO.Waited) / float64(cs.Ops)
			share := pred / median(cs.NsPerOp)
			shares = append(shares, share)
			model.judged++
			if math.Abs(share-1) > 0.10 {
				model.misses = append(model.misses, fmt.Sprintf("%s/%s/%s %s: predicted %.1f µs, measured %.1f µs (%.3f)", k.Shape, k.Regime, k.Path, n, pred/1e3, median(cs.NsPerOp)/1e3, share))
			}
		}
	}
	slices.Sort(model.misses)
	if len(shares) > 0 {
		model.detail = append(model.detail, fmt.Sprintf("%d cells of one goroutine; predicted/measured: median %.3f, from %.3f to %.3f", len(shares), median(shares), slices.Min(shares), slices.Max(shares)))
	}
	return model.verdict("Memory pressure: the block-cache misses per operation by kind times the device delay they waited predict the time on the slow device within 10% (every policy and path, one goroutine)")
}

// l6PlanVerdict judges, at the smaller cache, an L6 plan whose filters and
// indexes fit it against CockroachDB's configuration.
func (r *Result) l6PlanVerdict(small regimeSpec) verdictRow {
	var l6 planJudge
	for _, s := range r.shapeNames() {
		if !r.ranRegime(s, small.Name) {
			continue
		}
		fit := ""
		for _, x := range []string{planForL6, planForL6NoL6Bytes} {
			if r.fitsCache(s, small, x) {
				fit = x
				break
			}
		}
		if fit == "" {
			l6.unjudged = append(l6.unjudged, fmt.Sprintf("%s/%s: neither planfor-l6's nor planfor-l6-noL6bytes's filters and indexes fit the %s cache", s, small.Name, mib(float64(r.pressureCache(small, s)))))
			continue
		}
		for _, p := range []string{"seek-absent-l6", "get-present", "seek-mix-l6"} {
			k := cellKey{Shape: s, Regime: small.Name, Path: p, Threads: r.Config.Threads[0]}
			st := r.timeRatio(k, fit, planBloomNoL6)
			if st.N == 0 {
				continue
			}
			l6.judged++
			d := fmt.Sprintf("%s/%s/%s %s/bloom(10)-noL6 %.3f [%.3f, %.3f]", s, small.Name, p, fit, st.Median, st.Lo, st.Hi)
			l6.detail = append(l6.detail, d)
			if p == "seek-absent-l6" && st.Median > 0.5 || p != "seek-absent-l6" && r.slowerThanTwin(k, st) {
				l6.misses = append(l6.misses, d)
			}
		}
	}
	return l6.verdict(fmt.Sprintf("Memory pressure, %s: an L6 plan whose filters and indexes fit the cache (planfor-l6, else planfor-l6-noL6bytes) takes <= 0.5x the time of bloom(10)-noL6 on absent L6-filtered lookups and is not slower on present Gets and the 50/50 L6-filtered lookups (twin rule)", small.Name))
}

// bloomOnlyVerdict judges plan.Fit's plans against the best bloom-only plan
// at the same bytes.
func (r *Result) bloomOnlyVerdict() verdictRow {
	var bo planJudge
	for _, k := range r.cellKeys() {
		if !isPressure(k.Regime) {
			continue
		}
		for _, pr := range pressurePairs {
			st := r.timeRatio(k, pr[0], pr[1])
			if st.N == 0 {
				continue
			}
			bo.judged++
			if r.slowerThanTwin(k, st) {
				bo.misses = append(bo.misses, fmt.Sprintf("%s/%s/%s/t=%d %s/%s %.3f [%.3f, %.3f]", k.Shape, k.Regime, k.Path, k.Threads, pr[0], pr[1], st.Median, st.Lo, st.Hi))
			}
		}
	}
	bo.detail = append(bo.detail, fmt.Sprintf("%d cells", bo.judged))
	return bo.verdict("Memory pressure: plan.Fit's plans never slower than the best bloom-only plan at the same ceiling (planfor-get, planfor-noL6bytes, planfor-l6, planfor-l6-noL6bytes against their bloomonly-*; twin rule)")
}
