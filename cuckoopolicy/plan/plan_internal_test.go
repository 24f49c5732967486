package plan

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/family"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

var updatePlans = flag.Bool("update-plans", false, "rewrite testdata/plans.golden")

// uniform is a shape of equal tables: keys, tables and probes per level.
func uniform(keys [7]uint64, tables [7]int, probes [7]float64) shape {
	return shape{keys: keys, tables: tables, probes: probes}
}

// testModel is the model of a plan with cfg's defaults but no floor and the
// given cap: what the brute force compares against.
func testModel(maxBits int) model {
	return model{maxBits: maxBits, bloom: true, cuckoo: true}
}

// optimum is the brute-force minimum of the expected false positives over
// every combination of each active level's whole-budget choices within
// budget, found by merging the levels' Pareto fronts exactly (a dominated
// choice is never in an optimum: a point of the front costs no more and
// leaves no more false positives).
func (s *shape) optimum(budget float64, m model) float64 {
	set := []step{{}}
	for l := range 7 {
		if !s.active(l) {
			continue
		}
		var next []step
		for _, a := range set {
			for _, c := range front(s.candidates(l, m)) {
				if b := a.bytes + c.bytes; b <= budget {
					next = append(next, step{bytes: b, fp: a.fp + c.fp})
				}
			}
		}
		set = front(next)
	}
	best := math.Inf(1)
	for _, p := range set {
		best = min(best, p.fp)
	}
	return best
}

// checkPlan asserts what every plan promises on s within budget: within the
// budget by the model, within 1.05x of the brute-force optimum, no active
// level without a filter while what the plan leaves could buy one, and a
// partial step's load one the builder reaches.
func checkPlan(t *testing.T, name string, s shape, budget float64, m model) (fp float64) {
	t.Helper()
	p, fits := s.plan(budget, m)
	if !fits {
		t.Fatalf("%s: the least plan does not fit", name)
	}
	e := s.estimate(p)
	if float64(e.Bytes) > budget+0.5 {
		t.Errorf("%s: plan %v takes %d bytes, over the budget of %.0f", name, p, e.Bytes, budget)
	}
	if opt := s.optimum(budget, m); e.FalsePositives > 1.05*opt+1e-12 {
		t.Errorf("%s: plan %v meets %.6g false positives, the optimum %.6g (%.3fx)", name, p, e.FalsePositives, opt, e.FalsePositives/opt)
	}
	for l := range p {
		if !s.active(l) || p[l] != nil {
			continue
		}
		least := math.Inf(1)
		for _, c := range s.candidates(l, m)[1:] {
			least = min(least, c.bytes)
		}
		if float64(e.Bytes)+least <= budget {
			t.Errorf("%s: plan %v leaves L%d without a filter with %.0f bytes left; one costs %.0f", name, p, l, budget-float64(e.Bytes), least)
		}
	}
	for l, fp := range p {
		if c, ok := fp.(cuckoopolicy.Policy); ok && !(c.LoadFactor >= cuckoopolicy.MinLoadFactor && c.LoadFactor <= family.MaxLoad) {
			t.Errorf("%s: L%d load %v, outside what the builder reaches", name, l, c.LoadFactor)
		}
	}
	return e.FalsePositives
}

