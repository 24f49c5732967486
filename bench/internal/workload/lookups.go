package workload

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// The lookups that read L6 filters (package lookup) against db.Get under
// CockroachDB's configuration (bloom(10)-noL6), in the slow and the
// pressure regimes: each lookup path reads the keys its db.Get path reads
// (getPathOf), in its own cell of the same repetitions, so a time ratio
// pairs the two cells' medians repetition by repetition (crossRatio), and
// the twin rule takes the A/A twin's interval of both cells.

// lookupShapes4 are the shapes of the targets on pressure4: the
// blockstore's and the state database's Has before a write, most of whose
// keys are absent.
var lookupShapes4 = []string{"blockstore", "state"}

// getPathOf is the db.Get path whose keys lookup path p reads.
func getPathOf(p string) string { return "get-" + strings.TrimPrefix(p, "lookup-") }

// lookupSubjects are the policies the lookup targets judge, each on rows
// of its own: cuckoo(10) on every level, and the plan whatif -cache
// recommends for the regime's cache (plan.Fit's for L6-filtered lookups).
var lookupSubjects = []string{cuckooName(10), cachePlanPrefix + "<regime>"}

// lookupPolicy is the database of subject in shape s and regime g, or ""
// and why it has none: whatif -cache's plan has none where the filter plans
// were not built. At budget 0 whatif -cache recommends CockroachDB's
// configuration, bloom(10)-noL6 itself, whose lookups read no L6 filter
// (what a live plan given the cache writes on L6 there): its lookups are
// judged against its own db.Get.
func (r *Result) lookupPolicy(subject, s, g string) (string, string) {
	if subject == cuckooName(10) {
		return subject, ""
	}
	cp, ok := r.cachePlan(s, g)
	if !ok {
		return "", "no whatif -cache recommendation (the filter plans were not built)"
	}
	if _, ok := r.db(s, cp.Policy); !ok {
		return "", "no database"
	}
	return cp.Policy, ""
}

// subjectText names subject in a target's text for regime g.
func subjectText(subject, g string) string {
	if subject == cuckooName(10) {
		return "cuckoo(10) on every level"
	}
	return fmt.Sprintf("the plan whatif -cache recommends for the cache (%s)", cachePlanName(g))
}

// crossRatio is the median of paired time ratios of policy x in cell k over
// policy base in cell kb (the same repetitions of another path), with its
// sign-test interval.
func (r *Result) crossRatio(k cellKey, x string, kb cellKey, base string) ratioStat {
	a, b := r.Cells[k][x], r.Cells[kb][base]
	if a == nil || b == nil {
		return ratioStat{Median: math.NaN()}
	}
	return medianCI(pairedRatios(a.NsPerOp, b.NsPerOp))
}

// crossSlower is the twin rule across two cells: st is judged slower only
// if its interval lies above 1.02 and above the A/A twin's interval in
// both cells (where the twin was timed).
func (r *Result) crossSlower(k, kb cellKey, st ratioStat) bool {
	if !(st.Lo > 1.02) {
		return false
	}
	for _, c := range []cellKey{k, kb} {
		if tw := r.timeRatio(c, twinName, planBase); tw.N > 0 && st.Lo <= tw.Hi {
			return false
		}
	}
	return true
}

// lookupRegimes are the regimes that ran a lookup path.
func (r *Result) lookupRegimes() []string {
	var out []string
	for _, g := range allRegimes {
		for k := range r.Cells {
			if k.Regime == g.Name && slices.Contains(lookupPaths, k.Path) {
				out = append(out, g.Name)
				break
			}
		}
	}
	return out
}

// lookupVerdicts judges the lookups issue's targets for each subject: on
// pressure4 in the blockstore and state shapes, the absent lookup's
// data-block reads and time and the present lookup's time against db.Get's
// under bloom(10)-noL6; on pressure1, no lookup slower than db.Get (twin
// rule).
func (r *Result) lookupVerdicts() []verdictRow {
	regs := r.lookupRegimes()
	var out []verdictRow
	for _, sub := range lookupSubjects {
		if slices.Contains(regs, "pressure4") {
			var reads, absent, present planJudge
			for _, s := range lookupShapes4 {
				if !r.ranRegime(s, "pressure4") {
					reads.unjudged = append(reads.unjudged, s+"/pressure4: not run")
					continue
				}
				x, why := r.lookupPolicy(sub, s, "pressure4")
				if x == "" {
					for _, j := range []*planJudge{&reads, &absent, &present} {
						j.unjudged = append(j.unjudged, s+"/pressure4: "+why)
					}
					continue
				}
				r.judgeLookupReads(&reads, s, "pressure4", x, 0.02)
				r.judgeLookupTime(&absent, s, "pressure4", "lookup-absent", x, 0.10)
				r.judgeLookupTime(&present, s, "pressure4", "lookup-present", x, 1.03)
			}
			what := subjectText(sub, "pressure4")
			out = append(out,
				reads.verdict("Lookups, pressure4, blockstore and state, under "+what+": data-block reads per absent lookup through lookup.Has (lookup-absent) <= 0.02x those of an absent db.Get (get-absent) under bloom(10)-noL6 (95% interval from the counts)"),
				absent.verdict("Lookups, pressure4, blockstore and state, under "+what+": time per absent lookup (lookup-absent) <= 0.10x an absent db.Get's under bloom(10)-noL6 (median of paired ratios)"),
				present.verdict("Lookups, pressure4, blockstore and state, under "+what+": time per present lookup through lookup.Get (lookup-present, value checked) <= 1.03x a present db.Get's under bloom(10)-noL6 (median of paired ratios)"))
		}
		if slices.Contains(regs, "pressure1") {
			var j planJudge
			for _, s := range r.shapeNames() {
				if !r.ranRegime(s, "pressure1") {
					continue
				}
				x, why := r.lookupPolicy(sub, s, "pressure1")
				if x == "" {
					j.unjudged = append(j.unjudged, s+"/pressure1: "+why)
					continue
				}
				for _, p := range lookupPaths {
					r.judgeLookupSlower(&j, s, "pressure1", p, x)
				}
			}
			out = append(out, j.verdict("Lookups, pressure1 (filters and indexes do not fit), under "+subjectText(sub, "pressure1")+": lookup.Has and lookup.Get (absent, present and 50/50 keys) never slower than db.Get of the same keys under bloom(10)-noL6 (twin rule, both cells' twins), every shape"))
		}
	}
	return out
}

