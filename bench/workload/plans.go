package workload

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// The filter plans measured beside the uniform policies (Config.FilterPlans),
// each against bloom(10) on every level, on the same LSMs.
const (
	planBloomNoL6    = "bloom(10)-noL6"    // bloom(10) on L0-L5, none on L6: CockroachDB's and Ethereum clients' configuration
	planBloomProg    = "bloom-progressive" // Pebble master's progressive recipe on v2.1.7's bloom, without its 1 MiB cap per filter
	planProgressive  = "progressive"       // cuckoopolicy.Progressive()
	planForGet       = "planfor-get"       // PlanFor(db, bloom(10)'s filter bytes, false)
	planForNoL6Bytes = "planfor-noL6bytes" // PlanFor(db, bloom(10)-noL6's filter bytes, false)
	planForL6        = "planfor-l6"        // PlanFor(db, bloom(10)'s filter bytes, true)
)

// planBase is the policy every filter plan is compared with.
const planBase = "bloom(10)"

// planTimedQuick is where a filter plan is timed when Config.TimeAll is
// false ("shape/regime"): where a target needs its time. Elsewhere the
// plans are counted on the absent paths only.
var planTimedQuick = map[string]string{planForL6: "steady/slow", planForGet: "burst/slow"}

// planRow is a plan PlanFor chose for a shape.
type planRow struct {
	Shape  string
	Name   string
	Plan   cuckoopolicy.Plan
	Budget uint64 // maxFilterBytes given to PlanFor
	UseL6  bool
}

// fixedPlans are the filter plans that do not depend on the LSM.
func fixedPlans() []policyCfg {
	b10 := bloom.FilterPolicy(10)
	noL6 := cuckoopolicy.Plan{b10, b10, b10, b10, b10, b10, nil}
	var prog cuckoopolicy.Plan
	for l, b := range [7]int{16, 16, 16, 16, 14, 10, 8} {
		prog[l] = bloom.FilterPolicy(b)
	}
	cp := cuckoopolicy.Progressive()
	return []policyCfg{
		{Name: planBloomNoL6, Family: famPlan, Plan: &noL6},
		{Name: planBloomProg, Family: famPlan, Plan: &prog},
		{Name: planProgressive, Family: famPlan, Plan: &cp},
	}
}

// planFors returns PlanFor's plans for the shape, computed on bloom(10)'s
// database among dbs (built from the shape's layout: the tables every
// database has) at the filter bytes bloom(10) and bloom(10)-noL6 wrote
// there. It returns none if either database is missing.
func (r *runner) planFors(s shapeSpec, dbs []*dbInst) ([]policyCfg, error) {
	ref, noL6 := findDB(dbs, planBase), findDB(dbs, planBloomNoL6)
	if ref == nil || noL6 == nil {
		return nil, nil
	}
	all, _ := ref.shape.totalFilter()
	upper, _ := noL6.shape.totalFilter()
	db, err := pebble.Open(ref.dir, r.options(s, ref.cfg, ref.st, nil, true))
	if err != nil {
		return nil, err
	}
	var out []policyCfg
	for _, q := range []struct {
		name  string
		bytes uint64
		useL6 bool
	}{{planForGet, all, false}, {planForNoL6Bytes, upper, false}, {planForL6, all, true}} {
		p, err := cuckoopolicy.PlanFor(db, q.bytes, q.useL6)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("PlanFor for %s: %w", q.name, err)
		}
		out = append(out, policyCfg{Name: q.name, Family: famPlan, Plan: &p})
		r.res.Plans = append(r.res.Plans, planRow{Shape: s.Name, Name: q.name, Plan: p, Budget: q.bytes, UseL6: q.useL6})
	}
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

// timesPlan says whether a filter plan is timed in shape s and regime g.
func (r *runner) timesPlan(c policyCfg, s shapeSpec, g regimeSpec) bool {
	return r.cfg.TimeAll || planTimedQuick[c.Name] == s.Name+"/"+g.Name
}
