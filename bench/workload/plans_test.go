package workload

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/progress"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// TestPlansReachTables builds the deep shape's databases (its synthetic
// layout: no loading) and checks that the filter plans are built on the
// same LSM as every other policy, that PlanFor got bloom(10)'s and
// bloom(10)-noL6's filter bytes, and that each level's policy reaches the
// tables written there: no filter on L6 of bloom(10)-noL6 and planfor-get,
// the plan's policy on their L5, and planfor-l6's own on its L6.
func TestPlansReachTables(t *testing.T) {
	cfg := Defaults("tiny")
	cfg.Budgets = []int{10}
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
	for _, name := range planNames {
		if findDB(dbs, name) == nil {
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
	want := map[string]uint64{planForGet: b10, planForNoL6Bytes: noL6, planForL6: b10}
	if len(r.res.Plans) != len(want) {
		t.Fatalf("%d plans recorded, want %d", len(r.res.Plans), len(want))
	}
	for _, p := range r.res.Plans {
		if p.Budget != want[p.Name] || p.UseL6 != (p.Name == planForL6) {
			t.Errorf("%s: PlanFor at %d bytes, useL6 %v; want %d bytes", p.Name, p.Budget, p.UseL6, want[p.Name])
		}
	}
	for _, name := range []string{planBloomNoL6, planForGet, planForL6, planProgressive} {
		d := findDB(dbs, name)
		plan := *d.cfg.Plan
		usage := filterUsage(t, r, s, d)
		for _, l := range []int{5, 6} {
			wantName := ""
			if plan[l] != nil && plan[l] != pebble.NoFilterPolicy {
				wantName = plan[l].Name()
			}
			if (name == planBloomNoL6 || name == planForGet) && l == 6 && wantName != "" {
				t.Errorf("%s: plan %s has a filter on L6", name, plan)
			}
			if l == 5 && wantName == "" || name == planForL6 && wantName == "" {
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