// judgeLookupReads judges x's data-block reads per absent lookup in shape s
// and regime g against limit times bloom(10)-noL6's per absent Get (every
// thread count together).
func (r *Result) judgeLookupReads(j *planJudge, s, g, x string, limit float64) {
	cell := fmt.Sprintf("%s/%s", s, g)
	if ok, why := r.identical(s, x, planBloomNoL6); !ok {
		j.unjudged = append(j.unjudged, fmt.Sprintf("%s: %s not identical to bloom(10)-noL6 (%s)", cell, x, why))
		return
	}
	lc, gc := r.counts(s, "lookup-absent", g, x), r.counts(s, "get-absent", g, planBloomNoL6)
	if lc.Ops == 0 || gc.Ops == 0 {
		j.unjudged = append(j.unjudged, cell+": not timed")
		return
	}
	ld, gd := float64(lc.IO.Reads[kindData]), float64(gc.IO.Reads[kindData])
	if gd < minEvents {
		j.unjudged = append(j.unjudged, fmt.Sprintf("%s: db.Get read %.0f data blocks", cell, gd))
		return
	}
	j.judged++
	// The two paths ran different numbers of operations: the interval of the
	// ratio of counts, scaled to the ratio of rates.
	scale := float64(gc.Ops) / float64(lc.Ops)
	lo, hi := rateRatioCI(ld, gd)
	ratio := ld / gd * scale
	d := fmt.Sprintf("%s %s %.4f [%.4f, %.4f] (%.4f vs %.4f data blocks per op; %.0f and %.0f reads)", cell, x, ratio, lo*scale, hi*scale,
		ld/float64(lc.Ops), gd/float64(gc.Ops), ld, gd)
	j.detail = append(j.detail, d)
	if ratio > limit {
		j.misses = append(j.misses, d)
	}
}

// lookupCells are the cells of lookup path p and of its db.Get path in
// shape s and regime g, one pair per thread count.
func (r *Result) lookupCells(s, g, p string) [][2]cellKey {
	var out [][2]cellKey
	for _, k := range r.cellKeys() {
		if k.Shape == s && k.Regime == g && k.Path == p {
			kb := k
			kb.Path = getPathOf(p)
			out = append(out, [2]cellKey{k, kb})
		}
	}
	return out
}

// judgeLookupTime judges the median time ratio of x's lookups on path p to
// bloom(10)-noL6's db.Get of the same keys against limit.
func (r *Result) judgeLookupTime(j *planJudge, s, g, p, x string, limit float64) {
	r.eachLookupCell(j, s, g, p, x, func(k, kb cellKey, st ratioStat, d string) {
		if st.Median > limit {
			j.misses = append(j.misses, d)
		}
	})
}

// judgeLookupSlower judges that x's lookups on path p are not slower than
// bloom(10)-noL6's db.Get of the same keys (the twin rule of both cells).
func (r *Result) judgeLookupSlower(j *planJudge, s, g, p, x string) {
	r.eachLookupCell(j, s, g, p, x, func(k, kb cellKey, st ratioStat, d string) {
		if r.crossSlower(k, kb, st) {
			j.misses = append(j.misses, d)
		}
	})
}

