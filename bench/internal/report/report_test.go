package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/keys"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/progress"
)

// TestReportTiny runs every section of the report at a size of seconds so
// the report keeps working.
func TestReportTiny(t *testing.T) {
	out := t.TempDir()
	r, err := run(Tiny(), out, nil, "go test ./bench/internal/report -run TestReportTiny")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"## Targets", "## 1. Load", "## 2. False-positive", "## 3. Lookup",
		"## 4. Build", "## 5. Read amplification", "## 6. Seed systems"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("REPORT.md lacks %q", s)
		}
	}
	for _, png := range []string{"load.png", "fpr.png", "lookup_in-cache.png", "lookup_beyond-cache.png"} {
		if st, err := os.Stat(filepath.Join(out, png)); err != nil || st.Size() == 0 {
			t.Errorf("plot %s: %v", png, err)
		}
	}
	if r.Lookup != nil && len(r.Lookup.FalseNegatives) > 0 {
		t.Errorf("false negatives: %v", r.Lookup.FalseNegatives)
	}
	if len(r.targets()) != 6 {
		t.Errorf("%d targets", len(r.targets()))
	}
	c := Tiny()
	checkFPRSizes(t, c, r.FPR)
	checkFPRShapes(t, c, r.FPR)
	checkBuilds(t, r.Build)
	checkReadAmp(t, c, r.ReadAmp)
	if len(r.Build.BySize) == 0 {
		t.Error("no paired builds by table size")
	}
	for _, p := range r.Build.BySize {
		if !(p.Lowest > 0 && p.Lowest <= p.Median && p.Median <= p.Highest) || p.Rounds == 0 {
			t.Errorf("paired build %+v", p)
		}
	}
	if r.Lookup == nil || len(r.Lookup.BySize) == 0 {
		t.Error("no paired lookups by table size")
	} else {
		for _, p := range r.Lookup.BySize {
			if !(p.Lowest > 0 && p.Lowest <= p.Median && p.Median <= p.Highest) || p.Rounds == 0 {
				t.Errorf("paired lookup %+v", p)
			}
		}
	}
	for _, want := range []string{"By filter size, at B=10", "By key shape", "A smoke test", "Build throughput by table size",
		"MayContain throughput by table size"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("REPORT.md lacks %q", want)
		}
	}
	// A smoke test judges no target and draws no verdict; the verdicts are
	// still computed, and checked here.
	for _, v := range []string{"**PASS**", "**FAIL**", "- Key shape"} {
		if strings.Contains(string(md), v) {
			t.Errorf("the smoke test's REPORT.md says %q", v)
		}
	}
	verdicts := "\n- " + strings.Join(r.verdicts(), "\n- ")
	for _, want := range []string{"- Key shape, B=10: over 3 sets", "- Dynamic filter against ",
		"- Build near the load threshold, 16-byte keys: " + kindHighLoadBuild} {
		if !strings.Contains(verdicts, want) {
			t.Errorf("the verdicts lack %q:%s", want, verdicts)
		}
	}
}

// checkFPRSizes checks the size sweep: a cuckoo and a bloom point per size,
// in that order, each within its budget and with a plausible rate.
func checkFPRSizes(t *testing.T, c Config, f *fprResult) {
	t.Helper()
	if got := f.BySize; len(got) != 2*len(c.FPRSizes) {
		t.Errorf("%d points by size, want %d", len(got), 2*len(c.FPRSizes))
	} else {
		for i, p := range got {
			series := []string{seriesCuckoo, seriesPebbleBloom}[i%2]
			if p.Series != series || p.X != c.FPRSizes[i/2] || p.Queries != f.SizeQueries ||
				p.BitsPerKey > float64(c.FPRSizeBits)+1 || p.FPR <= 0 || p.FPR > 0.1 {
				t.Errorf("point %d: %+v", i, p)
			}
		}
	}
	if pairs := f.sizePairs(); len(pairs) != len(c.FPRSizes) {
		t.Errorf("%d size pairs, want %d", len(pairs), len(c.FPRSizes))
	} else {
		for i, p := range pairs {
			if p[0].Series != seriesCuckoo || p[1].Series != seriesPebbleBloom || p[0].X != c.FPRSizes[i] || p[1].X != c.FPRSizes[i] {
				t.Errorf("size pair %d: %s at %d, %s at %d", i, p[0].Series, p[0].X, p[1].Series, p[1].X)
			}
		}
	}
}

