package whatif_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/whatif"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/workload"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// projectionTolerance is how far the plan's measured false-positive reads
// may be from whatif's projection of them: within [1/1.3, 1.3].
const projectionTolerance = 1.3

// minReads is the fewest reads in vain a measurement counts: their count is
// about Poisson, so its relative standard error is at most 1/sqrt(1000),
// 3.2%, and a miss of 1.3x (or 1/1.3x) lies more than 7 of them away.
const minReads = 1000

// maxGets caps the absent Gets of one measurement, far above what minReads
// takes on these shapes (a few hundred thousand at most).
const maxGets = 20_000_000

// projectionConfig is the size of the shapes the test builds: the
// benchmark's tiny mode, with more keys so that every shape has several
// levels of several tables; more still without -short.
func projectionConfig() workload.Config {
	c := workload.Defaults("tiny")
	c.Keys, c.FlushEvery, c.BurstTables = 200_000, 20_000, 8
	c.FileSize = 128 << 10
	if testing.Short() {
		c.Keys, c.FlushEvery, c.BurstTables = 40_000, 4_000, 4
		c.FileSize = 64 << 10
	}
	return c
}

// TestProjection checks, on each of the workload benchmark's shapes, that
// whatif's projection holds: the shape is built with CockroachDB's filters
// (bloom(10) on L0-L5, none on L6), whatif analyzes it as the command does
// and prints a plan with its projected false-positive reads per absent Get
// (plan.Fit's model); the same LSM is then built with that plan's filters,
// and the false-positive reads Pebble's counters measure for absent Gets
// must be within projectionTolerance of the projection. With -short the
// shapes are smaller: 40,000 entries in tables of 64 KiB (a few hundred
// keys each) instead of 200,000 in tables of 128 KiB.
func TestProjection(t *testing.T) {
	cfg := projectionConfig()
	names := workload.ShapeNames()
	rows := make([]string, len(names))
	// The shapes run side by side: most of a shape's time is its loads'
	// and ingestions' writes, not CPU.
	t.Run("shapes", func(t *testing.T) {
		for i, name := range names {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				rows[i] = checkProjection(t, cfg, name)
			})
		}
	})
	for i, r := range rows {
		if r == "" {
			rows[i] = fmt.Sprintf("%-10s  (no result)", names[i])
		}
	}
	t.Logf("false-positive reads per absent Get of the plan whatif prints:\n%-10s  %9s  %9s  %s\n%s",
		"shape", "projected", "measured", "measured/projected", strings.Join(rows, "\n"))
}

