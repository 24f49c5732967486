package workload

import (
	"fmt"
	"math"
	"strings"
)

// planJudge collects one filter-plan target's cells.
type planJudge struct {
	misses, unjudged, detail []string
	judged                   int
}

func (j *planJudge) verdict(target string) verdictRow {
	return verdict(target, j.misses, j.unjudged, j.judged, strings.Join(j.detail, "; "))
}

// fp judges x's false-positive reads per operation on path against limit
// times base's, in every shape (counting pass; 95% interval from the
// counts).
func (j *planJudge) fp(r *Result, x, base, path string, limit float64) {
	for _, s := range r.shapeNames() {
		bfp, bn := r.fpPerOp(s, path, base)
		xfp, xn := r.fpPerOp(s, path, x)
		cell := fmt.Sprintf("%s/%s", s, path)
		if math.IsNaN(bfp) || math.IsNaN(xfp) || bn < minEvents {
			j.unjudged = append(j.unjudged, fmt.Sprintf("%s (%s: %.0f false positives)", cell, base, bn))
			continue
		}
		j.judged++
		lo, hi := rateRatioCI(xn, bn)
		ratio := xfp / bfp
		d := fmt.Sprintf("%s %.3f [%.3f, %.3f] (%.5f vs %.5f per op; %.0f and %.0f false positives)", cell, ratio, lo, hi, xfp, bfp, xn, bn)
		j.detail = append(j.detail, d)
		if ratio > limit {
			j.misses = append(j.misses, d)
		}
	}
}

// bytes judges x's filter bytes, on the same tables, against limit times
// base's, in every shape.
func (j *planJudge) bytes(r *Result, x, base string, limit float64) {
	for _, s := range r.shapeNames() {
		ratio := r.filterRatio(s, x, base)
		if math.IsNaN(ratio) {
			j.unjudged = append(j.unjudged, s+" (a database is missing)")
			continue
		}
		j.judged++
		d := fmt.Sprintf("%s bytes %.3f", s, ratio)
		j.detail = append(j.detail, d)
		if ratio > limit {
			j.misses = append(j.misses, d)
		}
	}
}

// time judges the median of x's paired time ratios to base in shape s,
// regime g and path p (every thread count) against limit.
func (j *planJudge) time(r *Result, x, base, s, g, p string, limit float64) {
	found := false
	for _, k := range r.cellKeys() {
		if k.Shape != s || k.Regime != g || k.Path != p {
			continue
		}
		st := r.timeRatio(k, x, base)
		if st.N == 0 {
			continue
		}
		found = true
		cell := fmt.Sprintf("%s/%s/%s/t=%d", s, g, p, k.Threads)
		if ok, why := r.identical(s, x, base); !ok {
			j.unjudged = append(j.unjudged, fmt.Sprintf("%s: not identical (%s)", cell, why))
			continue
		}
		j.judged++
		d := fmt.Sprintf("%s time %.3f [%.3f, %.3f] (%s %.2f µs per op)", cell, st.Median, st.Lo, st.Hi, base, median(r.Cells[k][base].NsPerOp)/1e3)
		j.detail = append(j.detail, d)
		if st.Median > limit {
			j.misses = append(j.misses, d)
		}
	}
	if !found {
		j.unjudged = append(j.unjudged, fmt.Sprintf("%s/%s/%s (not timed)", s, g, p))
	}
}

// budget judges every plan plan.Fit chose: its filter bytes on the levels
// its lookups load (L0-L5 for Get, every level with UseL6) against limit
// times its budget, in every shape.
func (j *planJudge) budget(r *Result, limit float64) {
	worst, worstRatio := "", 0.0
	for _, p := range r.Plans {
		cell := p.Shape + "/" + p.Name
		db, ok := r.db(p.Shape, p.Name)
		if !ok || p.Budget == 0 {
			j.unjudged = append(j.unjudged, cell+" (no database or no budget)")
			continue
		}
		j.judged++
		loaded := db.Shape.loadedFilter(p.UseL6)
		ratio := float64(loaded) / float64(p.Budget)
		d := fmt.Sprintf("%s %.3f (%d of %d bytes)", cell, ratio, loaded, p.Budget)
		if ratio >= worstRatio {
			worst, worstRatio = d, ratio
		}
		if ratio > limit {
			j.misses = append(j.misses, d)
		}
	}
	if j.judged > 0 {
		j.detail = append(j.detail, fmt.Sprintf("%d plans judged; highest %s", j.judged, worst))
	}
}