// checkFPRShapes checks the key-shape table: a cuckoo and a bloom point per
// shape and budget, over the same keys and queries, within the budget.
func checkFPRShapes(t *testing.T, c Config, f *fprResult) {
	t.Helper()
	nb, nk := len(c.FPRShapeBits), len(c.FPRShapeKeys)
	if pairs := f.shapePairs(); len(pairs) != len(keys.Shapes)*nk*nb {
		t.Errorf("%d shape pairs, want %d", len(pairs), len(keys.Shapes)*nk*nb)
	} else {
		for i, p := range pairs {
			shape, n, bb := keys.Shapes[i/(nk*nb)].Format, c.FPRShapeKeys[i/nb%nk], c.FPRShapeBits[i%nb]
			for j, x := range p {
				if x.Series != []string{seriesCuckoo, seriesPebbleBloom}[j] || x.Param != shape || x.X != bb || x.Keys != n ||
					x.Queries != f.ShapeQueries || x.BitsPerKey > float64(bb)+1 || x.FPR > 0.1 {
					t.Errorf("shape pair %d, point %d: %+v", i, j, x)
				}
			}
		}
	}
}

// checkBuilds checks that every cuckoo build has a bloom build of its key
// length to be set against.
func checkBuilds(t *testing.T, bd *buildResult) {
	t.Helper()
	for _, p := range bd.Points {
		base := buildBase(p.Kind)
		if _, ok := bd.get(base, p.KeyLen); ok == strings.HasPrefix(p.Kind, "pebble bloom") {
			t.Errorf("build %q, %d-byte keys: base %q found %v", p.Kind, p.KeyLen, base, ok)
		}
	}
}

// checkReadAmp checks that the read-amplification counts are what the
// setup implies: without a filter an absent Get reads about a data block in
// each overlapping table and a seek in L6 one block; a filter is read, and
// spares most of those blocks; a present Get reads at least its own block.
func checkReadAmp(t *testing.T, c Config, ra *readAmpResult) {
	t.Helper()
	if ra == nil {
		t.Fatal("no read-amplification result")
	}
	names, _ := readAmpPolicies(c.RABudgets)
	if len(ra.Rows) != len(names) {
		t.Fatalf("%d read-amplification rows, want %d", len(ra.Rows), len(names))
	}
	none, ok := ra.row("none")
	if !ok {
		t.Fatal("no row without a filter")
	}
	if a := none.AbsentGet; a.DataBlocks < 0.8*float64(c.RATables) || a.DataBlocks > 1.5*float64(c.RATables) ||
		a.FilterBytes != 0 || a.FilterHits != 0 {
		t.Errorf("no filter, absent Get over %d overlapping tables: %+v", c.RATables, a)
	}
	for _, row := range ra.Rows {
		if row.L0Tables != c.RATables || row.L6Tables < 1 {
			t.Errorf("%s: %d L0 tables (want %d), %d L6 tables", row.Policy, row.L0Tables, c.RATables, row.L6Tables)
		}
		if row.PresentGet.DataBlocks < 1 {
			t.Errorf("%s: present Get read %.3f data blocks", row.Policy, row.PresentGet.DataBlocks)
		}
		if row.L6AbsentNoFilter.DataBlocks < 0.8 {
			t.Errorf("%s: L6 seek without the filter read %.3f data blocks", row.Policy, row.L6AbsentNoFilter.DataBlocks)
		}
		if row.Policy == "none" {
			continue
		}
		if a := row.AbsentGet; a.FilterBytes == 0 || a.FilterHits == 0 || row.L0FilterPerKey <= 0 ||
			a.DataBlocks > none.AbsentGet.DataBlocks/2 {
			t.Errorf("%s, absent Get: %+v (filter %.2f bytes per key); without a filter %.3f data blocks",
				row.Policy, a, row.L0FilterPerKey, none.AbsentGet.DataBlocks)
		}
		if s := row.L6AbsentSeek; s.FilterBytes == 0 || s.DataBlocks > row.L6AbsentNoFilter.DataBlocks/2 {
			t.Errorf("%s, L6 seek with UseL6Filters: %+v; without %.3f data blocks", row.Policy, s, row.L6AbsentNoFilter.DataBlocks)
		}
	}
}