// planShapes are LSMs whose plans the tests pin: the issue's small tables,
// an MVCC LSM, an L0-heavy one, a deep one and a steady one, as the model
// sees them (distinct keys per level, tables, probes).
var planShapes = []struct {
	name string
	s    shape
}{
	{"small tables: 20 tables of 100 keys", uniform([7]uint64{0, 0, 0, 0, 0, 2_000, 0}, [7]int{0, 0, 0, 0, 0, 20, 0}, [7]float64{0, 0, 0, 0, 0, 1, 0})},
	{"L0 of 300 overlapping tables of 10 keys", uniform([7]uint64{3_000, 0, 0, 0, 0, 0, 100_000}, [7]int{300, 0, 0, 0, 0, 0, 10}, [7]float64{300, 0, 0, 0, 0, 0, 1})},
	{"mvcc: L5 with three versions a key", uniform([7]uint64{0, 0, 0, 3_000, 30_000, 390_000, 1_000_000}, [7]int{0, 0, 0, 1, 4, 60, 150}, [7]float64{0, 0, 0, 1, 1, 1, 1})},
	{"L0-heavy: ten L0 tables over a steady LSM", uniform([7]uint64{30_000, 0, 0, 976, 3_434, 31_792, 266_865}, [7]int{10, 0, 0, 1, 2, 16, 130}, [7]float64{10, 0, 0, 1, 1, 1, 1})},
	{"deep: L1-L6 at a multiplier of 10", uniform([7]uint64{1_200, 300, 3_000, 30_000, 300_000, 3_000_000, 30_000_000}, [7]int{4, 1, 10, 100, 1_000, 10_000, 100_000}, [7]float64{4, 1, 1, 1, 1, 1, 1})},
	{"steady", uniform([7]uint64{0, 0, 0, 976, 3_434, 31_792, 266_865}, [7]int{0, 0, 0, 1, 2, 16, 130}, [7]float64{0, 0, 0, 1, 1, 1, 1})},
}

// TestPlanNearOptimal checks the plan on the pinned shapes, for Get and with
// L6 filters, at 1 to 32 bits per key of the keys the lookups probe, against
// the brute force over every whole-budget choice. The brute force over seven
// levels takes seconds a budget: by default the deep shape is checked at 10
// bits per key only (every budget with PEBBLE_CUCKOO_LONG=1), and -short
// checks the others at five budgets and the deep one for Get only.
func TestPlanNearOptimal(t *testing.T) {
	for _, tc := range planShapes {
		for _, useL6 := range []bool{false, true} {
			s := tc.s
			if !useL6 {
				s.probes[6] = 0
			}
			budgets := []float64{1, 2, 4, 6, 8, 10, 12, 16, 24, 32}
			deep := strings.HasPrefix(tc.name, "deep")
			switch {
			case deep && useL6 && testing.Short():
				continue // 4.5 s on amd64, minutes under qemu: the default run checks it
			case deep && !testkit.Long():
				budgets = []float64{10}
			case testing.Short():
				budgets = []float64{1, 4, 10, 16, 32}
			}
			for _, bits := range budgets {
				budget := bits * float64(loadedKeys(&s)) / 8
				checkPlan(t, fmt.Sprintf("%s useL6=%v %g bits/key", tc.name, useL6, bits), s, budget, testModel(cuckoopolicy.MaxBitsPerKey))
			}
		}
	}
}

func loadedKeys(s *shape) (n uint64) {
	for l := range 7 {
		if s.active(l) {
			n += s.keys[l]
		}
	}
	return n
}

// TestPlanIssueCases are the cases the hull used to get wrong: a level of
// 20 tables of 100 keys at 10 bits per key (bloom(4) against the optimum's
// cuckoo(9)), and 300 overlapping L0 tables of 10 keys at bloom(10)'s bytes
// on them (no filter at all). The plan must be within 1.05x of the optimum
// and filter every level.
func TestPlanIssueCases(t *testing.T) {
	s := planShapes[0].s
	p, _ := s.plan(10*2_000/8, testModel(cuckoopolicy.MaxBitsPerKey))
	if p[5] == nil {
		t.Fatalf("20 tables of 100 keys at 10 bits per key: plan %v, want a filter", p)
	}
	checkPlan(t, "20x100 at 10 bits", s, 10*2_000/8, testModel(cuckoopolicy.MaxBitsPerKey))

	l0 := planShapes[1].s
	l0.probes[6] = 0
	budget := 0.0
	for range l0.tables[0] {
		budget += bytesOf(bloom.FilterPolicy(10), 10)
	}
	p, _ = l0.plan(budget, testModel(cuckoopolicy.MaxBitsPerKey))
	if p[0] == nil {
		t.Fatalf("300 L0 tables of 10 keys at bloom(10)'s %.0f bytes: plan %v, want a filter on L0", budget, p)
	}
	checkPlan(t, "300x10 L0 at bloom(10)'s bytes", l0, budget, testModel(cuckoopolicy.MaxBitsPerKey))
}