// filterRatio is x's total filter bytes over base's in a shape (NaN if
// either is missing or base has none).
func (r *Result) filterRatio(shape, x, base string) float64 {
	a, ok1 := r.db(shape, x)
	b, ok2 := r.db(shape, base)
	if !ok1 || !ok2 {
		return math.NaN()
	}
	af, _ := a.Shape.totalFilter()
	bf, _ := b.Shape.totalFilter()
	if bf == 0 {
		return math.NaN()
	}
	return float64(af) / float64(bf)
}

// planFPTarget is a filter-plan target on false-positive reads per
// operation: x's at most limit times base's on path, every shape.
type planFPTarget struct {
	x, base, path string
	limit         float64
	text          string
}

// planFPTargets are the plans issue's targets on false positives: plan.Fit's
// plan against the best bloom-only plan at the same ceiling, and against
// bloom(10) on every level.
var planFPTargets = []planFPTarget{
	{planForNoL6Bytes, planBloomOnlyNoL6, "get-absent", 0.65, "Filter plans: planfor-noL6bytes's false-positive reads per absent Get <= 0.65x bloomonly-noL6bytes's (the best bloom-only plan at the same ceiling, bloom(10)-noL6's bytes), every shape"},
	{planFor2x, planBloomOnly2x, "get-absent", 0.10, "Filter plans: planfor-2x's false-positive reads per absent Get <= 0.10x bloomonly-2x's (twice bloom(10)-noL6's bytes), every shape"},
	{planForL6, planBloomOnlyL6, "seek-absent-l6", 0.90, "Filter plans: planfor-l6's false-positive reads per absent L6-filtered lookup (seek-absent-l6) <= 0.90x bloomonly-l6's (bloom(10)'s bytes on every level), every shape"},
	{planForGet, planBase, "get-absent", 0.02, "Filter plans: planfor-get's false-positive reads per absent Get <= 0.02x bloom(10)'s, every shape"},
	// A plan never loses to what it replaces: at the bytes of bloom(10)-noL6
	// (the reference of a service on CockroachDB's configuration), against
	// the reference and against the plain swap (Get reads no L6 filter, so
	// cuckoo(10) on every level is FilterPolicy(10) on L0-L5 for Get).
	{planForNoL6Bytes, planBloomNoL6, "get-absent", 0.70, "Filter plans: planfor-noL6bytes's false-positive reads per absent Get <= 0.70x bloom(10)-noL6's (the reference whose bytes it has), every shape"},
	{planForNoL6Bytes, "cuckoo(10)", "get-absent", 1.05, "Filter plans: planfor-noL6bytes's false-positive reads per absent Get <= 1.05x cuckoo(10)'s (the plain swap, FilterPolicy(10) on the levels Get reads), every shape"},
}