// TestPeerSpeed checks the verdict lines that set the dynamic filter beside
// each Go library of its fingerprint size.
func TestPeerSpeed(t *testing.T) {
	rows := []peerRow{
		{Name: "a/lib", FingerprintBits: "8", InsertNs: 50, LookupNegNs: 20, LookupPosNs: 40},
		{Name: "ours cuckoo.Filter", FingerprintBits: "8", InsertNs: 100, LookupNegNs: 10, LookupPosNs: 40},
		{Name: "b/lib", FingerprintBits: "12", InsertNs: 50, LookupNegNs: 20, LookupPosNs: 40},                 // no row of ours
		{Name: "c/lib", FingerprintBits: "16", Note: "not built", InsertNs: 1, LookupNegNs: 1, LookupPosNs: 1}, // skipped
		{Name: "ours cuckoo.Filter", FingerprintBits: "16", InsertNs: 100, LookupNegNs: 10, LookupPosNs: 40},
	}
	got := peerSpeed(rows)
	want := "Dynamic filter against a/lib (8-bit): ours cuckoo.Filter takes 2.00x its time per insert (100.0 against 50.0 ns), 0.50x per absent lookup and 1.00x per present lookup."
	if len(got) != 1 || got[0] != want {
		t.Errorf("peerSpeed = %q, want [%q]", got, want)
	}
}