// TestFrontAndHull checks the two properties the greedy relies on, over
// random point sets: the front keeps only points that no cheaper point
// beats, by rising bytes and falling false positives, and the hull is
// convex (each step saves less per byte than the one before) with every
// front point on or above it.
func TestFrontAndHull(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	for trial := range 500 {
		pts := make([]step, 1+r.IntN(40))
		for i := range pts {
			pts[i] = step{bytes: float64(r.IntN(100)), fp: float64(r.IntN(100))}
		}
		f := front(pts)
		for _, p := range pts {
			dominated := slices.ContainsFunc(pts, func(q step) bool {
				return q.bytes <= p.bytes && q.fp <= p.fp && (q.bytes < p.bytes || q.fp < p.fp)
			})
			onFront := slices.Contains(f, p)
			if dominated == onFront {
				t.Fatalf("trial %d: point %v dominated=%v, on the front=%v: front %v of %v", trial, p, dominated, onFront, f, pts)
			}
		}
		for i := 1; i < len(f); i++ {
			if !(f[i].bytes > f[i-1].bytes && f[i].fp < f[i-1].fp) {
				t.Fatalf("trial %d: front %v not rising in bytes and falling in false positives", trial, f)
			}
		}
		h := hull(f)
		for i := 2; i < len(h); i++ {
			g1 := (h[i-2].fp - h[i-1].fp) / (h[i-1].bytes - h[i-2].bytes)
			g2 := (h[i-1].fp - h[i].fp) / (h[i].bytes - h[i-1].bytes)
			if g2 >= g1 {
				t.Fatalf("trial %d: hull %v not convex at %d (%g then %g per byte)", trial, h, i, g1, g2)
			}
		}
		for _, p := range f {
			j := 0
			for j+1 < len(h) && h[j+1].bytes < p.bytes {
				j++
			}
			if j+1 < len(h) && h[j].bytes <= p.bytes {
				a, b := h[j], h[j+1]
				at := a.fp + (b.fp-a.fp)*(p.bytes-a.bytes)/(b.bytes-a.bytes)
				if p.fp < at-1e-9 {
					t.Fatalf("trial %d: front point %v below the hull %v", trial, p, h)
				}
			}
		}
	}
}

// TestPlanPartialStep checks the fractional last step: a budget between two
// whole cuckoo budgets on one level buys a cuckoopolicy.Policy between them, within the
// budget and with fewer false positives than the lower budget, and the
// blocks the writer builds for it take no more than the model says.
func TestPlanPartialStep(t *testing.T) {
	s := uniform([7]uint64{0, 0, 0, 0, 0, 100_000, 0}, [7]int{0, 0, 0, 0, 0, 10, 0}, [7]float64{0, 0, 0, 0, 0, 1, 0})
	lo, _ := s.levelCost(5, cuckoopolicy.FilterPolicy(12))
	hi, _ := s.levelCost(5, cuckoopolicy.FilterPolicy(13))
	budget := (lo + hi) / 2
	p, _ := s.plan(budget, testModel(cuckoopolicy.MaxBitsPerKey))
	pol, ok := p[5].(cuckoopolicy.Policy)
	if !ok {
		t.Fatalf("plan %v at %.0f bytes (between cuckoo(12)'s %.0f and cuckoo(13)'s %.0f): want a Policy on L5", p, budget, lo, hi)
	}
	e := s.estimate(p)
	_, fp12 := s.levelCost(5, cuckoopolicy.FilterPolicy(12))
	if float64(e.Bytes) > budget || e.FalsePositives >= fp12 {
		t.Errorf("partial %v: %d bytes, %.3g false positives; want at most %.0f bytes and fewer than cuckoo(12)'s %.3g", pol, e.Bytes, e.FalsePositives, budget, fp12)
	}
	r := testkit.Rand(testkit.Seed(t), 1)
	block := build(pol, testkit.RandomKeys(r, 10_000))
	if got, want := float64(len(block)), bytesOf(pol, 10_000); got > want {
		t.Errorf("partial %v: the writer's block takes %.0f bytes, the model %.0f", pol, got, want)
	}
}

