package workload

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkloadTiny runs the smoke mode end to end on the real file system
// and checks what it must get right whatever the machine: no key lost, the
// filters probed (and none for the no-filter policy), the report written
// without verdicts, and the data directory cleaned up.
func TestWorkloadTiny(t *testing.T) {
	cfg := Defaults("tiny")
	cfg.Ops, cfg.CountOps = 60, 300
	cfg.Out = t.TempDir()
	cfg.Dir = filepath.Join(t.TempDir(), "data") // absent: Run creates and removes it
	cfg.CommandLine = "go test -run TestWorkloadTiny"
	shapes := allShapes
	if testing.Short() {
		// The burst (L0 sublevels and the reopening load), state (70-byte
		// values) and deep (synthetic) shapes, on the slow device only.
		shapes = []shapeSpec{allShapes[1], allShapes[4], allShapes[5]}
		cfg.Shapes, cfg.Regimes, cfg.LoadShapes = []string{"burst", "state", "deep"}, []string{"slow"}, []string{"burst"}
	}
	res, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost != 0 || res.Phantom != 0 {
		t.Fatalf("%d keys lost, %d absent keys found", res.Lost, res.Phantom)
	}
	if len(res.Shapes) != len(shapes) {
		t.Fatalf("%d shapes measured, want %d", len(res.Shapes), len(shapes))
	}
	for _, s := range shapes {
		for _, pol := range []string{"none", "bloom(10)", "cuckoo(10)", "cuckoo(16)"} {
			tc, ok := res.Truth[s.Name][pol]["seek-absent-l6"]
			if !ok {
				t.Fatalf("%s %s: no counting pass", s.Name, pol)
			}
			probes := tc.Hits + tc.Misses
			switch {
			case pol == "none" && probes != 0:
				t.Errorf("%s none: %d filter probes, want 0", s.Name, probes)
			case pol != "none" && probes == 0:
				t.Errorf("%s %s: no filter probes", s.Name, pol)
			}
			if tc.Unknown != 0 {
				t.Errorf("%s %s: %d positive answers on filter blocks of unknown tables", s.Name, pol, tc.Unknown)
			}
		}
		for _, pol := range []string{"bloom(10)", "cuckoo(10)"} {
			tc := res.Truth[s.Name][pol]["seek-present-l6"]
			if tc.TP < tc.Ops { // every present prefix is in some table, and UseL6Filters probes all levels
				t.Errorf("%s %s: %d true positives for %d present seeks", s.Name, pol, tc.TP, tc.Ops)
			}
		}
		k := cellKey{Shape: s.Name, Regime: "slow", Path: "get-mix", Threads: 2}
		if cs := res.Cells[k]["bloom(10)"]; cs == nil || len(cs.NsPerOp) != cfg.Reps || cs.Hist.TotalCount() != int64(cfg.Reps*cfg.Ops) {
			t.Errorf("%v: runs missing", k)
		}
	}
	checkShapes(t, res)
	report, err := os.ReadFile(filepath.Join(cfg.Out, "WORKLOAD.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(report)
	if !strings.Contains(text, "SMOKE TEST") {
		t.Error("the tiny report does not say it is a smoke test")
	}
	for _, v := range []string{"PASS", "FAIL", "## Targets"} {
		if strings.Contains(text, v) {
			t.Errorf("the tiny report prints %q", v)
		}
	}
	for _, f := range []string{"fpr.png", "fp_per_get.png", "time_ratio.png", "workload.csv"} {
		if _, err := os.Stat(filepath.Join(cfg.Out, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(cfg.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("data directory left behind: %v", err)
	}
}

// TestRefusesNonEmptyDir checks that a data directory holding anything is
// refused and left as it was.
func TestRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "precious")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Defaults("tiny")
	cfg.Dir, cfg.Out = dir, t.TempDir()
	if _, err := Run(cfg); !errors.Is(err, errDirNotEmpty) {
		t.Fatalf("Run with a non-empty directory: %v, want errDirNotEmpty", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the directory's file is gone: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Out, "WORKLOAD.md")); err == nil {
		t.Error("a report was written for a refused run")
	}
}

func TestMedianCI(t *testing.T) {
	r := []float64{1.0, 0.9, 1.1, 1.05, 0.95, 1.02, 0.98, 1.01, 0.99, 1.03}
	st := medianCI(r)
	if math.Abs(st.Median-1.005) > 1e-9 {
		t.Errorf("median %v, want 1.005", st.Median)
	}
	// Ten pairs: the 2nd and 9th order statistics, coverage 1 - 2*11/1024.
	if st.Lo != 0.95 || st.Hi != 1.05 || math.Abs(st.Coverage-(1-22.0/1024)) > 1e-12 {
		t.Errorf("interval [%v, %v] coverage %v", st.Lo, st.Hi, st.Coverage)
	}
	if st := medianCI([]float64{3, 1, 2}); st.Median != 2 || st.Lo != 1 || st.Hi != 3 || st.Coverage != 0.75 {
		t.Errorf("three values: %+v", st)
	}
}

// TestRateRatioCI checks the interval against the equation that defines
// Wilson's score interval: its ends p (mapped from ratio r as r/(1+r))
// satisfy (x/n - p)^2 = z^2 p(1-p)/n, and they bracket the observed ratio.
func TestRateRatioCI(t *testing.T) {
	const z = 1.959964
	for _, c := range [][2]float64{{340, 1140}, {1, 30}, {50, 50}, {7, 2000}, {300, 20}} {
		x, y := c[0], c[1]
		lo, hi := rateRatioCI(x, y)
		if !(lo < x/y && x/y < hi) {
			t.Errorf("%v/%v: interval [%v, %v] misses the ratio %v", x, y, lo, hi, x/y)
		}
		n, ph := x+y, x/(x+y)
		for _, r := range []float64{lo, hi} {
			p := r / (1 + r)
			if d := (ph-p)*(ph-p) - z*z*p*(1-p)/n; math.Abs(d) > 1e-12 {
				t.Errorf("%v/%v: end %v off Wilson's equation by %g", x, y, r, d)
			}
		}
	}
	if lo, hi := rateRatioCI(5, 0); lo <= 0 || !math.IsInf(hi, 1) {
		t.Errorf("5/0: [%v, %v], want a positive lower end and no upper one", lo, hi)
	}
}

// TestSpread checks Monkey's rule on a cuckoo-like curve: the level with
// fewer keys gets more bits, the unprobed level none, and the spend stays
// within the budget.
func TestSpread(t *testing.T) {
	var c fprCurve
	c.Family = famCuckoo
	c.FPR[0] = 1
	for b := 1; b <= 32; b++ {
		c.FPR[b] = math.Min(1, 8*math.Pow(2, -float64(b)))
	}
	in := spreadInput{Keys: [7]uint64{0, 0, 0, 0, 1000, 10000, 100000}, Probes: [7]float64{0, 0, 0, 0, 1, 1, 0}}
	in.Bits = 10 * float64(111000)
	b := spread(c, in)
	if b[6] != 0 {
		t.Errorf("L6 got bits: %v", b)
	}
	if b[0] != b[4] {
		t.Errorf("spread %v: the empty levels above L4 should take L4's budget", b)
	}
	if b[4] < b[5] || b[5] == 0 {
		t.Errorf("spread %v: the smaller level should get at least as many bits", b)
	}
	spent := 0.0
	for l := range b {
		spent += float64(in.Keys[l]) * float64(b[l])
	}
	if spent > in.Bits {
		t.Errorf("spent %v bits of %v", spent, in.Bits)
	}
}

// TestStop checks that a stopped run removes its databases and the report
// directory it created.
func TestStop(t *testing.T) {
	cfg := Defaults("tiny")
	cfg.Out = filepath.Join(t.TempDir(), "out")
	cfg.Dir = filepath.Join(t.TempDir(), "data")
	stop := make(chan struct{})
	close(stop)
	cfg.Stop = stop
	if _, err := Run(cfg); !errors.Is(err, errStopped) {
		t.Fatalf("Run after Stop: %v, want errStopped", err)
	}
	for _, d := range []string{cfg.Dir, cfg.Out} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("directory %s left behind: %v", d, err)
		}
	}
}

// TestRefusesNonEmptyOut checks that a report directory holding anything
// is refused before the run starts, and left as it was.
func TestRefusesNonEmptyOut(t *testing.T) {
	out := t.TempDir()
	keep := filepath.Join(out, "WORKLOAD.md")
	if err := os.WriteFile(keep, []byte("an earlier report"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Defaults("tiny")
	cfg.Out, cfg.Dir = out, filepath.Join(t.TempDir(), "data")
	if _, err := Run(cfg); !errors.Is(err, errOutNotEmpty) {
		t.Fatalf("Run with a non-empty report directory: %v, want errOutNotEmpty", err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "an earlier report" {
		t.Fatalf("the earlier report changed: %q, %v", b, err)
	}
	if _, err := os.Stat(cfg.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a data directory was created for a refused run: %v", err)
	}
}

// TestFreshKeysPerCell checks that no timed run rereads keys an earlier run
// read: with a block cache a fraction of the database, the two-goroutine
// run of a path, which follows the one-goroutine run, must read about as
// many data blocks per operation from the file system as that run did. Had
// it reread the same keys, their blocks would still be in the cache.
func TestFreshKeysPerCell(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 100,000 keys; run without -short")
	}
	cfg := Defaults("tiny")
	cfg.Keys, cfg.FlushEvery = 100_000, 25_000
	cfg.Ops, cfg.Reps, cfg.CountOps = 60, 3, 200
	cfg.Shapes, cfg.Regimes, cfg.Paths = []string{"steady"}, []string{"pagecache"}, []string{"get-present"}
	cfg.LoadRounds = 0
	cfg.Out = t.TempDir()
	cfg.Dir = filepath.Join(t.TempDir(), "data")
	res, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := res.db("steady", "none")
	if size, cache := d.Shape.totalBytes(), cacheSize(regimeSpec{}, d.Shape, 0, 0); size < 2*cache {
		t.Fatalf("database %d bytes, cache %d: too small a database for the test", size, cache)
	}
	perOp := func(threads int) float64 {
		cs := res.Cells[cellKey{Shape: "steady", Regime: "pagecache", Path: "get-present", Threads: threads}]["none"]
		return float64(cs.IO.Reads[kindData]) / float64(cs.Ops)
	}
	one, two := perOp(1), perOp(2)
	t.Logf("data blocks read per present Get: %.3f on one goroutine, %.3f on two", one, two)
	if one < 0.3 || two < 0.5*one {
		t.Errorf("data blocks read per present Get without filters: %.3f on one goroutine, %.3f on two", one, two)
	}
}
