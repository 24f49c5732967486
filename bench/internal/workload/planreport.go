package workload

import (
	"fmt"
	"math"
	"strings"
)

// planNames are the filter plans in report order, bloom(10) first.
var planNames = []string{planBase, planBloomNoL6, planBloomProg, planProgressive, planForGet, planBloomOnlyGet,
	planForNoL6Bytes, planBloomOnlyNoL6, planFor2x, planBloomOnly2x, planForL6, planBloomOnlyL6,
	planForL6NoL6Bytes, planBloomOnlyL6NoL6, cachePlanName("pressure1"), cachePlanName("pressure4")}

// planPaths are the absent paths the filter plans are compared on.
var planPaths = []string{"get-absent", "seek-absent", "seek-absent-l6"}

// writePlans writes the filter plans: what each is, the plans plan.Fit
// chose with their budgets, filter bytes and false-positive reads against
// bloom(10), and the time ratios where the plans were timed.
func (r *Result) writePlans(w func(string, ...any)) {
	if !r.Config.FilterPlans {
		return
	}
	w("\n## Filter plans\n\n")
	w("A filter policy per level, L0 to L6, on the same LSMs as every other policy (each plan's tables written with its levels' policies):\n\n")
	w("- bloom(10): Pebble's bloom filter at 10 bits per key on every level, the baseline.\n")
	w("- bloom(10)-noL6: bloom(10) on L0-L5 and no filter on L6 (CockroachDB's and Ethereum clients' configuration).\n")
	w("- bloom-progressive: Pebble master's progressive recipe on v2.1.7's bloom filter, bloom 16, 16, 16, 16, 14, 10, 8 bits per key on L0..L6, without master's 1 MiB cap per filter.\n")
	w("- progressive: plan.Progressive(), %s.\n", planString(r.Shapes, planProgressive))
	if len(r.CachePlans) > 0 {
		w("- whatif-pressure1 and whatif-pressure4, where a pressure regime runs: the plan `whatif -cache` recommends for that regime's cache, plan.Fit's for L6-filtered lookups at the budget whatif's rule gives (half the cache less the index bytes), timed in that regime only; no database of its own where the budget is 0, for whatif then recommends CockroachDB's configuration, bloom(10)-noL6 (see Memory pressure).\n")
	}
	w("- plan.Fit's plans, each computed per shape on bloom(10)'s database (the layout's tables) before the plans' databases are built; a budget (PlanConfig.MaxFilterBytes) is a ceiling on the filter bytes the lookups load, L0-L5 for Get and every level with UseL6. planfor-get: PlanFor(db, bloom(10)'s filter bytes, false); planfor-noL6bytes: the same at bloom(10)-noL6's bytes (bloom(10)'s on L0-L5); planfor-2x: at twice bloom(10)-noL6's bytes, Get; planfor-l6: PlanFor at bloom(10)'s bytes with useL6 true. Each bloomonly-* is the BloomOnly plan of the same plan.Fit report as the planfor-* of its budget (the best plan of Pebble's bloom filter alone within the same ceiling). Model bytes are plan.Fit's estimate of the bytes the lookups load; loaded bytes are measured on the plan's database, on the same levels:\n\n")
	r.writePlanTable(w)
	w("\nThe earlier issue's plan targets that these supersede are no longer judged: %s.\n", strings.Join(planDropped, "; "))
	w("\nFilter bytes on the shape's tables, and false-positive block reads per operation on the absent paths (counting pass), each with its ratio to bloom(10)'s (a level without a filter answers nothing, so its data-block reads are not counted here: bloom(10)-noL6 and the plans for Get read an L6 block on every seek-absent-l6, see the block reads below):\n\n")
	w("| shape | policy | filter bytes | ×bloom(10) |")
	for _, p := range planPaths {
		w(" %s FP/op | ×bloom(10) |", p)
	}
	w("\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range r.shapeNames() {
		for _, x := range planNames {
			d, ok := r.db(s, x)
			if !ok {
				continue
			}
			fb, _ := d.Shape.totalFilter()
			w("| %s | %s | %d | %s |", s, x, fb, f3(r.filterRatio(s, x, planBase)))
			for _, p := range planPaths {
				xfp, _ := r.fpPerOp(s, p, x)
				bfp, _ := r.fpPerOp(s, p, planBase)
				ratio := math.NaN()
				if bfp > 0 {
					ratio = xfp / bfp
				}
				w(" %s | %s |", f4(xfp), f3(ratio))
			}
			w("\n")
		}
	}
	r.writePlanTimes(w)
}

// writePlanTable writes the plans plan.Fit chose: budget, the model's bytes
// and false positives, the measured bytes on the levels the lookups load.
func (r *Result) writePlanTable(w func(string, ...any)) {
	w("| shape | policy | lookups | budget (filter bytes) | model bytes | model FP/lookup | loaded bytes | ×budget | plan |\n|---|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, p := range r.Plans {
		lookups, loaded, ratio := "Get (L0-L5)", "-", math.NaN()
		if p.UseL6 {
			lookups = "L6 filters (L0-L6)"
		}
		if d, ok := r.db(p.Shape, p.Name); ok {
			b := d.Shape.loadedFilter(p.UseL6)
			loaded = fmt.Sprint(b)
			if p.Budget > 0 {
				ratio = float64(b) / float64(p.Budget)
			}
		}
		w("| %s | %s | %s | %d | %d | %s | %s | %s | %s |\n", p.Shape, p.Name, lookups, p.Budget, p.Model.Bytes, fmt.Sprintf("%.3g", p.Model.FalsePositives), loaded, f3(ratio), p.Plan)
	}
}

// writePlanTimes writes the time ratios of the filter plans to bloom(10),
// in every cell where a plan was timed.
func (r *Result) writePlanTimes(w func(string, ...any)) {
	w("\nTime per operation: plan/bloom(10), median of paired ratios [sign-test interval], where the plan was timed; bloom(10)'s µs per operation and the A/A twin's ratio (bloom(10)-twin/bloom(10), the noise floor of the cell) beside it; the pressure regimes' cells are in their own section:\n\n")
	w("| shape | regime | path | threads | policy | bloom(10) µs | time | twin |\n|---|---|---|---:|---|---:|---|---|\n")
	for _, k := range r.cellKeys() {
		if isPressure(k.Regime) {
			continue
		}
		for _, x := range planNames[1:] {
			st := r.timeRatio(k, x, planBase)
			if st.N == 0 {
				continue
			}
			w("| %s | %s | %s | %d | %s | %.2f | %s | %s |\n", k.Shape, k.Regime, k.Path, k.Threads, x, median(r.Cells[k][planBase].NsPerOp)/1e3, r.timeCell(k, x, planBase), r.twinCell(k))
		}
	}
}

// planString is the plan of policy name in the first shape that has it.
func planString(shapes []shapeResult, name string) string {
	for _, s := range shapes {
		for _, d := range s.DBs {
			if d.Cfg.Name == name && d.Cfg.Plan != nil {
				return d.Cfg.Plan.String()
			}
		}
	}
	return "-"
}