// TestPlanBytes builds the filters plans choose over tables of random keys,
// small ones included, and checks that the blocks take at most 1.01x the
// budget.
func TestPlanBytes(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 3)
	s := shape{
		tables: [7]int{3, 0, 0, 0, 4, 10, 20},
		probes: [7]float64{3, 0, 0, 0, 1, 1, 1},
		sizes: [7][]group{
			{{60, 2}, {700, 1}},
			nil, nil, nil,
			{{150, 2}, {2_000, 2}},
			{{5_000, 10}},
			{{8_000, 20}},
		},
	}
	for l, g := range s.sizes {
		for _, x := range g {
			s.keys[l] += x.keys * uint64(x.count)
		}
	}
	keys := map[uint64]*testkit.Keys{}
	for _, bits := range []float64{2, 6, 10, 14, 20} {
		for _, useL6 := range []bool{false, true} {
			s := s
			if !useL6 {
				s.probes[6] = 0
			}
			budget := bits * float64(loadedKeys(&s)) / 8
			p, _ := s.plan(budget, testModel(cuckoopolicy.MaxBitsPerKey))
			var got int
			for l, fp := range p {
				if !s.active(l) {
					continue
				}
				for _, g := range s.sizes[l] {
					if keys[g.keys] == nil {
						keys[g.keys] = testkit.RandomKeys(r, int(g.keys))
					}
					if fp != nil {
						got += g.count * len(build(fp, keys[g.keys]))
					}
				}
			}
			if float64(got) > 1.01*budget {
				t.Errorf("%g bits/key, useL6=%v: plan %v takes %d bytes, over 1.01x the budget of %.0f", bits, useL6, p, got, budget)
			}
		}
	}
}

// TestPlanFloorAndCap checks the diminishing returns: with a ceiling far
// above need, no level passes the cap, and the plan stops short of the
// ceiling; a lower floor spends more.
func TestPlanFloorAndCap(t *testing.T) {
	s := planShapes[3].s
	s.probes[6] = 0
	m := model{maxBits: DefaultCapBitsPerKey, minGain: DefaultMinGain / 1024, bloom: true, cuckoo: true}
	p, _ := s.plan(1<<30, m)
	e := s.estimate(p)
	for l, fp := range p {
		if f, _, _, _ := family.Layout(fp); f > family.BudgetWidth(DefaultCapBitsPerKey, true) {
			t.Errorf("plan %v: L%d fingerprint of %d bits, past the cap of %d bits per key", p, l, f, DefaultCapBitsPerKey)
		}
	}
	if e.Bytes >= 1<<30 {
		t.Errorf("plan %v spends the whole ceiling", p)
	}
	m.minGain /= 1000
	if e2 := s.estimate(first(s.plan(1<<30, m))); e2.Bytes < e.Bytes {
		t.Errorf("a lower floor spent less: %d bytes against %d", e2.Bytes, e.Bytes)
	}
}

func first(p Plan, _ bool) Plan { return p }

// TestPlanGolden pins the plans of the pinned shapes at bloom(10)'s bytes
// on the levels Get loads and on every level, with the package defaults.
// Run with -update-plans after a deliberate change.
func TestPlanGolden(t *testing.T) {
	var b strings.Builder
	for _, tc := range planShapes {
		for _, useL6 := range []bool{false, true} {
			s := tc.s
			cfg := Config{UseL6: useL6}.withDefaults()
			b10 := bloom.FilterPolicy(10)
			probe := s
			if !useL6 {
				probe.probes[6] = 0
			}
			cfg.MaxFilterBytes = probe.estimate(Plan{b10, b10, b10, b10, b10, b10, b10}).Bytes
			cfg.Fixed = true
			all := Plan{b10, b10, b10, b10, b10, b10, b10}
			r := s.report(cfg, all, all, cfg.model(), 0)
			fmt.Fprintf(&b, "%s, useL6=%v, %d bytes:\n  %v\n  %d bytes, %.4g false positives; bloom(10) %.4g; best bloom-only %.4g (%d bytes)\n",
				tc.name, useL6, cfg.MaxFilterBytes, r.Plan, r.Bytes, r.FalsePositives, r.Bloom10.FalsePositives, r.BloomOnly.FalsePositives, r.BloomOnly.Bytes)
		}
	}
	path := filepath.Join("testdata", "plans.golden")
	if *updatePlans {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-plans)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("plans differ from %s (run with -update-plans after a deliberate change):\n%s", path, got)
	}
}

