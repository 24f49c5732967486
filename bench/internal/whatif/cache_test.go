package whatif

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// TestFilterBudget checks plan.CacheBudget's rule against its statement:
// the budget and the indexes take at most half the cache, one byte more
// would not, and the cache cacheFor names leaves exactly the filters asked
// for.
func TestFilterBudget(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	check := func(cache, index uint64) {
		b := plan.CacheBudget(cache, index)
		switch {
		case index >= cache/2 && b != 0:
			t.Errorf("cache %d, indexes %d: budget %d, want 0: the indexes take half or more", cache, index, b)
		case index < cache/2 && (b+index > cache/2 || b+1+index <= cache/2):
			t.Errorf("cache %d, indexes %d: budget %d, want the most that keeps filters and indexes within %d", cache, index, b, cache/2)
		}
	}
	for _, c := range [][2]uint64{{0, 0}, {1, 0}, {2, 0}, {2, 1}, {3, 1}, {100, 49}, {100, 50}, {100, 51}, {100, 200}, {1 << 62, 1}} {
		check(c[0], c[1])
	}
	for range 10000 {
		cache := rng.Uint64N(1 << 40)
		check(cache, rng.Uint64N(cache+1))
		index, filters := rng.Uint64N(1<<40), rng.Uint64N(1<<40)
		if got := plan.CacheBudget(cacheFor(index, filters), index); got != filters {
			t.Fatalf("indexes %d, filters %d: cacheFor gives %d, whose budget is %d", index, filters, cacheFor(index, filters), got)
		}
	}
}

// TestFits checks the fit on caches just below, at and just above the bytes
// of filters and indexes.
func TestFits(t *testing.T) {
	const index, filters = 1000, 500
	for _, c := range []struct {
		cache uint64
		fits  bool
		left  uint64
	}{{index + filters - 1, false, 0}, {index + filters, true, 0}, {index + filters + 1, true, 1}, {1 << 20, true, 1<<20 - 1500}} {
		if ok, left := fits(c.cache, index, filters); ok != c.fits || left != c.left {
			t.Errorf("cache %d: fits %v, %d left for data; want %v, %d", c.cache, ok, left, c.fits, c.left)
		}
	}
}

// cacheLines returns the rows of the block-cache section's table in s by
// name: its "fits" and "left for data" cells.
func cacheLines(t *testing.T, s string) map[string][2]string {
	t.Helper()
	rows := map[string][2]string{}
	re := regexp.MustCompile(`(?m)^ *(none|bloom\(10\) on L0-L5, none on L6 \(CockroachDB\)|bloom\(10\) on every level|the plan below) +[0-9,]+ +[0-9,]+ +[0-9.]+% +(yes|no) +([0-9,]+) `)
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		rows[m[1]] = [2]string{m[2], m[3]}
	}
	return rows
}