// eachLookupCell calls judge for every thread count of lookup path p in
// shape s and regime g with x's time ratio to bloom(10)-noL6's db.Get and
// its description, counting it judged; cells not timed or not on identical
// LSMs are noted unjudged.
func (r *Result) eachLookupCell(j *planJudge, s, g, p, x string, judge func(k, kb cellKey, st ratioStat, d string)) {
	cells := r.lookupCells(s, g, p)
	if len(cells) == 0 {
		j.unjudged = append(j.unjudged, fmt.Sprintf("%s/%s/%s: not run", s, g, p))
		return
	}
	for _, c := range cells {
		k, kb := c[0], c[1]
		cell := fmt.Sprintf("%s/%s/%s/t=%d %s", s, g, p, k.Threads, x)
		st := r.crossRatio(k, x, kb, planBloomNoL6)
		if st.N == 0 {
			j.unjudged = append(j.unjudged, cell+": not timed")
			continue
		}
		if ok, why := r.identical(s, x, planBloomNoL6); !ok {
			j.unjudged = append(j.unjudged, fmt.Sprintf("%s: not identical to bloom(10)-noL6 (%s)", cell, why))
			continue
		}
		j.judged++
		d := fmt.Sprintf("%s/%s under bloom(10)-noL6 %.3f [%.3f, %.3f] (%.1f vs %.1f µs per op; twins %s and %s)", cell, kb.Path, st.Median, st.Lo, st.Hi,
			median(r.Cells[k][x].NsPerOp)/1e3, median(r.Cells[kb][planBloomNoL6].NsPerOp)/1e3, r.twinCell(k), r.twinCell(kb))
		j.detail = append(j.detail, d)
		judge(k, kb, st, d)
	}
}

// lookupRowPolicies are the policies the lookups section shows on the
// lookup paths of regime g, where timed: CockroachDB's configuration
// (no L6 filter: the lookup reads what db.Get reads), bloom(10) and
// cuckoo(10) on every level, and the plans for L6-filtered lookups.
func lookupRowPolicies(g string) []string {
	return []string{planBloomNoL6, planBase, cuckooName(10), planProgressive, planForL6, planForL6NoL6Bytes, cachePlanName(g)}
}

// writeLookups writes the lookups section: per shape, regime, key mix and
// thread count, db.Get under bloom(10)-noL6, then the lookups of several
// policies, with their time against that Get and their block reads by kind.
func (r *Result) writeLookups(w func(string, ...any)) {
	regs := r.lookupRegimes()
	if len(regs) == 0 {
		return
	}
	w("\n## Lookups through L6 filters\n\n")
	w("Package lookup's point lookups (db.Get's contract through a new iterator with UseL6Filters per key, with the shape's comparer): lookup-absent asks lookup.Has of absent keys; lookup-present and lookup-mix (50/50) call lookup.Get and check every present key's value, as the get paths do. Each reads the keys its db.Get path reads (get-absent, get-present, get-mix; versioned keys in the MVCC shape), in its own cell of the same repetitions. Each row: µs/op, the median over repetitions; ×Get: the policy's lookup time over db.Get's under bloom(10)-noL6 (CockroachDB's configuration) in the same regime, median of the ratios paired by repetition [sign-test interval]; \"slower\" where the interval lies above 1.02 and above the A/A twin's interval (bloom(10)-twin/bloom(10)) in both cells; reads: file reads per operation by block kind (block-cache misses; d / i / f / v+o: data, index, filter, value blocks and the rest). The targets judge cuckoo(10) and, in each pressure regime, the plan whatif -cache recommends for its cache (whatif-<regime>, where its budget is above 0).\n\n")
	w("| shape | regime | keys | threads | path | policy | µs/op | ×Get (bloom(10)-noL6) | reads d / i / f / v+o | twin of the cell |\n|---|---|---|---:|---|---|---:|---|---|---|\n")
	for _, s := range r.shapeNames() {
		for _, g := range regs {
			for _, p := range lookupPaths {
				for _, c := range r.lookupCells(s, g, p) {
					k, kb := c[0], c[1]
					keys := strings.TrimPrefix(p, "lookup-")
					if cs := r.Cells[kb][planBloomNoL6]; cs != nil {
						w("| %s | %s | %s | %d | %s | %s | %.1f | - | %s | %s |\n", s, g, keys, k.Threads, kb.Path, planBloomNoL6, median(cs.NsPerOp)/1e3, readsByKind(cs), r.twinCell(kb))
					}
					for _, x := range lookupRowPolicies(g) {
						cs := r.Cells[k][x]
						if cs == nil || cs.Ops == 0 {
							continue
						}
						ratio := "-"
						if st := r.crossRatio(k, x, kb, planBloomNoL6); st.N > 0 {
							ratio = ratioCell(st)
							if ok, _ := r.identical(s, x, planBloomNoL6); !ok {
								ratio = "not identical"
							} else if r.crossSlower(k, kb, st) {
								ratio += " slower"
							}
						}
						w("| %s | %s | %s | %d | %s | %s | %.1f | %s | %s | %s |\n", s, g, keys, k.Threads, p, x, median(cs.NsPerOp)/1e3, ratio, readsByKind(cs), r.twinCell(k))
					}
				}
			}
		}
	}
	w("\n%s\n", dashNote)
}

// readsByKind is a cell's file reads per operation: data / index / filter /
// value and other.
func readsByKind(cs *cellStats) string {
	o := float64(cs.Ops)
	rd := cs.IO.Reads
	return fmt.Sprintf("%.3f / %.3f / %.3f / %.3f", float64(rd[kindData])/o, float64(rd[kindIndex])/o, float64(rd[kindFilter])/o, float64(rd[kindValue]+rd[kindOther])/o)
}