// FuzzPlan draws LSM shapes (1 to 7 levels, tables of 50 to 1M keys, up to
// 12 L0 sublevels) and budgets of 1 to 32 bits per key, and checks each
// plan's promises: within the budget, within 1.05x of the brute-force
// optimum, no level left unfiltered that the budget left could filter, and
// false positives that never rise with the budget.
func FuzzPlan(f *testing.F) {
	f.Add(uint64(1), uint8(10))
	f.Add(uint64(2), uint8(1))
	f.Add(uint64(3), uint8(32))
	f.Fuzz(func(t *testing.T, seed uint64, bits uint8) {
		r := rand.New(rand.NewPCG(seed, 7))
		s := randomShape(r)
		b := float64(bits%32 + 1)
		m := testModel(cuckoopolicy.MaxBitsPerKey)
		budget := b * float64(loadedKeys(&s)) / 8
		fp := checkPlan(t, fmt.Sprintf("seed %d, %g bits/key, shape %+v", seed, b, s), s, budget, m)
		if more := checkPlan(t, fmt.Sprintf("seed %d, %g bits/key, shape %+v", seed, b+1, s), s, budget*(b+1)/b, m); more > fp*(1+1e-9) {
			t.Errorf("seed %d: %.6g false positives at %g bits/key, %.6g at %g", seed, fp, b, more, b+1)
		}
	})
}

// randomShape draws an LSM: some of L1-L6 populated, tables of 50 to 1M keys
// (one size a level, or two), L0 sublevels probed each.
func randomShape(r *rand.Rand) shape {
	var s shape
	for l := range 7 {
		if r.IntN(2) == 0 && l != 6 {
			continue
		}
		per := uint64(math.Exp(math.Log(50) + r.Float64()*math.Log(1e6/50)))
		tables := 1 + r.IntN(20)
		s.tables[l] = tables
		s.sizes[l] = []group{{per, tables}}
		if r.IntN(3) == 0 {
			s.sizes[l] = append(s.sizes[l], group{max(per/7, 50), 1 + r.IntN(5)})
			s.tables[l] += s.sizes[l][1].count
		}
		for _, g := range s.sizes[l] {
			s.keys[l] += g.keys * uint64(g.count)
		}
		s.probes[l] = 0.2 + 0.8*r.Float64()
		if l == 0 {
			s.probes[l] = float64(1 + r.IntN(min(s.tables[l], 12)))
		}
	}
	if r.IntN(2) == 0 {
		s.probes[6] = 0
	}
	return s
}