// TestWriteCache prints the section for constructed sizes: the fit of each
// configuration on a cache just above and just below its filters and
// indexes, the plan and its Go lines where the rule leaves a budget, and no
// L6 filter with a larger cache where the indexes take half the cache or
// more.
func TestWriteCache(t *testing.T) {
	b10 := bloom.FilterPolicy(10)
	p20 := plan.Plan{cuckoopolicy.FilterPolicy(20), cuckoopolicy.FilterPolicy(20), cuckoopolicy.FilterPolicy(20),
		cuckoopolicy.FilterPolicy(20), cuckoopolicy.FilterPolicy(20), cuckoopolicy.FilterPolicy(16), cuckoopolicy.FilterPolicy(9)}
	const index, crdb, all, planBytes = 10000, 2000, 20000, 15000
	report := func(cache uint64) *Report {
		cr := &cacheReport{Cache: cache, Index: index, Data: 1600000, Filters: all, Budget: plan.CacheBudget(cache, index)}
		cr.Fit.Levels[0] = plan.LevelShape{Keys: 100, Probes: 2}
		cr.Fit.Levels[6] = plan.LevelShape{Keys: 9000, Probes: 1}
		cr.Fit.Current = plan.Estimate{Plan: cockroach(), Bytes: crdb, FalsePositives: 1.02}
		cr.Fit.Bloom10 = plan.Estimate{Plan: plan.Plan{b10, b10, b10, b10, b10, b10, b10}, Bytes: all, FalsePositives: 0.03}
		if cr.Budget > 0 {
			cr.Fit.Estimate = plan.Estimate{Plan: p20, Bytes: min(planBytes, cr.Budget), FalsePositives: 0.01}
		}
		return &Report{cache: cr}
	}
	write := func(r *Report) string {
		var b strings.Builder
		r.writeCache(&b)
		return b.String()
	}
	for _, c := range []struct {
		cache uint64
		want  map[string][2]string
	}{
		{index + crdb - 1, map[string][2]string{"none": {"yes", "1,999"}, "bloom(10) on L0-L5, none on L6 (CockroachDB)": {"no", "0"},
			"bloom(10) on every level": {"no", "0"}}},
		{index + crdb, map[string][2]string{"none": {"yes", "2,000"}, "bloom(10) on L0-L5, none on L6 (CockroachDB)": {"yes", "0"},
			"bloom(10) on every level": {"no", "0"}}},
		{index + all - 1, map[string][2]string{"none": {"yes", "19,999"}, "bloom(10) on L0-L5, none on L6 (CockroachDB)": {"yes", "17,999"},
			"bloom(10) on every level": {"no", "0"}, "the plan below": {"yes", "15,000"}}},
		{index + all, map[string][2]string{"none": {"yes", "20,000"}, "bloom(10) on L0-L5, none on L6 (CockroachDB)": {"yes", "18,000"},
			"bloom(10) on every level": {"yes", "0"}, "the plan below": {"yes", "15,000"}}},
	} {
		s := write(report(c.cache))
		if got := cacheLines(t, s); len(got) != len(c.want) {
			t.Errorf("cache %d: rows %v, want %v:\n%s", c.cache, got, c.want, s)
		} else {
			for name, w := range c.want {
				if got[name] != w {
					t.Errorf("cache %d: %s: fits, left %v; want %v:\n%s", c.cache, name, got[name], w, s)
				}
			}
		}
	}

	// A budget: the plan, its Go lines, no word of a larger cache.
	s := write(report(4 * (index + all)))
	for _, w := range []string{"Recommended budget: " + formatSize(2*(index+all)-index), "\n    " + p20.String() + "\n",
		indent(goLines(p20)), "It takes 15,000 bytes by the model", "Options.MemTableSize"} {
		if !strings.Contains(s, w) {
			t.Errorf("report lacks %q:\n%s", w, s)
		}
	}
	if strings.Contains(s, "larger cache") || strings.Contains(s, "no L6 filter") {
		t.Errorf("report with a budget asks for no L6 filter:\n%s", s)
	}
	// The indexes take half the cache, and more than the whole cache: no
	// L6 filter, CockroachDB's Go lines, and the cache that would do.
	bigger := formatSize(cacheFor(index, all))
	for cache, w := range map[uint64]string{2 * index: "the rule leaves no bytes for filters", index - 1: "Even the indexes"} {
		s := write(report(cache))
		for _, w := range []string{w, "Recommended: no L6 filter (CockroachDB's configuration", "a larger cache: one of " + bigger + " or more",
			indent(goLines(cockroach()))} {
			if !strings.Contains(s, w) {
				t.Errorf("cache %d: report lacks %q:\n%s", cache, w, s)
			}
		}
		if strings.Contains(s, "the plan below") || strings.Contains(s, "Recommended budget") {
			t.Errorf("cache %d: report recommends a plan:\n%s", cache, s)
		}
	}
}

// blockOracle returns the index, data and filter bytes db.SSTables reports
// of a database without virtual tables.
func blockOracle(t *testing.T, dir string) (index, data, filters uint64) {
	t.Helper()
	lv, err := openCopy(t, dir).SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range lv {
		for _, s := range ts {
			if s.Virtual {
				t.Fatal("a virtual table: this oracle counts physical ones")
			}
			index += s.Properties.IndexSize
			data += s.Properties.DataSize
			filters += s.Properties.FilterSize
		}
	}
	return index, data, filters
}

