package workload

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/whatif"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// The plans whatif -cache recommends, timed in the pressure regimes. For
// each pressure regime that runs on a shape, whatif's rule
// (plan.CacheBudget) gives a filter budget for the regime's cache, as
// the blocks get it (the memtables' reservation excluded, as whatif's
// output asks its users to do), beside the shape's index blocks; the plan
// is plan.Fit's at that budget for lookups that read L6 filters, whatif's
// own query (whatif.CacheConfig), computed on bloom(10)'s database and
// built into its own database like plan.Fit's other plans (planFors), timed
// as whatif-<regime> in that regime alone. At budget 0 whatif recommends
// CockroachDB's configuration, which bloom(10)-noL6's database already is:
// the recommendation then has no database of its own, and its times are
// bloom(10)-noL6's.

// cachePlanPrefix starts the name of every whatif -cache plan.
const cachePlanPrefix = "whatif-"

// cachePlanName is the policy whatif -cache recommends for the cache of
// pressure regime regime.
func cachePlanName(regime string) string { return cachePlanPrefix + regime }

// isCachePlan says whether the policy named name is a whatif -cache plan.
func isCachePlan(name string) bool { return strings.HasPrefix(name, cachePlanPrefix) }

// regimePolicies are the policies pressure regime regime times (beside the
// twin): pressurePolicies and the plan whatif -cache recommends for its
// cache.
func regimePolicies(regime string) []string {
	return append(slices.Clone(pressurePolicies), cachePlanName(regime))
}

// cachePlan is whatif -cache's recommendation for the cache of one pressure
// regime in one shape.
type cachePlan struct {
	Shape, Regime string
	Cache         int64  // the regime's block cache less the memtables' reservation: what the blocks get (cacheSize)
	Index         uint64 // the shape's index blocks: the IndexSize properties of bloom(10)'s tables, as whatif adds them up
	Budget        uint64 // plan.CacheBudget(Cache, Index)
	// Policy is the database timed as the recommendation: whatif-<regime>,
	// or bloom(10)-noL6 at budget 0.
	Policy string
	Plan   plan.Plan // plan.Fit's at Budget; CockroachDB's configuration at budget 0
}

// cachePlans returns whatif -cache's recommendation for the cache of each
// pressure regime in regs, in a shape whose tables without their filter
// blocks take unfiltered bytes and whose index blocks take index bytes,
// and the plan.Fit query of each budget above 0, named for its regime; the
// caller fills in those recommendations' plans from plan.Fit's answers.
func cachePlans(shape string, regs []regimeSpec, unfiltered int64, index uint64) ([]cachePlan, []planQuery) {
	var cps []cachePlan
	var qs []planQuery
	for _, g := range regs {
		cp := cachePlan{Shape: shape, Regime: g.Name, Cache: cacheSize(g, lsmShape{}, 0, unfiltered), Index: index}
		cp.Budget = plan.CacheBudget(uint64(cp.Cache), index)
		if cp.Budget == 0 {
			cp.Policy, cp.Plan = planBloomNoL6, noL6Plan()
		} else {
			cp.Policy = cachePlanName(g.Name)
			qs = append(qs, planQuery{name: cp.Policy, cfg: whatif.CacheConfig(cp.Budget)})
		}
		cps = append(cps, cp)
	}
	return cps, qs
}

// cachePlan is the recommendation for regime in shape (false if none was
// made: the filter plans were not built, or the regime did not run there).
func (r *Result) cachePlan(shape, regime string) (cachePlan, bool) {
	for _, cp := range r.CachePlans {
		if cp.Shape == shape && cp.Regime == regime {
			return cp, true
		}
	}
	return cachePlan{}, false
}

// cachePlanCell is the "In short" table's cell of the recommendation in
// cell k: its time ratio to bloom(10)-noL6, or "budget 0" where it is
// bloom(10)-noL6 itself.
func (r *Result) cachePlanCell(k cellKey) string {
	cp, ok := r.cachePlan(k.Shape, k.Regime)
	switch {
	case !ok:
		return "-"
	case cp.Budget == 0:
		return "budget 0"
	}
	return f3(r.timeRatio(k, cp.Policy, planBloomNoL6).Median)
}