// TestProgressive checks the preset's promise by the model on LSMs of the
// usual shape: the workload's steady LSM, the same under ten overlapping L0
// tables (burst), and every level from L1 to L6 at a multiplier of 10 under
// four L0 sublevels (deep). On each, no more filter bytes than Pebble's
// progressive bloom plan, at most 0.15x its false positives for Get and
// 0.95x where L6 filters are read.
func TestProgressive(t *testing.T) {
	steady := planShapes[5].s
	burst := steady
	burst.keys[0], burst.tables[0], burst.probes[0] = 10*3_000, 10, 10
	deep := uniform([7]uint64{4 * 3_000, 30_000, 300_000, 3_000_000, 3_000_000, 30_000_000, 300_000_000}, [7]int{4, 1, 10, 100, 100, 1_000, 10_000}, [7]float64{4, 1, 1, 1, 1, 1, 1})
	b := func(n int) pebble.FilterPolicy { return bloom.FilterPolicy(n) }
	bloomProgressive := Plan{b(16), b(16), b(16), b(16), b(14), b(10), b(8)}
	for name, s := range map[string]shape{"steady": steady, "burst": burst, "deep": deep} {
		all := s.estimate(Progressive())
		ball := s.estimate(bloomProgressive)
		if all.Bytes > ball.Bytes {
			t.Errorf("%s: Progressive takes %d bytes, bloom-progressive %d", name, all.Bytes, ball.Bytes)
		}
		for _, useL6 := range []bool{false, true} {
			s := s
			if !useL6 {
				s.probes[6] = 0
			}
			fp, bfp := s.estimate(Progressive()).FalsePositives, s.estimate(bloomProgressive).FalsePositives
			want := 0.15
			if useL6 {
				want = 0.95
			}
			if fp > want*bfp {
				t.Errorf("%s, useL6=%v: Progressive %.5f false positives per absent lookup, bloom-progressive %.5f: ratio %.3f, want at most %.2f", name, useL6, fp, bfp, fp/bfp, want)
			}
		}
	}
}

// TestReadShape reads a database whose keys have three versions each (the
// comparer splits at '@'), on L6 and, for a third of the prefixes, newer
// versions in an L0 table, under two L0 tables that span the key space:
// each level's filters hold one key per prefix, the empty levels between L0
// and L6 are projected, and an absent lookup probes both spanning L0 tables,
// the versions' table where it covers the lookup, and L6.
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
	Apply(opts, Plan{})
	db, err := pebble.Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
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
	for i := range prefixes / 3 {
		for v := range versions {
			set(fmt.Sprintf("k%06d@%d", i, v+versions))
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		set("j")
		set("l")
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	s, _, err := readShape(db)
	if err != nil {
		t.Fatal(err)
	}
	near := func(got, want float64) bool { return got >= 0.9*want && got <= 1.1*want }
	if !near(float64(s.keys[6]), prefixes) || !near(float64(s.keys[0]), prefixes/3+4) || s.tables[0] != 3 {
		t.Errorf("keys %v, tables %v: want about %d on L6 and %d on L0 (one a prefix) in 3 tables", s.keys, s.tables, prefixes, prefixes/3+4)
	}
	// Positions follow the entries: half of them (the versions' table and
	// the third of L6 it covers) fall in the versions' table.
	if !near(s.probes[0], 2.5) || !near(s.probes[6], 1) {
		t.Errorf("probes %v: want about 2.5 on L0 and 1 on L6", s.probes)
	}
	// The LSM that exists: no keys for the empty levels that may form.
	for l := 1; l < 6; l++ {
		if s.projected[l] || s.keys[l] != 0 {
			t.Errorf("L%d: projected %v, %d keys; want an empty level left empty", l, s.projected[l], s.keys[l])
		}
	}
	db.Close()
	if _, _, err := readShape(db); !errors.Is(err, ErrClosed) {
		t.Errorf("readShape on a closed database: %v, want ErrClosed", err)
	}
}

// TestReadShapeEmptyKey reads a database whose first key is the empty key,
// thirty times: the same shape every time.
func TestReadShapeEmptyKey(t *testing.T) {
	opts := &pebble.Options{FS: vfs.NewMem(), DisableAutomaticCompactions: true, Logger: testLogger{t}}
	db, err := pebble.Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 5000 {
		k := fmt.Appendf(nil, "%06d", i)
		if i == 0 {
			k = nil
		}
		if err := db.Set(k, []byte("v"), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Compact(context.Background(), nil, []byte("~"), false); err != nil {
		t.Fatal(err)
	}
	first, _, err := readShape(db)
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		s, _, err := readShape(db)
		if err != nil || fmt.Sprint(s) != fmt.Sprint(first) {
			t.Fatalf("readShape: %+v, %v; first %+v", s, err, first)
		}
	}
}

type testLogger struct{ t *testing.T }

func (l testLogger) Infof(string, ...any)         {}
func (l testLogger) Errorf(f string, args ...any) { l.t.Logf(f, args...) }
func (l testLogger) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