// checkProjection builds the shape called name with CockroachDB's filters,
// has whatif analyze it, builds it again with the plan whatif prints and
// checks that plan's false-positive reads per absent Get as Pebble counts
// them against whatif's projection. It returns the shape's row of the
// test's table.
func checkProjection(t *testing.T, cfg workload.Config, name string) string {
	start := time.Now()
	s, err := workload.NewShape(cfg, name, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b10 := bloom.FilterPolicy(10)
	refDir, err := s.Build("reference", plan.Plan{b10, b10, b10, b10, b10, b10, nil})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := whatif.Analyze(whatif.Config{Dir: refDir, Comparer: s.Comparer(), Sample: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	fit, ok := whatif.PlanFit(rep)
	if !ok {
		t.Fatal("whatif printed no plan")
	}
	kind, model, measuredNow, proj := whatif.Footing(rep)
	projected := fit.FalsePositives
	planDir, err := s.Build("plan", fit.Plan)
	if err != nil {
		t.Fatal(err)
	}
	m := measureGets(t, s, planDir, fit.Plan)
	got := m.perGet()
	ratio := got / projected
	t.Logf("plan %s; projected %.5f false-positive reads per absent Get, measured %.5f (%d reads in vain: %d filter positives, %d tables without a filter, in %d Gets): measured/projected %.3f; %v",
		fit.Plan, projected, got, m.reads(), m.misses, m.unfiltered, m.gets, ratio, time.Since(start).Round(time.Millisecond))
	t.Logf("whatif's footing: %s (the current filters: model %.5f, Pebble %.5f); the verdict's projection %.5f to %.5f",
		kind, model, measuredNow, proj[0], proj[1])
	if !(ratio >= 1/projectionTolerance && ratio <= projectionTolerance) {
		var lv []string
		for l, ls := range fit.Levels {
			lv = append(lv, fmt.Sprintf("L%d %d tables %d keys %.3f probes", l, ls.Tables, ls.Keys, ls.Probes))
		}
		t.Errorf("measured/projected %.3f, outside [1/%g, %g]; plan.Fit's levels: %s",
			ratio, projectionTolerance, projectionTolerance, strings.Join(lv, "; "))
	}
	return fmt.Sprintf("%-10s  %9.5f  %9.5f  %.3f", name, projected, got, ratio)
}

// getCounts are the reads in vain of absent Gets, as plan.Fit's model
// counts them on L0-L5 (db.Get reads no L6 filter): every filter positive
// (Pebble's counter db.Metrics().Filter.Misses) and every table without a
// filter whose range holds the key (Pebble counts none there).
type getCounts struct {
	gets, misses, hits, unfiltered int64
}

func (c getCounts) reads() int64 { return c.misses + c.unfiltered }

func (c getCounts) perGet() float64 { return float64(c.reads()) / float64(c.gets) }

// measureGets opens the database in dir with p's filters and makes the
// benchmark's absent Gets, from as many goroutines as GOMAXPROCS, in batches
// between readings of Pebble's filter counters, until they meet minReads
// reads in vain.
func measureGets(t *testing.T, s *workload.Shape, dir string, p plan.Plan) getCounts {
	t.Helper()
	o := s.Options(p)
	db, err := pebble.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}()
	unfiltered := unfilteredTables(t, db)
	cmp := pebble.DefaultComparer.Compare
	if o.Comparer != nil {
		cmp = o.Comparer.Compare
	}
	// get makes absent Gets j = from, from+1, ... below to and returns the
	// reads of tables without a filter they make.
	get := func(from, to int64) (int64, error) {
		var n int64
		key := make([]byte, 0, 64)
		for j := from; j < to; j++ {
			key = s.AbsentKey(key[:0], int(j))
			_, closer, err := db.Get(key)
			if err == nil {
				closer.Close()
				return n, fmt.Errorf("absent key %q found", key)
			}
			if !errors.Is(err, pebble.ErrNotFound) {
				return n, err
			}
			for _, u := range unfiltered {
				if cmp(u.Smallest.UserKey, key) <= 0 && cmp(key, u.Largest.UserKey) <= 0 {
					n++
				}
			}
		}
		return n, nil
	}
	const perWorker = 4096
	workers := int64(runtime.GOMAXPROCS(0))
	var c getCounts
	for c.reads() < minReads {
		if c.gets >= maxGets {
			t.Fatalf("%d absent Gets met %d reads in vain, fewer than %d", c.gets, c.reads(), minReads)
		}
		before := db.Metrics().Filter
		var wg sync.WaitGroup
		unf := make([]int64, workers)
		errs := make([]error, workers)
		for w := range workers {
			from := c.gets + w*perWorker
			wg.Add(1)
			go func() {
				defer wg.Done()
				unf[w], errs[w] = get(from, from+perWorker)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		after := db.Metrics().Filter
		c.gets += workers * perWorker
		for _, n := range unf {
			c.unfiltered += n
		}
		c.misses += after.Misses - before.Misses
		c.hits += after.Hits - before.Hits
	}
	return c
}

// unfilteredTables returns the tables on L0-L5 that have no filter: a Get
// reads a data block of each whose range holds its key. Lower levels' tables
// do not overlap, so a key is in the range of at most one of each level's.
func unfilteredTables(t *testing.T, db *pebble.DB) []pebble.SSTableInfo {
	t.Helper()
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	var out []pebble.SSTableInfo
	for l, tables := range levels {
		if l > 5 {
			break
		}
		for _, tb := range tables {
			if tb.Properties == nil || tb.Properties.FilterSize == 0 {
				out = append(out, tb)
			}
		}
	}
	return out
}
