package cuckoopolicy

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// rate is a policy's false-positive rate by the embedded curves; a Policy's
// by theory at its configured width and load.
func rate(p pebble.FilterPolicy) float64 {
	switch v := p.(type) {
	case nil:
		return 1
	case FilterPolicy:
		return cuckooFPR[clampBudget(int(v))]
	case bloom.FilterPolicy:
		return bloomFPR[v]
	case Policy:
		c := v.config()
		return testkit.FPR(c.f, c.load)
	}
	return 1
}

// bitsPerKey is a policy's filter bits per key on large tables.
func bitsPerKey(p pebble.FilterPolicy) float64 {
	switch v := p.(type) {
	case nil:
		return 0
	case FilterPolicy:
		return float64(clampBudget(int(v)))
	case bloom.FilterPolicy:
		return float64(v)
	case Policy:
		c := v.config()
		return float64(c.f-1) / c.load
	}
	return 0
}

// cost returns a plan's expected false positives per absent lookup and its
// filter bytes on s, by the model PlanFor optimises.
func (s shape) cost(p Plan, useL6 bool) (fp, bytes float64) {
	for l := range p {
		if s.keys[l] == 0 || (l == 6 && !useL6) {
			continue
		}
		fp += s.probes[l] * rate(p[l])
		bytes += float64(s.keys[l]) * bitsPerKey(p[l]) / 8
		if _, ok := p[l].(bloom.FilterPolicy); ok {
			bytes += float64(s.tables[l] * bloomTableBytes)
		}
	}
	return fp, bytes
}

// optimum is the brute-force minimum of the expected false positives over
// every choice of each level's point (hull or not) within maxBytes.
func (s shape) optimum(maxBytes float64, useL6 bool) float64 {
	if !useL6 {
		s.probes[6] = 0
	}
	best := math.Inf(1)
	var walk func(l int, fp, bytes float64)
	walk = func(l int, fp, bytes float64) {
		if bytes > maxBytes {
			return
		}
		if l == 7 {
			best = min(best, fp)
			return
		}
		if s.probes[l] == 0 || s.keys[l] == 0 {
			walk(l+1, fp, bytes)
			return
		}
		walk(l+1, fp+s.probes[l], bytes)
		for b := 1; b <= MaxBitsPerKey; b++ {
			kb := float64(s.keys[l]) * float64(b) / 8
			walk(l+1, fp+s.probes[l]*bloomFPR[b], bytes+kb+float64(s.tables[l]*bloomTableBytes))
			if b >= MinBitsPerKey {
				walk(l+1, fp+s.probes[l]*cuckooFPR[b], bytes+kb)
			}
		}
	}
	walk(0, 0, 0)
	return best
}

// maxStep is the largest byte cost of one step of any level's hull.
func (s shape) maxStep(useL6 bool) float64 {
	m := 0.0
	for l := range 7 {
		if s.keys[l] == 0 || (l == 6 && !useL6) {
			continue
		}
		h := s.hull(l)
		for i := 1; i < len(h); i++ {
			m = max(m, h[i].bytes-h[i-1].bytes)
		}
	}
	return m
}