// TestCache runs Analyze with a block cache on a small database: the sizes
// are the tables' own, the plan is plan.Fit's at the rule's budget and within
// it, and the section says so; a cache that the indexes take half of gets
// no L6 filter and the size of a cache that would, which, asked for, gives
// a plan with an L6 filter.
func TestCache(t *testing.T) {
	dir := t.TempDir()
	buildDB(t, dir)
	index, data, filters := blockOracle(t, dir)
	if index == 0 || data == 0 || filters == 0 {
		t.Fatalf("the test database has %d index, %d data, %d filter bytes", index, data, filters)
	}
	analyze := func(cache uint64) (*cacheReport, string) {
		t.Helper()
		before := pebbletest.MustSnapshot(t, dir)
		rep, err := Analyze(Config{Dir: dir, Probes: 1000, Budgets: []int{10}, Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, dir))
		var out bytes.Buffer
		if err := rep.Write(&out); err != nil {
			t.Fatal(err)
		}
		cr := rep.cache
		if cr == nil || cr.Cache != cache || cr.Index != index || cr.Data != data || cr.Filters != filters {
			t.Fatalf("cache section %+v; the tables have %d index, %d data, %d filter bytes", cr, index, data, filters)
		}
		if cr.Budget+cr.Index > cache/2 && cr.Budget > 0 || cr.Fit.Bytes > cr.Budget {
			t.Errorf("cache %d, indexes %d: budget %d, the plan %d bytes by the model", cache, cr.Index, cr.Budget, cr.Fit.Bytes)
		}
		current := &pebble.Options{}
		plan.Apply(current, cockroach())
		want, err := plan.Fit(openCopy(t, dir), plan.Config{MaxFilterBytes: cr.Budget, Fixed: true, UseL6: true, Current: current})
		if err != nil {
			t.Fatal(err)
		}
		if cr.Fit.Estimate != want.Estimate || cr.Fit.Current != want.Current || cr.Fit.Bloom10 != want.Bloom10 || cr.Fit.Levels != want.Levels {
			t.Errorf("cache %d: plan.Fit in whatif %+v, on the database %+v", cache, cr.Fit, want)
		}
		s := out.String()
		sec := s[strings.Index(s, "\nBlock cache (-cache): "):strings.Index(s, "\nFilter plan: ")]
		if testing.Verbose() {
			t.Log(sec)
		}
		return cr, sec
	}

	big, _ := analyze(1 << 30)
	b10 := big.Fit.Bloom10.Bytes
	for _, cache := range []uint64{index / 2, 2 * index, 2*index + 1} {
		cr, s := analyze(cache)
		if cr.Budget != 0 || !strings.Contains(s, "Recommended: no L6 filter") ||
			!strings.Contains(s, "a larger cache: one of "+formatSize(cacheFor(index, b10))+" or more") {
			t.Errorf("cache %d, indexes %d: budget %d; want none, no L6 filter and a larger cache:\n%s", cache, index, cr.Budget, s)
		}
	}
	cr, s := analyze(cacheFor(index, b10))
	if cr.Budget != b10 || cr.Fit.Plan[numLevels-1] == nil || cr.Fit.Bytes == 0 {
		t.Errorf("at the cache the section asks for: budget %d (bloom(10) on every level: %d), plan %v of %d bytes",
			cr.Budget, b10, cr.Fit.Plan, cr.Fit.Bytes)
	}
	for _, w := range []string{"Recommended budget: " + formatSize(b10), "\n    " + cr.Fit.Plan.String() + "\n", indent(goLines(cr.Fit.Plan))} {
		if !strings.Contains(s, w) {
			t.Errorf("section lacks %q:\n%s", w, s)
		}
	}
	if rows := cacheLines(t, s); rows["the plan below"][0] != "yes" || rows["none"][0] != "yes" || len(rows) != 4 {
		t.Errorf("rows %v: want four, the plan and none fitting", rows)
	}
}
