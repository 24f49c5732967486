package workload

import (
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/progress"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// TestPlansReachTables builds the deep shape's databases (its synthetic
// layout: no loading) and checks that the filter plans are built on the
// same LSM as every other policy, that plan.Fit got bloom(10)'s, bloom(10)-noL6's
// and twice bloom(10)-noL6's filter bytes, that the bloomonly-* plans are
// Pebble's bloom alone, and that each level's policy reaches the tables
// written there: no filter on L6 of the plans for Get, the plan's policy on
// their L5, and the L6 plans' own on their L6.
func TestPlansReachTables(t *testing.T) {
	cfg := Defaults("tiny")
	cfg.Budgets = []int{10}
	cfg.PressureShapes = []string{"deep"} // the pressure regimes' plans too
	r := &runner{cfg: cfg, prog: progress.New(nil), res: &Result{Config: cfg}}
	r.res.BloomFPR = measureFPR(famBloom, 2000, 20_000, cfg.Seed)
	r.res.CuckooFPR = measureFPR(famCuckoo, 2000, 20_000, cfg.Seed)
	s := allShapes[len(allShapes)-1]
	if !s.Deep {
		t.Fatalf("the last shape is %s, not deep", s.Name)
	}
	base := t.TempDir()
	lay, _, err := r.reference(s, base)
	if err != nil {
		t.Fatal(err)
	}
	dbs, _, err := r.databases(s, lay, base)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(slices.Clone(planNames), twinName) {
		if findDB(dbs, name) == nil && !isCachePlan(name) {
			t.Fatalf("no database for %s", name)
		}
	}
	for _, d := range dbs {
		if err := diffSig(dbs[0].sig, d.sig); err != nil {
			t.Errorf("%s: LSM is not %s's: %v", d.cfg.Name, dbs[0].cfg.Name, err)
		}
	}
	b10, _ := findDB(dbs, planBase).shape.totalFilter()
	noL6, _ := findDB(dbs, planBloomNoL6).shape.totalFilter()
	if noL6 == 0 || noL6 >= b10 {
		t.Errorf("filter bytes: bloom(10)-noL6 %d, bloom(10) %d", noL6, b10)
	}
	want := map[string]uint64{planForGet: b10, planForNoL6Bytes: noL6, planBloomOnlyNoL6: noL6,
		planFor2x: 2 * noL6, planBloomOnly2x: 2 * noL6, planForL6: b10, planBloomOnlyL6: b10,
		// The pressure regimes'.
		planBloomOnlyGet: b10, planForL6NoL6Bytes: noL6, planBloomOnlyL6NoL6: noL6}
	// whatif -cache's, one per pressure regime whose budget is not 0.
	index, unfiltered := findDB(dbs, planBase).shape.totalIndex(), minUnfiltered(dbs)
	if len(r.res.CachePlans) != 2 {
		t.Fatalf("%d whatif -cache recommendations, want one per pressure regime", len(r.res.CachePlans))
	}
	for _, cp := range r.res.CachePlans {
		g := pressureRegime(t, cp.Regime)
		cache := cacheSize(g, lsmShape{}, 0, unfiltered)
		if cp.Cache != cache || cp.Index != index || cp.Budget != plan.CacheBudget(uint64(cache), index) {
			t.Errorf("%s: cache %d, indexes %d, budget %d; want cache %d, indexes %d", cp.Regime, cp.Cache, cp.Index, cp.Budget, cache, index)
		}
		t.Logf("%s: cache %d, indexes %d, budget %d: %s, plan %s", cp.Regime, cp.Cache, cp.Index, cp.Budget, cp.Policy, cp.Plan)
		d := findDB(dbs, cachePlanName(cp.Regime))
		if cp.Budget == 0 {
			if d != nil || cp.Policy != planBloomNoL6 {
				t.Errorf("%s at budget 0: timed as %s, database %v; want bloom(10)-noL6's, none of its own", cp.Regime, cp.Policy, d != nil)
			}
			continue
		}
		if d == nil || cp.Policy != d.cfg.Name || *d.cfg.Plan != cp.Plan {
			t.Fatalf("%s: no database for %s with the recommended plan %s", cp.Regime, cp.Policy, cp.Plan)
		}
		want[cp.Policy] = cp.Budget
	}
	if len(r.res.Plans) != len(want) {
		t.Fatalf("%d plans recorded, want %d", len(r.res.Plans), len(want))
	}
	for _, p := range r.res.Plans {
		useL6 := p.Name == planForL6 || p.Name == planBloomOnlyL6 || p.Name == planForL6NoL6Bytes || p.Name == planBloomOnlyL6NoL6 || isCachePlan(p.Name)
		if p.Budget != want[p.Name] || p.UseL6 != useL6 {
			t.Errorf("%s: plan.Fit at %d bytes, useL6 %v; want %d bytes, useL6 %v", p.Name, p.Budget, p.UseL6, want[p.Name], useL6)
		}
		if p.Model.Bytes > p.Budget {
			t.Errorf("%s: the model's %d bytes exceed the budget %d", p.Name, p.Model.Bytes, p.Budget)
		}
		if strings.HasPrefix(p.Name, "bloomonly-") {
			checkBloomOnly(t, p)
		}
	}
	for _, name := range []string{planBloomNoL6, planForGet, planFor2x, planBloomOnly2x, planForL6, planBloomOnlyL6, planProgressive} {
		checkPlanLevels(t, r, s, findDB(dbs, name))
	}
}

// checkPlanLevels checks that the policies of d's plan on L5 and L6 reach
// the tables written there: none on L6 for Get, a filter on L5, and one on
// L6 for the plans with UseL6.
func checkPlanLevels(t *testing.T, r *runner, s shapeSpec, d *dbInst) {
	t.Helper()
	name, plan := d.cfg.Name, *d.cfg.Plan
	usage := filterUsage(t, r, s, d)
	getPlan := name == planBloomNoL6 || name == planForGet || name == planFor2x || name == planBloomOnly2x
	l6Plan := name == planForL6 || name == planBloomOnlyL6
	for _, l := range []int{5, 6} {
		wantName := ""
		if plan[l] != nil && plan[l] != pebble.NoFilterPolicy {
			wantName = plan[l].Name()
		}
		if getPlan && l == 6 && wantName != "" {
			t.Errorf("%s: plan %s has a filter on L6", name, plan)
		}
		if l == 5 && wantName == "" || l6Plan && wantName == "" {
			t.Errorf("%s: plan %s has no filter on L%d", name, plan, l)
		}
		if len(usage[l]) == 0 {
			t.Errorf("%s: no tables on L%d", name, l)
		}
		for _, u := range usage[l] {
			if u.Policy != wantName || (wantName == "") != (u.FilterBytes == 0) {
				t.Errorf("%s L%d: %d tables with filter %q (%d bytes), want %q (plan %s)", name, l, u.Tables, u.Policy, u.FilterBytes, wantName, plan)
			}
		}
	}
}

// checkBloomOnly checks that a bloomonly-* plan has Pebble's bloom filter
// or none on every level, and none on L6 for Get.
func checkBloomOnly(t *testing.T, p planRow) {
	t.Helper()
	for l, fp := range p.Plan {
		if fp == nil {
			continue
		}
		if _, ok := fp.(bloom.FilterPolicy); !ok || l == 6 && !p.UseL6 {
			t.Errorf("%s: L%d has %s (plan %s)", p.Name, l, fp.Name(), p.Plan)
		}
	}
}

// filterUsage opens d and returns its cuckoopolicy.FilterUsage rows by level.
func filterUsage(t *testing.T, r *runner, s shapeSpec, d *dbInst) [7][]cuckoopolicy.Usage {
	t.Helper()
	db, err := pebble.Open(d.dir, r.options(s, d.cfg, d.st, nil, true))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := cuckoopolicy.FilterUsage(db)
	if err != nil {
		t.Fatal(err)
	}
	var out [7][]cuckoopolicy.Usage
	for _, u := range rows {
		out[u.Level] = append(out[u.Level], u)
	}
	return out
}

// TestPlanBudgetJudge checks the budget target on made-up plans: the bytes
// of L6 count only for a plan with UseL6, and a plan 1% over its budget
// passes where one 2% over misses.
func TestPlanBudgetJudge(t *testing.T) {
	row := func(name string, fb [7]uint64) dbRow {
		return dbRow{Cfg: policyCfg{Name: name}, Shape: lsmShape{FilterBytes: fb}}
	}
	r := &Result{
		Shapes: []shapeResult{{Spec: shapeSpec{Name: "s"}, DBs: []dbRow{
			row("get", [7]uint64{100, 0, 0, 0, 0, 910, 5000}),
			row("l6", [7]uint64{100, 0, 0, 0, 0, 900, 10}),
			row("over", [7]uint64{0, 0, 0, 0, 0, 1020, 0}),
		}}},
		Plans: []planRow{
			{Shape: "s", Name: "get", Budget: 1000},
			{Shape: "s", Name: "l6", Budget: 1000, UseL6: true},
			{Shape: "s", Name: "over", Budget: 1000},
			{Shape: "s", Name: "missing", Budget: 1000},
		},
	}
	var j planJudge
	j.budget(r, 1.01)
	if j.judged != 3 || len(j.unjudged) != 1 {
		t.Fatalf("judged %d, unjudged %v; want 3 and the missing database", j.judged, j.unjudged)
	}
	if len(j.misses) != 1 || !strings.HasPrefix(j.misses[0], "s/over 1.020") {
		t.Errorf("misses %v, want s/over alone", j.misses)
	}
}