// TestPlanNearOptimal checks the greedy plan against brute force over the
// integer budgets on small LSMs: within the budget, and at least as good as
// the optimum with one hull step less of budget, the bound greedy on convex
// hulls guarantees. (The plan may beat the integer optimum itself: its last
// step may be a fraction of a budget.)
func TestPlanNearOptimal(t *testing.T) {
	shapes := []shape{
		{keys: [7]uint64{0, 0, 0, 0, 1_000, 10_000, 100_000}, tables: [7]int{0, 0, 0, 0, 1, 4, 40}, probes: [7]float64{0, 0, 0, 0, 1, 1, 1}},
		{keys: [7]uint64{2_000, 0, 0, 0, 0, 30_000, 270_000}, tables: [7]int{4, 0, 0, 0, 0, 10, 90}, probes: [7]float64{4, 0, 0, 0, 0, 1, 1}},
		{keys: [7]uint64{50_000, 0, 0, 0, 0, 0, 100_000}, tables: [7]int{10, 0, 0, 0, 0, 0, 20}, probes: [7]float64{10, 0, 0, 0, 0, 0, 1}},
	}
	for i, s := range shapes {
		for _, useL6 := range []bool{false, true} {
			for _, bitsPerKey := range []float64{1, 4, 8, 10, 16} {
				total := 0.0
				for l := range 7 {
					total += float64(s.keys[l])
				}
				budget := bitsPerKey * total / 8
				p := s.plan(uint64(budget), useL6)
				fp, bytes := s.cost(p, useL6)
				name := fmt.Sprintf("shape %d useL6=%v %g bits/key: %v", i, useL6, bitsPerKey, p)
				if bytes > budget {
					t.Errorf("%s: %.0f bytes, over the budget of %.0f", name, bytes, budget)
				}
				for l, fp := range p {
					if c, ok := fp.(Policy); ok && !(c.LoadFactor >= MinLoadFactor && c.LoadFactor <= maxLoad) {
						t.Errorf("%s: L%d load %v, outside what the builder reaches", name, l, c.LoadFactor)
					}
				}
				if lo := s.optimum(budget-s.maxStep(useL6), useL6); fp > lo*(1+1e-9) {
					t.Errorf("%s: %.6g false positives, worse than the optimum %.6g with one step less", name, fp, lo)
				}
			}
		}
	}
}

// TestPlanLevels checks the plan's shape rules: no filter on L6 for Get,
// empty levels above the first populated one take its policy, an empty level
// below a populated one the policy above it, a zero budget no filters.
func TestPlanLevels(t *testing.T) {
	s := shape{
		keys:   [7]uint64{0, 0, 0, 1_000, 0, 30_000, 300_000},
		tables: [7]int{0, 0, 0, 1, 0, 10, 100},
		probes: [7]float64{0, 0, 0, 1, 0, 1, 1},
	}
	p := s.plan(400_000, false)
	if p[6] != nil {
		t.Errorf("plan for Get: L6 %v, want none", p[6])
	}
	for l := range 3 {
		if p[l] != p[3] {
			t.Errorf("plan %v: empty L%d has %v, want L3's %v", p, l, p[l], p[3])
		}
	}
	if p[4] != p[3] || p[3] == nil || p[5] == nil {
		t.Errorf("plan %v: want L3 and L5 filtered, empty L4 as L3", p)
	}
	if q := s.plan(400_000, true); q[6] == nil {
		t.Errorf("plan with L6 filters: %v, want a filter on L6", q)
	}
	if q := s.plan(0, true); q != (Plan{}) {
		t.Errorf("zero budget: %v, want no filters", q)
	}
	if q := (shape{}).plan(1<<30, true); q != (Plan{}) {
		t.Errorf("empty LSM: %v, want no filters", q)
	}
}

// TestPlanBytes builds the filters a plan chooses over tables of random keys
// and checks that they take at most 1.03 times the budget.
func TestPlanBytes(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	const perTable = 5_000
	s := shape{
		keys:   [7]uint64{2 * perTable, 0, 0, 0, 2 * perTable, 10 * perTable, 40 * perTable},
		tables: [7]int{2, 0, 0, 0, 2, 10, 40},
		probes: [7]float64{2, 0, 0, 0, 1, 1, 1},
	}
	for _, bitsPerKey := range []float64{2, 6, 10, 14} {
		budget := bitsPerKey * 54 * perTable / 8
		for _, useL6 := range []bool{false, true} {
			p := s.plan(uint64(budget), useL6)
			var bytes int
			for l, fp := range p {
				if fp == nil || s.keys[l] == 0 || (l == 6 && !useL6) {
					continue
				}
				for range s.tables[l] {
					bytes += len(build(fp, testkit.RandomKeys(r, perTable)))
				}
			}
			if float64(bytes) > 1.03*budget {
				t.Errorf("%g bits/key, useL6=%v: plan %v takes %d bytes, over 1.03x the budget of %.0f", bitsPerKey, useL6, p, bytes, budget)
			}
		}
	}
}

