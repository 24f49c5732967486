package workload

import (
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// The filter plans measured beside the uniform policies (Config.FilterPlans),
// on the same LSMs. The planfor-* and bloomonly-* plans are
// plan.Fit's on the shape's LSM: a bloomonly-* plan is the
// report's BloomOnly plan (Pebble's bloom filter alone) at the same ceiling
// as the planfor-* plan beside it.
const (
	planBloomNoL6     = "bloom(10)-noL6"      // bloom(10) on L0-L5, none on L6: CockroachDB's and Ethereum clients' configuration
	planBloomProg     = "bloom-progressive"   // Pebble master's progressive recipe on v2.1.7's bloom, without its 1 MiB cap per filter
	planProgressive   = "progressive"         // plan.Progressive()
	planForGet        = "planfor-get"         // PlanFor(db, bloom(10)'s filter bytes, false)
	planForNoL6Bytes  = "planfor-noL6bytes"   // PlanFor(db, bloom(10)-noL6's filter bytes, false)
	planBloomOnlyNoL6 = "bloomonly-noL6bytes" // plan.Fit's BloomOnly at bloom(10)-noL6's filter bytes, Get
	planFor2x         = "planfor-2x"          // plan.Fit at twice bloom(10)-noL6's filter bytes, Get
	planBloomOnly2x   = "bloomonly-2x"        // its BloomOnly
	planForL6         = "planfor-l6"          // PlanFor(db, bloom(10)'s filter bytes, true)
	planBloomOnlyL6   = "bloomonly-l6"        // plan.Fit's BloomOnly at bloom(10)'s filter bytes, UseL6

	// Built only where a pressure regime runs.
	planBloomOnlyGet    = "bloomonly-get"          // plan.Fit's BloomOnly at bloom(10)'s filter bytes, Get
	planForL6NoL6Bytes  = "planfor-l6-noL6bytes"   // PlanFor(db, bloom(10)-noL6's filter bytes, true)
	planBloomOnlyL6NoL6 = "bloomonly-l6-noL6bytes" // its BloomOnly
)

// twinName is the A/A twin: bloom(10) built a second time into its own
// database, identical to bloom(10)'s, and opened, warmed and timed like
// any policy. Its time ratio to bloom(10) is what two identical databases
// measure apart in the same run: the noise floor of every time ratio.
const twinName = "bloom(10)-twin"

// pressurePolicies are the policies both pressure regimes time (with the
// twin, and each regime's whatif -cache plan: regimePolicies): no filter,
// CockroachDB's configuration, bloom(10) everywhere, Pebble master's
// progressive bloom recipe, cuckoo(10), Progressive(), and plan.Fit's plans
// at bloom(10)'s and bloom(10)-noL6's bytes, for Get and for L6-filtered
// lookups, each beside the best bloom-only plan at the same ceiling.
var pressurePolicies = []string{"none", planBloomNoL6, planBase, planBloomProg, "cuckoo(10)", planProgressive,
	planForGet, planBloomOnlyGet, planForNoL6Bytes, planBloomOnlyNoL6,
	planForL6, planBloomOnlyL6, planForL6NoL6Bytes, planBloomOnlyL6NoL6}

// planBase is the policy every filter plan is compared with.
const planBase = "bloom(10)"

// planTimedQuick is where a filter plan is timed when Config.TimeAll is
// false ("shape/regime"): where a target needs its time. Elsewhere the
// plans are counted on the absent paths only.
var planTimedQuick = map[string]string{planForL6: "steady/slow", planForGet: "burst/slow"}

// planRow is a plan plan.Fit chose for a shape, with the model's estimate.
type planRow struct {
	Shape  string
	Name   string
	Plan   plan.Plan
	Budget uint64 // plan.Config.MaxFilterBytes (Fixed): the budget on the filter bytes the lookups load
	UseL6  bool
	Model  plan.Estimate // the plan's bytes and false positives by plan.Fit's model
}

// planQuery is one plan.Fit call: the plan name, the name of the report's
// BloomOnly plan ("" to skip it), and the query.
type planQuery struct {
	name, bloomOnly string
	cfg             plan.Config
}

// planQueries are the plan.Fit calls of a shape whose bloom(10) database
// holds all filter bytes, upper of them on L0-L5 (bloom(10)-noL6's); with
// pressure, also the bloom-only plan at bloom(10)'s bytes for Get and the
// plans for L6-filtered lookups at bloom(10)-noL6's bytes, which only the
// pressure regimes time.
func planQueries(all, upper uint64, pressure bool) []planQuery {
	getOnly := ""
	if pressure {
		getOnly = planBloomOnlyGet
	}
	at := func(bytes uint64, useL6 bool) plan.Config {
		return plan.Config{MaxFilterBytes: bytes, Fixed: true, UseL6: useL6}
	}
	q := []planQuery{
		{planForGet, getOnly, at(all, false)},
		{planForNoL6Bytes, planBloomOnlyNoL6, at(upper, false)},
		{planFor2x, planBloomOnly2x, at(2*upper, false)},
		{planForL6, planBloomOnlyL6, at(all, true)},
	}
	if pressure {
		q = append(q, planQuery{planForL6NoL6Bytes, planBloomOnlyL6NoL6, at(upper, true)})
	}
	return q
}

// fixedPlans are the filter plans that do not depend on the LSM.
func fixedPlans() []policyCfg {
	noL6 := noL6Plan()
	var prog plan.Plan
	for l, b := range [7]int{16, 16, 16, 16, 14, 10, 8} {
		prog[l] = bloom.FilterPolicy(b)
	}
	cp := plan.Progressive()
	return []policyCfg{
		{Name: planBloomNoL6, Family: famPlan, Plan: &noL6},
		{Name: planBloomProg, Family: famPlan, Plan: &prog},
		{Name: planProgressive, Family: famPlan, Plan: &cp},
	}
}

// noL6Plan is bloom(10)-noL6's plan, CockroachDB's configuration: bloom(10)
// on L0-L5, no filter on L6.
func noL6Plan() plan.Plan {
	b10 := bloom.FilterPolicy(10)
	return plan.Plan{b10, b10, b10, b10, b10, b10, nil}
}

// planFors returns plan.Fit's plans for the shape (planQueries), computed
// on bloom(10)'s database among dbs (built from the shape's layout: the
// tables every database has) at the filter bytes bloom(10) and
// bloom(10)-noL6 wrote there, and the plans whatif -cache recommends for
// the caches of the pressure regimes that run on the shape (cachePlans),
// which it records in the result. It returns none if either database is
// missing.
func (r *runner) planFors(s shapeSpec, dbs []*dbInst) ([]policyCfg, error) {
	ref, noL6 := findDB(dbs, planBase), findDB(dbs, planBloomNoL6)
	if ref == nil || noL6 == nil {
		return nil, nil
	}
	all, _ := ref.shape.totalFilter()
	upper, _ := noL6.shape.totalFilter()
	queries := planQueries(all, upper, r.runsPressureOn(s))
	var regs []regimeSpec
	for _, g := range allRegimes {
		if g.Pressure > 0 && r.runsRegimeOn(g, s) {
			regs = append(regs, g)
		}
	}
	// The cache as openRegime gives it to the blocks: every database's
	// tables without filters are the uniform databases' (identical LSMs),
	// "none" among them.
	cps, more := cachePlans(s.Name, regs, minUnfiltered(dbs), ref.shape.totalIndex())
	queries = append(queries, more...)
	db, err := pebble.Open(ref.dir, r.options(s, ref.cfg, ref.st, nil, true))
	if err != nil {
		return nil, err
	}
	var out []policyCfg
	add := func(name string, q planQuery, e plan.Estimate) {
		p := e.Plan
		out = append(out, policyCfg{Name: name, Family: famPlan, Plan: &p})
		r.res.Plans = append(r.res.Plans, planRow{Shape: s.Name, Name: name, Plan: p, Budget: q.cfg.MaxFilterBytes, UseL6: q.cfg.UseL6, Model: e})
	}
	for _, q := range queries {
		rep, err := plan.Fit(db, q.cfg)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("plan.Fit for %s: %w", q.name, err)
		}
		add(q.name, q, rep.Estimate)
		if q.bloomOnly != "" {
			add(q.bloomOnly, q, rep.BloomOnly)
		}
		for i := range cps {
			if cps[i].Policy == q.name {
				cps[i].Plan = rep.Plan
			}
		}
	}
	r.res.CachePlans = append(r.res.CachePlans, cps...)
	return out, db.Close()
}

func findDB(dbs []*dbInst, name string) *dbInst {
	for _, d := range dbs {
		if d.cfg.Name == name {
			return d
		}
	}
	return nil
}

// countsPath says whether the counting pass runs path p on d: every path,
// except for the filter plans when not every policy is timed (quick mode),
// which are counted on the absent paths their targets judge.
func (r *runner) countsPath(d *dbInst, p pathSpec) bool {
	return r.cfg.TimeAll || d.cfg.Family != famPlan || p.Present == 0
}

// timesPlan says whether a filter plan is timed in shape s and regime g
// (not a pressure regime, which lists its policies).
func (r *runner) timesPlan(c policyCfg, s shapeSpec, g regimeSpec) bool {
	if c.Name == planForL6NoL6Bytes || c.Name == planBloomOnlyL6NoL6 || c.Name == planBloomOnlyGet || isCachePlan(c.Name) {
		return false // built for the pressure regimes
	}
	if c.Name == planBloomNoL6 && slices.ContainsFunc(r.paths(g), func(p pathSpec) bool { return p.Lookup }) {
		return true // the db.Get the lookups are compared with
	}
	return r.cfg.TimeAll || planTimedQuick[c.Name] == s.Name+"/"+g.Name
}