// TestCuckooBloomNoFalseNegatives fills Mun-Lim filters far past any
// sensible load (wildcards appear) and checks every member is found, and
// that the FPR of a roomy filter is far below 1.
func TestCuckooBloomNoFalseNegatives(t *testing.T) {
	for _, tc := range []struct {
		bitsPerKey float64
		f, k       int
	}{{5, 2, 1}, {5, 4, 1}, {5, 3, 2}, {2, 4, 3}, {12, 8, 2}, {30, 16, 1}, {24, 8, 1}, {40, 8, 2}} {
		const n = 20000
		g := keys.Gen{Seed: uint64(tc.f*100 + tc.k), Width: keys.ShortLen}
		cb, err := newCuckooBloom(tc.bitsPerKey*n, tc.f, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		g.First(n).Each(cb.Add)
		g.First(n).Each(func(k []byte) {
			if !cb.Contains(k) {
				t.Fatalf("bits=%v f=%d k=%d: false negative for %x", tc.bitsPerKey, tc.f, tc.k, k)
			}
		})
		if tc.bitsPerKey >= 24 { // loads below 1/2: few wildcards
			fp := 0
			keys.Gen{Seed: 99, Width: keys.ShortLen}.First(n).Each(func(k []byte) {
				if cb.Contains(k) {
					fp++
				}
			})
			if rate := float64(fp) / n; rate > 0.05 {
				t.Errorf("bits=%v f=%d k=%d: FPR %.4f", tc.bitsPerKey, tc.f, tc.k, rate)
			}
		}
	}
	if _, err := newCuckooBloom(100, 1, 1); err == nil {
		t.Error("f=1 accepted")
	}
}

// TestSimulateLoadPaper checks the simulation against the paper's Table 2 at
// a small size, where loads are a little lower than at 2^25 buckets.
func TestSimulateLoadPaper(t *testing.T) {
	if got := simulateLoad(14, 12, 500, 1, nil); got < 0.93 || got > 0.99 {
		t.Errorf("f=12: load %.4f, want about 0.958", got)
	}
	if got := simulateLoad(14, 2, 500, 1, nil); got > 0.4 {
		t.Errorf("f=2: load %.4f, want about 0.18", got)
	}
}

// TestMeasureLoadWorkers checks that the load table depends on neither the
// number of workers nor the other sizes measured, and keeps only the sizes
// asked for.
func TestMeasureLoadWorkers(t *testing.T) {
	c := Tiny()
	c.LoadRuns, c.LoadStaticRuns = 3, 2
	c.LoadFingerprints = []int{3, 6, 12}
	var got [2]*loadResult
	for i, w := range []int{1, 3} {
		c.LoadWorkers = w
		r, err := measureLoad(c, progress.New(io.Discard))
		if err != nil {
			t.Fatal(err)
		}
		got[i] = r
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Fatalf("1 worker and 3 disagree:\n%+v\n%+v", got[0], got[1])
	}
	r := got[0]
	if len(r.Rows) != 3 || r.Rows[0].F != 3 || r.Rows[1].F != 6 || r.Rows[2].F != 12 {
		t.Fatalf("rows for f=3,6,12 expected, got %+v", r.Rows)
	}
	for _, row := range r.Rows {
		if row.Sim.N != 3 || row.Dynamic.N != 3 {
			t.Errorf("f=%d: %d simulation and %d dynamic runs, want 3", row.F, row.Sim.N, row.Dynamic.N)
		}
		want := 2
		if row.F < 4 {
			want = 0
		}
		if row.Static.N != want || row.StaticMax.N != want {
			t.Errorf("f=%d: %d and %d static runs, want %d", row.F, row.Static.N, row.StaticMax.N, want)
		}
		if row.Sim.Min <= 0 || row.Sim.Max > 1 || row.Dynamic.Min <= 0 || row.Dynamic.Max > 1 {
			t.Errorf("f=%d: load out of (0, 1]: %+v %+v", row.F, row.Sim, row.Dynamic)
		}
	}
	// The cell of f=6, run 2 is the same whether or not f=3 and f=12 are
	// measured beside it.
	c.LoadFingerprints, c.LoadWorkers = []int{6}, 2
	alone, err := measureLoad(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(alone.Rows[0], r.Rows[1]) {
		t.Errorf("f=6 alone %+v, beside others %+v", alone.Rows[0], r.Rows[1])
	}
	for _, fs := range [][]int{{1}, {17}, {6, 6}, {8, 4}} {
		c.LoadFingerprints = fs
		if _, err := measureLoad(c, nil); err == nil {
			t.Errorf("sizes %v accepted", fs)
		}
	}
}

// TestFuseSpaceVerdict checks the space comparison with binary fuse: the
// saving is given relative to the larger of the two filters.
func TestFuseSpaceVerdict(t *testing.T) {
	// Cuckoo at 2% for 8 bits per key and 0.2% for 12: it needs
	// 8 + 4*log(0.02/eps)/log(10) bits per key for a rate eps.
	need := func(eps float64) float64 { return 8 + 4*math.Log(0.02/eps)/math.Log(10) }
	r := &report{Config: Tiny(), FPR: &fprResult{Points: []fprPoint{
		{Series: seriesCuckoo, X: 8, BitsPerKey: 8, FPR: 0.02, Hits: 200, Queries: 10000},
		{Series: seriesCuckoo, X: 12, BitsPerKey: 12, FPR: 0.002, Hits: 20, Queries: 10000},
		{Series: seriesFuse8, X: 8, BitsPerKey: 8.5, FPR: 0.0039, Hits: 39, Queries: 10000},
		{Series: seriesFuse16, X: 16, BitsPerKey: 13, FPR: 0.0039, Hits: 39, Queries: 10000},
	}}}
	n := need(0.0039)
	want := []string{
		fmt.Sprintf("binary fuse takes %.0f%% less space", 100*(n-8.5)/n),
		fmt.Sprintf("cuckoo takes %.0f%% less space", 100*(13-n)/13),
	}
	v := strings.Join(r.verdicts(), "\n")
	for _, w := range want {
		if !strings.Contains(v, w) {
			t.Errorf("verdicts lack %q:\n%s", w, v)
		}
	}
}