// TestProgressive checks the preset's promise by the embedded curves on LSMs
// of the usual shape: the workload's steady LSM (L3 to L6 as measured), the
// same under ten overlapping L0 tables (burst), and every level from L1 to L6
// at a multiplier of 10 under four L0 sublevels (deep). On each, no more
// filter bytes than Pebble's progressive bloom plan, at most 0.15x its false
// positives for Get and 0.95x where L6 filters are read.
func TestProgressive(t *testing.T) {
	steady := shape{
		keys:   [7]uint64{0, 0, 0, 976, 3_434, 31_792, 266_865},
		tables: [7]int{0, 0, 0, 1, 2, 16, 130},
		probes: [7]float64{0, 0, 0, 1, 1, 1, 1},
	}
	burst := steady
	burst.keys[0], burst.tables[0], burst.probes[0] = 10*3_000, 10, 10
	deep := shape{
		keys:   [7]uint64{4 * 300, 300, 3_000, 30_000, 300_000, 3_000_000, 30_000_000},
		tables: [7]int{4, 1, 2, 15, 150, 1_500, 15_000},
		probes: [7]float64{4, 1, 1, 1, 1, 1, 1},
	}
	b := func(n int) pebble.FilterPolicy { return bloom.FilterPolicy(n) }
	bloomProgressive := Plan{b(16), b(16), b(16), b(16), b(14), b(10), b(8)}
	for name, s := range map[string]shape{"steady": steady, "burst": burst, "deep": deep} {
		_, bytes := s.cost(Progressive(), true)
		_, bbytes := s.cost(bloomProgressive, true)
		if bytes > bbytes {
			t.Errorf("%s: Progressive takes %.0f bytes, bloom-progressive %.0f", name, bytes, bbytes)
		}
		for _, useL6 := range []bool{false, true} {
			fp, _ := s.cost(Progressive(), useL6)
			bfp, _ := s.cost(bloomProgressive, useL6)
			want := 0.15
			if useL6 {
				want = 0.95
			}
			t.Logf("%s, useL6=%v: Progressive %.5f, bloom-progressive %.5f false positives per absent lookup (%.3fx); bytes %.3fx", name, useL6, fp, bfp, fp/bfp, bytes/bbytes)
			if fp > want*bfp {
				t.Errorf("%s, useL6=%v: Progressive %.5f false positives per absent lookup, bloom-progressive %.5f: ratio %.3f, want at most %.2f", name, useL6, fp, bfp, fp/bfp, want)
			}
		}
	}
}

// TestReadShape reads the shape of a database whose keys have three versions
// each (the comparer splits at '@'), under two L0 tables that span the key
// space: the bottom level's filters hold one key per prefix, and an absent
// lookup probes both L0 tables and one L6 table.
func TestReadShape(t *testing.T) {
	cmp := *pebble.DefaultComparer
	cmp.Name = "cuckoopolicy.test.versions"
	cmp.Split = func(k []byte) int {
		if i := bytes.IndexByte(k, '@'); i >= 0 {
			return i
		}
		return len(k)
	}
	opts := &pebble.Options{FS: vfs.NewMem(), Comparer: &cmp, DisableAutomaticCompactions: true, Logger: testLogger{t}}
	ApplyPlan(opts, Plan{})
	db, err := pebble.Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const prefixes, versions = 3000, 3
	set := func(k string) {
		if err := db.Set([]byte(k), []byte("v"), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	for i := range prefixes {
		for v := range versions {
			set(fmt.Sprintf("k%06d@%d", i, v))
		}
	}
	if err := db.Compact(context.Background(), []byte("k"), []byte("l"), false); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		set("j")
		set("l")
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	s, err := readShape(db)
	if err != nil {
		t.Fatal(err)
	}
	if s.keys[6] != prefixes || s.tables[0] != 2 || s.keys[0] != 4 {
		t.Errorf("shape %+v: want %d keys on L6 (one a prefix) and 2 L0 tables of 2 entries", s, prefixes)
	}
	if s.probes[0] != 2 || s.probes[6] != 1 {
		t.Errorf("probes %v: want 2 on L0 (both tables span every key) and 1 on L6", s.probes)
	}
}

type testLogger struct{ t *testing.T }

func (l testLogger) Infof(string, ...any)         {}
func (l testLogger) Errorf(f string, args ...any) { l.t.Logf(f, args...) }
func (l testLogger) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