// planVerdicts judges the filter plans: the plans issue's targets, then the
// earlier issue's that are still meaningful and cost nothing more than
// what is measured anyway (progressive against bloom-progressive, and the
// plans' time on the slow device). The earlier targets the new ones
// supersede are dropped (planDropped).
func (r *Result) planVerdicts() []verdictRow {
	if !r.Config.FilterPlans {
		return nil
	}
	var out []verdictRow
	for _, t := range planFPTargets {
		var j planJudge
		j.fp(r, t.x, t.base, t.path, t.limit)
		out = append(out, j.verdict(t.text))
	}
	var j planJudge
	j.budget(r, 1.01)
	out = append(out, j.verdict("Filter plans: every plan's measured filter bytes on the levels its lookups load (L0-L5 for Get, every level for the plans for L6-filtered lookups) <= 1.01x its budget (planfor-*, bloomonly-* and the whatif-* plans at a budget above 0), every shape"))
	j = planJudge{}
	j.bytes(r, planProgressive, planBloomProg, 1.0)
	j.fp(r, planProgressive, planBloomProg, "get-absent", 0.15)
	j.fp(r, planProgressive, planBloomProg, "seek-absent-l6", 0.95)
	out = append(out, j.verdict("Filter plans (earlier issue): progressive against bloom-progressive: filter bytes <= 1.0x, false-positive reads per absent Get <= 0.15x and per absent L6-filtered lookup <= 0.95x, every shape"))
	j = planJudge{}
	j.time(r, planForL6, planBase, "steady", "slow", "seek-absent-l6", 0.92)
	out = append(out, j.verdict("Filter plans (earlier issue): planfor-l6's absent L6-filtered lookup (seek-absent-l6) time on the slow device <= 0.92x bloom(10)'s (steady, median of paired ratios)"))
	j = planJudge{}
	j.time(r, planForGet, planBase, "burst", "slow", "get-absent", 0.95)
	out = append(out, j.verdict("Filter plans (earlier issue): planfor-get's absent Get time on the slow device in the write burst <= 0.95x bloom(10)'s (median of paired ratios)"))
	return append(out, r.planSlowerVerdict())
}

// planDropped are the earlier issue's plan targets that the plans issue's
// supersede, no longer judged.
var planDropped = []string{
	"planfor-get's false-positive reads per absent Get <= 0.05x bloom(10)'s and its filter bytes <= 1.03x bloom(10)'s (now <= 0.02x, and the bytes against its budget)",
	"planfor-l6's false-positive reads per seek-absent-l6 <= 0.5x bloom(10)'s (now against the best bloom-only plan at the same bytes; its time target is kept)",
}

// planSlowerVerdict judges that no timed cell of a cuckoo filter plan is
// measurably slower than bloom(10) on every level: no 95% interval
// entirely above 1.02. The bloom plans are the reference configurations,
// not judged. The plans plan.Fit made for lookups that do not read L6
// filters (planfor-get, planfor-noL6bytes, planfor-2x: no filter on L6, as
// bloom(10)-noL6) are judged on the paths they are made for; their
// L6-filtered cells, where L6 cannot be skipped by construction, are
// listed apart.
func (r *Result) planSlowerVerdict() verdictRow {
	var j planJudge
	var apart []string
	for _, k := range r.cellKeys() {
		for _, x := range []string{planProgressive, planForGet, planForNoL6Bytes, planFor2x, planForL6, planForL6NoL6Bytes} {
			st := r.timeRatio(k, x, planBase)
			if st.N == 0 {
				continue
			}
			cell := fmt.Sprintf("%s %s/%s/%s/t=%d: %.3f [%.3f, %.3f]", x, k.Shape, k.Regime, k.Path, k.Threads, st.Median, st.Lo, st.Hi)
			if ok, why := r.identical(k.Shape, x, planBase); !ok {
				j.unjudged = append(j.unjudged, fmt.Sprintf("%s: not identical (%s)", cell, why))
				continue
			}
			if x != planProgressive && x != planForL6 && x != planForL6NoL6Bytes && pathNamed(k.Path).readsL6Filters() {
				apart = append(apart, cell)
				continue
			}
			j.judged++
			if r.slowerThanTwin(k, st) {
				j.misses = append(j.misses, cell)
			}
		}
	}
	j.detail = append(j.detail, fmt.Sprintf("%d timed cells", j.judged))
	if !r.Config.TimeAll {
		j.detail = append(j.detail, "the plans are timed only where a target needs their time (planfor-l6: steady/slow, planfor-get: burst/slow)")
	}
	if len(apart) > 0 {
		j.detail = append(j.detail, "not judged, the plans for Get on L6-filtered paths (no L6 filter by construction): "+strings.Join(apart, ", "))
	}
	return j.verdict("Filter plans: no cell whose 95% interval of plan/bloom(10) time lies entirely above 1.02 and above the A/A twin's interval in the same cell (progressive, planfor-l6 and planfor-l6-noL6bytes on every path, planfor-get, planfor-noL6bytes and planfor-2x on the paths that read no L6 filter; every timed shape, regime and thread count; the bloomonly-* plans are references, not judged)")
}