// writeCachePlans writes, per shape and pressure regime, the budget
// whatif's rule gave and the plan plan.Fit gave at it, with the filter bytes
// the timed database's L6-filtered lookups load.
func (r *Result) writeCachePlans(w func(string, ...any)) {
	if len(r.CachePlans) == 0 {
		return
	}
	w("\nThe plan `whatif -cache` recommends for each regime's cache, timed as whatif-<regime> in that regime: its rule gives a filter budget of half the cache less the index bytes (0 where the indexes take half or more), for the cache the blocks get (the memtables' reservation excluded, as whatif asks) and the shape's index blocks (bloom(10)'s tables' IndexSize properties, as whatif adds them up); the plan is plan.Fit's at that budget for lookups that read L6 filters (whatif's own query), computed on bloom(10)'s database like the other plans and built into its own database on the same LSM. At budget 0 whatif recommends CockroachDB's configuration: that is bloom(10)-noL6's database, timed under its own name. Filter bytes: measured on the timed database, every level.\n\n")
	w("| shape | regime | cache | index bytes | ×cache | budget | timed as | filter bytes L0-L6 | filters and indexes ×cache | plan |\n|---|---|---:|---:|---:|---:|---|---:|---:|---|\n")
	for _, cp := range r.CachePlans {
		budget, bytes, share := "0 (CockroachDB's configuration)", "-", "-"
		if cp.Budget > 0 {
			budget = mib(float64(cp.Budget))
		}
		if d, ok := r.db(cp.Shape, cp.Policy); ok {
			fb := d.Shape.loadedFilter(true)
			bytes = mib(float64(fb))
			share = fmt.Sprintf("%.2f", float64(fb+cp.Index)/float64(cp.Cache))
		}
		w("| %s | %s | %s | %s | %.2f | %s | %s | %s | %s | %s |\n", cp.Shape, cp.Regime, mib(float64(cp.Cache)), mib(float64(cp.Index)),
			float64(cp.Index)/float64(cp.Cache), budget, cp.Policy, bytes, share, cp.Plan)
	}
}

// cachePlanVerdict judges the plan whatif -cache recommends for the cache
// of pressure regime small against CockroachDB's configuration: <= 0.5x its
// time on absent L6-filtered lookups, and not slower (twin rule) on present
// Gets and the 50/50 L6-filtered lookups, in every shape the regime ran on.
// Where the budget is 0 the recommendation is CockroachDB's configuration
// itself, 1x by construction: a miss.
func (r *Result) cachePlanVerdict(small regimeSpec) verdictRow {
	var j planJudge
	for _, s := range r.shapeNames() {
		if !r.ranRegime(s, small.Name) {
			continue
		}
		cell := s + "/" + small.Name
		cp, ok := r.cachePlan(s, small.Name)
		if !ok {
			j.unjudged = append(j.unjudged, cell+": no recommendation (the filter plans were not built)")
			continue
		}
		if c := r.pressureCache(small, s); c != cp.Cache {
			j.unjudged = append(j.unjudged, fmt.Sprintf("%s: the budget was computed for a cache of %d bytes, the regime's is %d", cell, cp.Cache, c))
			continue
		}
		if cp.Budget == 0 {
			j.judged++
			d := fmt.Sprintf("%s: budget 0 (indexes %s, half the %s cache %s): whatif -cache recommends CockroachDB's configuration, bloom(10)-noL6 itself, 1x by construction",
				cell, mib(float64(cp.Index)), mib(float64(cp.Cache)), mib(float64(cp.Cache/2)))
			j.detail = append(j.detail, d)
			j.misses = append(j.misses, d)
			continue
		}
		if ok, why := r.identical(s, cp.Policy, planBloomNoL6); !ok {
			j.unjudged = append(j.unjudged, fmt.Sprintf("%s: not identical (%s)", cell, why))
			continue
		}
		for _, p := range []string{"seek-absent-l6", "get-present", "seek-mix-l6"} {
			k := cellKey{Shape: s, Regime: small.Name, Path: p, Threads: r.Config.Threads[0]}
			st := r.timeRatio(k, cp.Policy, planBloomNoL6)
			if st.N == 0 {
				j.unjudged = append(j.unjudged, fmt.Sprintf("%s/%s: not timed", cell, p))
				continue
			}
			j.judged++
			d := fmt.Sprintf("%s/%s %s/bloom(10)-noL6 %.3f [%.3f, %.3f] (budget %s)", cell, p, cp.Policy, st.Median, st.Lo, st.Hi, mib(float64(cp.Budget)))
			j.detail = append(j.detail, d)
			if p == "seek-absent-l6" && st.Median > 0.5 || p != "seek-absent-l6" && r.slowerThanTwin(k, st) {
				j.misses = append(j.misses, d)
			}
		}
	}
	return j.verdict(fmt.Sprintf("Memory pressure, %s: the plan whatif -cache recommends for the cache (%s: plan.Fit for L6-filtered lookups at half the cache less the indexes; CockroachDB's configuration where that leaves 0) takes <= 0.5x the time of bloom(10)-noL6 on absent L6-filtered lookups and is not slower on present Gets and the 50/50 L6-filtered lookups (twin rule)", small.Name, cachePlanName(small.Name)))
}
