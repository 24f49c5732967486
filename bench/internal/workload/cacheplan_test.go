package workload

import (
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/progress"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/whatif"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// pressureRegime is the pressure regime named name.
func pressureRegime(t *testing.T, name string) regimeSpec {
	t.Helper()
	i := slices.IndexFunc(allRegimes, func(g regimeSpec) bool { return g.Name == name && g.Pressure > 0 })
	if i < 0 {
		t.Fatalf("no pressure regime %s", name)
	}
	return allRegimes[i]
}

// TestCachePlans checks whatif -cache's budget per regime on constructed
// sizes: the regime's share of the tables without filters as the cache,
// half of it less the indexes as the budget, 0 (CockroachDB's
// configuration, bloom(10)-noL6's database, no query) where the indexes
// take half or more, and whatif's own plan.Fit query otherwise.
func TestCachePlans(t *testing.T) {
	p1, p4 := pressureRegime(t, "pressure1"), pressureRegime(t, "pressure4")
	regs := []regimeSpec{p1, p4}
	for _, c := range []struct {
		unfiltered int64
		index      uint64
		budgets    [2]uint64 // pressure1, pressure4
	}{
		{10_000_000, 72_000, [2]uint64{0, 128_000}}, // the quick run's proportions: indexes 0.72% of the tables
		{10_000_000, 50_000, [2]uint64{0, 150_000}}, // indexes exactly half the 1% cache
		{10_000_000, 49_999, [2]uint64{1, 150_001}}, // one byte less
		{10_000_000, 200_000, [2]uint64{0, 0}},      // indexes take half the 4% cache
		{10_000_000, 0, [2]uint64{50_000, 200_000}}, // no indexes: half the cache
		{100_000_000_000, 1 << 20, [2]uint64{500_000_000 - 1<<20, 2_000_000_000 - 1<<20}},
	} {
		cps, qs := cachePlans("s", regs, c.unfiltered, c.index)
		if len(cps) != 2 {
			t.Fatalf("%d recommendations for 2 regimes", len(cps))
		}
		var wantQ []string
		for i, cp := range cps {
			g := regs[i]
			cache := int64(g.Pressure * float64(c.unfiltered))
			if cp.Shape != "s" || cp.Regime != g.Name || cp.Cache != cache || cp.Index != c.index {
				t.Errorf("%+v: want shape s, regime %s, cache %d, indexes %d", cp, g.Name, cache, c.index)
			}
			if cp.Budget != c.budgets[i] || cp.Budget != plan.CacheBudget(uint64(cache), c.index) {
				t.Errorf("%s, %d bytes without filters, indexes %d: budget %d, want %d", g.Name, c.unfiltered, c.index, cp.Budget, c.budgets[i])
			}
			if cp.Budget == 0 {
				if cp.Policy != planBloomNoL6 || cp.Plan != noL6Plan() {
					t.Errorf("%s at budget 0: %s, plan %s; want bloom(10)-noL6's", g.Name, cp.Policy, cp.Plan)
				}
				continue
			}
			if cp.Policy != cachePlanName(g.Name) {
				t.Errorf("%s at budget %d: timed as %s, want %s", g.Name, cp.Budget, cp.Policy, cachePlanName(g.Name))
			}
			wantQ = append(wantQ, cp.Policy)
		}
		var gotQ []string
		for _, q := range qs {
			gotQ = append(gotQ, q.name)
			cp := cps[slices.IndexFunc(cps, func(cp cachePlan) bool { return cp.Policy == q.name })]
			want := whatif.CacheConfig(cp.Budget)
			if q.bloomOnly != "" || q.cfg.MaxFilterBytes != cp.Budget || !q.cfg.UseL6 || q.cfg.Current == nil ||
				q.cfg.CapBitsPerKey != want.CapBitsPerKey || q.cfg.MinGain != want.MinGain || q.cfg.Fixed != want.Fixed {
				t.Errorf("%s: query %+v, want whatif's %+v", q.name, q.cfg, want)
			}
		}
		if !slices.Equal(gotQ, wantQ) {
			t.Errorf("queries %v, want %v", gotQ, wantQ)
		}
	}
}

// TestCachePlanIsCockroach checks that bloom(10)-noL6, which stands for
// the recommendation at budget 0, is the configuration whatif -cache
// recommends there (its query's Current: CockroachDB's).
func TestCachePlanIsCockroach(t *testing.T) {
	cur := whatif.CacheConfig(0).Current
	want := noL6Plan()
	for l, lv := range cur.Levels {
		fp := want[l]
		if fp == nil {
			fp = pebble.NoFilterPolicy
		}
		if lv.FilterPolicy != fp {
			t.Errorf("L%d: whatif's CockroachDB configuration has %v, bloom(10)-noL6 %v", l, lv.FilterPolicy, fp)
		}
	}
}

// TestRegimePolicies checks that each pressure regime times the plan
// whatif -cache recommends for its own cache and no other regime's, and
// that no other regime times any.
func TestRegimePolicies(t *testing.T) {
	var dbs []*dbInst
	for _, n := range []string{"none", planBase, planBloomNoL6, planForL6, cachePlanName("pressure1"), cachePlanName("pressure4"), twinName} {
		fam := famPlan
		switch n {
		case "none":
			fam = famNone
		case planBase, twinName:
			fam = famBloom
		}
		dbs = append(dbs, &dbInst{cfg: policyCfg{Name: n, Family: fam, B: 10}})
	}
	s := allShapes[0]
	for _, timeAll := range []bool{true, false} {
		cfg := Defaults("quick")
		cfg.TimeAll = timeAll
		r := &runner{cfg: cfg, prog: progress.New(nil), res: &Result{Config: cfg}}
		for _, g := range allRegimes {
			var got []string
			for _, d := range r.timed(s, g, dbs) {
				if isCachePlan(d.cfg.Name) {
					got = append(got, d.cfg.Name)
				}
			}
			var want []string
			if g.Pressure > 0 {
				want = []string{cachePlanName(g.Name)}
				if !slices.Contains(g.Policies, cachePlanName(g.Name)) || !slices.Equal(g.Policies[:len(pressurePolicies)], pressurePolicies) {
					t.Errorf("%s: policies %v, want pressurePolicies and %s", g.Name, g.Policies, cachePlanName(g.Name))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("TimeAll %v, %s: whatif plans timed %v, want %v", timeAll, g.Name, got, want)
			}
		}
	}
}

// TestCachePlanVerdict checks the verdict on constructed cells: a plan at
// 0.4x on absent L6-filtered lookups and even elsewhere passes; 0.6x
// misses; slower present Gets miss; budget 0 (CockroachDB's configuration
// itself) misses; a cache other than the one the budget was computed for,
// a plan not timed and a shape without a recommendation are not judged;
// the larger cache is not judged.
func TestCachePlanVerdict(t *testing.T) {
	p1, p4 := pressureRegime(t, "pressure1"), pressureRegime(t, "pressure4")
	const unfiltered = 10_000_000
	shape := lsmShape{Bytes: [7]int64{6: unfiltered}}
	r := &Result{Config: Config{Threads: []int{1}}, Cells: map[cellKey]map[string]*cellStats{}}
	name := cachePlanName(p1.Name)
	// Per shape: the plan's time on each path as a multiple of bloom(10)-noL6's.
	type times struct{ absent, present, mix float64 }
	for _, c := range []struct {
		shape  string
		budget uint64
		cache  int64
		t      times
	}{
		{"pass", 1000, 100_000, times{0.4, 1.0, 0.8}},
		{"slowabsent", 1000, 100_000, times{0.6, 1.0, 1.0}},
		{"slowpresent", 1000, 100_000, times{0.3, 1.1, 1.0}},
		{"zero", 0, 100_000, times{1, 1, 1}},
		{"othercache", 1000, 99_999, times{0.4, 1.0, 1.0}},
		{"untimed", 1000, 100_000, times{}},
		{"norec", 0, 0, times{0.4, 1.0, 1.0}},
	} {
		dbs := []dbRow{{Cfg: policyCfg{Name: "none"}, Shape: shape}, {Cfg: policyCfg{Name: planBloomNoL6}, Shape: shape}}
		policy := planBloomNoL6
		if c.budget > 0 {
			policy = name
			dbs = append(dbs, dbRow{Cfg: policyCfg{Name: name}, Shape: shape})
		}
		r.Shapes = append(r.Shapes, shapeResult{Spec: shapeSpec{Name: c.shape}, DBs: dbs})
		if c.cache > 0 {
			r.CachePlans = append(r.CachePlans, cachePlan{Shape: c.shape, Regime: p1.Name, Cache: c.cache, Index: 50_000, Budget: c.budget, Policy: policy})
		}
		for _, g := range []regimeSpec{p1, p4} {
			for p, x := range map[string]float64{"seek-absent-l6": c.t.absent, "get-present": c.t.present, "seek-mix-l6": c.t.mix} {
				cell := map[string]*cellStats{planBloomNoL6: {NsPerOp: nearReps(100)}}
				if x > 0 && c.budget > 0 {
					cell[name] = &cellStats{NsPerOp: nearReps(100 * x)}
				}
				r.Cells[cellKey{Shape: c.shape, Regime: g.Name, Path: p, Threads: 1}] = cell
			}
		}
	}
	if got := r.pressureCache(p1, "pass"); got != 100_000 {
		t.Fatalf("pressure1's cache %d, want 100000", got)
	}
	i := slices.IndexFunc(r.pressureVerdicts(), func(v verdictRow) bool { return strings.Contains(v.Target, "whatif -cache") })
	if i < 0 {
		t.Fatal("the pressure verdicts lack whatif -cache's")
	}
	v := r.pressureVerdicts()[i]
	if !v.Judged || v.Pass {
		t.Errorf("judged %v, pass %v; want judged, failed", v.Judged, v.Pass)
	}
	var missed []string
	for _, m := range v.Misses {
		missed = append(missed, m[:strings.Index(m, "/")])
	}
	if want := []string{"slowabsent", "slowpresent", "zero"}; !slices.Equal(missed, want) {
		t.Errorf("misses %q, want one for each of %v", v.Misses, want)
	}
	if !slices.ContainsFunc(v.Misses, func(m string) bool { return strings.Contains(m, "budget 0") && strings.Contains(m, "CockroachDB") }) {
		t.Errorf("misses %q: none says budget 0 is CockroachDB's configuration", v.Misses)
	}
	var unjudged []string
	for _, u := range v.Unjudged {
		unjudged = append(unjudged, u[:strings.Index(u, "/")])
	}
	if want := []string{"othercache", "untimed", "untimed", "untimed", "norec"}; !slices.Equal(unjudged, want) {
		t.Errorf("not judged %q, want %v", v.Unjudged, want)
	}
	if !strings.Contains(v.Target, "pressure1") || strings.Contains(v.Target, "pressure4") {
		t.Errorf("target %q: not the smaller cache's", v.Target)
	}
	// The report's cells: the ratio, or budget 0.
	if got := r.cachePlanCell(cellKey{Shape: "pass", Regime: p1.Name, Path: "seek-absent-l6", Threads: 1}); got != f3(0.4) {
		t.Errorf("pass cell %q, want %q", got, f3(0.4))
	}
	if got := r.cachePlanCell(cellKey{Shape: "zero", Regime: p1.Name, Path: "seek-absent-l6", Threads: 1}); got != "budget 0" {
		t.Errorf("zero cell %q, want budget 0", got)
	}
}

// nearReps returns ten repetitions' ratios within 1% of x, for the
// verdict tests' constructed cells.
func nearReps(x float64) []float64 {
	out := make([]float64, 10)
	for i := range out {
		out[i] = x * (1 + 0.002*float64(i%5))
	}
	return out
}
