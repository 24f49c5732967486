package workload

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPressureCounts runs the pressure regime at 4% on the deep shape (a
// synthetic layout: no loading) and checks what its report rests on: every
// listed policy and the A/A twin timed on every pressure path (whatif
// -cache's plan for the cache too, where its budget is not 0), on an LSM
// identical to bloom(10)'s; the block cache at its share of the database,
// with the memtables' reservation on top; the file reads by block kind
// adding up to the cache's own misses (so that they are the misses by
// kind), each waiting the device delay; filter lookups only where a level
// has filters; no key lost; the lookups section beside the pressure tables.
func TestPressureCounts(t *testing.T) {
	cfg := Defaults("tiny")
	cfg.Ops, cfg.Reps, cfg.CountOps, cfg.Budgets = 30, 2, 200, []int{10}
	cfg.Delay = time.Microsecond // the test counts blocks; it does not time the device
	cfg.Shapes, cfg.Regimes, cfg.LoadRounds, cfg.PressureShapes = []string{"deep"}, []string{"pressure4"}, 0, nil
	cfg.Out = t.TempDir()
	cfg.Dir = filepath.Join(t.TempDir(), "data")
	res, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost != 0 || res.Phantom != 0 {
		t.Fatalf("%d keys lost, %d absent keys found", res.Lost, res.Phantom)
	}
	g := allRegimes[slices.IndexFunc(allRegimes, func(g regimeSpec) bool { return g.Name == "pressure4" })]
	none, _ := res.db("deep", "none")
	if got, want := res.pressureCache(g, "deep"), int64(0.04*float64(unfilteredBytes(none.Shape))); got != want {
		t.Errorf("pressure4 cache %d bytes for blocks, want 4%% of %d = %d", got, unfilteredBytes(none.Shape), want)
	}
	if res.MemtableReserve <= 0 {
		t.Errorf("memtables' reservation %d, want it measured", res.MemtableReserve)
	}
	if ok, why := res.identical("deep", twinName, planBase); !ok {
		t.Errorf("the twin's LSM is not bloom(10)'s: %s", why)
	}
	// whatif -cache's plan for the regime's cache, timed where its budget
	// is not 0 (bloom(10)-noL6 stands for it where it is).
	names := append(slices.Clone(pressurePolicies), twinName)
	cp, ok := res.cachePlan("deep", "pressure4")
	if !ok || len(res.CachePlans) != 1 {
		t.Fatalf("whatif -cache recommendations %+v, want pressure4's alone", res.CachePlans)
	}
	if cp.Budget > 0 {
		names = append(names, cp.Policy)
	}
	for _, p := range pressurePaths {
		k := cellKey{Shape: "deep", Regime: "pressure4", Path: p, Threads: cfg.Threads[0]}
		cell := res.Cells[k]
		for _, n := range names {
			cs := cell[n]
			if cs == nil || len(cs.NsPerOp) != cfg.Reps {
				t.Errorf("%v %s: not timed in every repetition", k, n)
				continue
			}
			var reads int64
			for _, x := range cs.IO.Reads {
				reads += x
			}
			if cs.IO.Waited < reads*int64(cfg.Delay) {
				t.Errorf("%v %s: %d reads waited %d ns in all, less than the delay each", k, n, reads, cs.IO.Waited)
			}
			if reads != cs.Cache.Misses {
				t.Errorf("%v %s: %d file reads (by kind %v), %d block-cache misses", k, n, reads, cs.IO.Reads, cs.Cache.Misses)
			}
			if probes := cs.Hits + cs.Misses; (n == "none") != (probes == 0) || cs.Cache.Hits+cs.Cache.Misses < probes {
				t.Errorf("%v %s: %d filter probes, %d cache lookups", k, n, probes, cs.Cache.Hits+cs.Cache.Misses)
			}
		}
		if st := res.timeRatio(k, twinName, planBase); st.N != cfg.Reps {
			t.Errorf("%v: twin ratio over %d repetitions, want %d", k, st.N, cfg.Reps)
		}
	}
	report, err := os.ReadFile(filepath.Join(cfg.Out, "WORKLOAD.md"))
	if err != nil {
		t.Fatal(err)
	}
	if cp.Budget > 0 && !strings.Contains(string(report), " | "+mib(float64(cp.Budget))+" | "+cp.Policy+" | ") {
		t.Errorf("the report lacks the budget %s and the plan %s for pressure4's cache", mib(float64(cp.Budget)), cp.Policy)
	}
	for _, s := range []string{"## Memory pressure", "| deep | pressure4 | seek-mix-l6 | 1 | bloom(10)-twin |", "| deep | pressure4 | absent | 1 | get-absent | bloom(10)-noL6 |", "| deep | pressure4 | mix | 1 | lookup-mix | cuckoo(10)", "| deep | pressure4 | " + mib(float64(cp.Cache)) + " | " + mib(float64(cp.Index))} {
		if !strings.Contains(string(report), s) {
			t.Errorf("the report lacks %q", s)
		}
	}
}

// TestTwinRule checks the twin rule on made-up cells: a ratio is slower
// only if its interval lies above 1.02 and above the twin's interval in the
// same cell; with no twin, above 1.02 alone.
func TestTwinRule(t *testing.T) {
	k := cellKey{Shape: "s", Regime: "slow", Path: "get-absent", Threads: 1}
	k2 := k
	k2.Path = "get-present"
	r := &Result{Cells: map[cellKey]map[string]*cellStats{
		k: {planBase: {NsPerOp: nearReps(100)}, twinName: {NsPerOp: []float64{98, 108, 99, 107, 100, 106, 101, 105, 102, 104}},
			"x": {NsPerOp: nearReps(105)}, "y": {NsPerOp: nearReps(110)}},
		k2: {planBase: {NsPerOp: nearReps(100)}, "x": {NsPerOp: nearReps(105)}, "z": {NsPerOp: nearReps(101)}},
	}}
	for _, c := range []struct {
		k    cellKey
		x    string
		want bool
	}{
		{k, "x", false}, // above 1.02, not above the twin's interval
		{k, "y", true},  // above both
		{k2, "x", true}, // no twin: above 1.02
		{k2, "z", false},
	} {
		st := r.timeRatio(c.k, c.x, planBase)
		if got := r.slowerThanTwin(c.k, st); got != c.want {
			t.Errorf("%s in %s: [%.3f, %.3f], twin %+v: slower %v, want %v", c.x, c.k.Path, st.Lo, st.Hi, r.timeRatio(c.k, twinName, planBase), got, c.want)
		}
	}
}
