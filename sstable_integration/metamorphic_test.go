package sstableintegration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/metamorphic"

	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// TestMetamorphic runs Pebble's own metamorphic test in-process: for each
// seed, the same random operations under the same random options, once with
// no filter on any level and once with a cuckoo policy on every level (a
// different budget or configuration per level, drawn from the seed); the two
// histories must be identical. Seeds alternate between Pebble's test keys and
// CockroachDB's key encoding. See doc.go for the flags that run more seeds.
func TestMetamorphic(t *testing.T) {
	t.Parallel()
	var probes, skipped int64
	for _, seed := range metamorphicSeeds(t) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			runs := runMetamorphic(t, seed, metamorphicOps(), nil)
			c := runs[1].counts
			t.Logf("cuckoo run: %d filters written over %d keys, %d probes, %d skipped",
				c.writers.Load(), c.keys.Load(), c.probes.Load(), c.absent.Load())
			probes += c.probes.Load()
			skipped += c.absent.Load()
			if c.writers.Load() == 0 {
				t.Fatalf("the cuckoo run wrote no filter: the comparison tested nothing")
			}
			if i, diff := metamorphic.CompareHistories(t, []string{runs[0].history, runs[1].history}); i != 0 {
				t.Fatalf("seed %d: the cuckoo run's history differs from the run without filters:\n%s", seed, diff)
			}
		})
	}
	// Over all seeds the filters must have been asked, and have answered
	// "absent" at least once: else equal histories say nothing of them.
	if probes == 0 || skipped == 0 {
		t.Fatalf("over all seeds the cuckoo filters were probed %d times and skipped %d", probes, skipped)
	}
}

// TestMetamorphicDetectsLoss checks that the comparison has teeth: a policy
// that builds cuckoo blocks but answers "absent" to every probe must produce
// a different history within a few seeds.
func TestMetamorphicDetectsLoss(t *testing.T) {
	t.Parallel()
	rng := pebbletest.Rand(pebbletest.Seed(t))
	for try := 0; try < 5; try++ {
		seed := rng.Uint64()
		runs := runMetamorphic(t, seed, 2000, func(p pebble.FilterPolicy) pebble.FilterPolicy { return lossyPolicy{p} })
		if runs[1].counts.absent.Load() == 0 {
			continue
		}
		if i, _ := metamorphic.CompareHistories(t, []string{runs[0].history, runs[1].history}); i != 0 {
			t.Logf("seed %d: a policy that loses keys changes the history, as it must", seed)
			return
		}
	}
	t.Fatalf("a policy that answers absent to every probe never changed a history in 5 seeds")
}

// lossyPolicy writes real blocks and answers "absent" to every probe.
type lossyPolicy struct{ pebble.FilterPolicy }

func (lossyPolicy) MayContain(pebble.FilterType, []byte, []byte) bool { return false }

// metamorphicSeeds returns the seeds to run: -metamorphic.seed alone, or
// -metamorphic.seeds of them (8 by default, 2 with -short, 200 when long)
// derived from the test seed.
func metamorphicSeeds(t *testing.T) []uint64 {
	if *flagMetaSeed != 0 {
		return []uint64{*flagMetaSeed}
	}
	n := *flagMetaSeeds
	if n == 0 {
		n = pebbletest.Scale(2, 8, 200)
	}
	rng := pebbletest.Rand(pebbletest.Seed(t))
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = rng.Uint64()
	}
	return seeds
}

// metamorphicOps is the number of operations per run: -metamorphic.ops, or
// 2000 with -short, 5000 by default, 10000 when long.
func metamorphicOps() uint64 {
	if *flagMetaOps > 0 {
		return uint64(*flagMetaOps)
	}
	return uint64(pebbletest.Scale(2000, 5000, 10000))
}

// metamorphicRun holds one configuration of a run and what it did.
type metamorphicRun struct {
	name    string
	history string
	counts  *policyCounters
}

// runMetamorphic executes the seed's operations twice, with no filter and
// with cuckoo policies (passed through wrap, if not nil) on every level, and
// returns both runs; their histories are files under a temporary directory.
func runMetamorphic(t *testing.T, seed, ops uint64, wrap func(pebble.FilterPolicy) pebble.FilterPolicy) []*metamorphicRun {
	t.Helper()
	kf := metamorphic.TestkeysKeyFormat
	if seed%2 == 1 {
		kf = metamorphic.CockroachKeyFormat
	}
	if wrap == nil {
		t.Logf("metamorphic seed %d, %d ops, %s keys (replay with -run '%s' -metamorphic.seed=%d -metamorphic.ops=%d)",
			seed, ops, kf.Name, t.Name(), seed, ops)
	} else {
		t.Logf("metamorphic seed %d, %d ops, %s keys, policies wrapped", seed, ops, kf.Name)
	}
	dir := t.TempDir()
	runs := []*metamorphicRun{{name: "nofilter"}, {name: "cuckoo", counts: &policyCounters{}}}
	for _, run := range runs {
		// Options and operations are drawn afresh from the seed for each
		// run, so that both start from identical state (RandomOptions makes
		// a new in-memory filesystem each time).
		rng := pebbletest.Rand(seed)
		testOpts := metamorphic.RandomOptions(rng, kf, metamorphic.RandomOptionsCfg{})
		generated := metamorphic.GenerateOps(rng, ops, kf, metamorphic.DefaultOpConfig())

		// RandomOptions may have chosen bloom (or its testing variants) for
		// the levels and filled Filters accordingly: replace both.
		o := testOpts.Opts
		o.Filters = nil
		policyRng := pebbletest.Rand(seed ^ 0xc0c0)
		var desc []string
		for i := range o.Levels {
			if run.counts == nil {
				o.Levels[i].FilterPolicy = pebble.NoFilterPolicy
				continue
			}
			p := randomCuckoo(policyRng)
			desc = append(desc, fmt.Sprintf("L%d:%s", i, policyString(p)))
			if wrap != nil {
				p = wrap(p)
			}
			o.Levels[i].FilterPolicy = countingPolicy{p, run.counts}
		}
		o.EnsureDefaults()
		if err := checkMetamorphicFilters(o, run.counts != nil); err != nil {
			t.Fatal(err)
		}
		if len(desc) > 0 {
			t.Logf("cuckoo levels: %s", strings.Join(desc, " "))
		}

		run.history = filepath.Join(dir, run.name+".history")
		f, err := os.Create(run.history)
		if err != nil {
			t.Fatal(err)
		}
		test, err := metamorphic.New(generated, testOpts, "", f)
		if err != nil {
			t.Fatalf("%s: %v", run.name, err)
		}
		err = metamorphic.Execute(test)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("%s run of seed %d: %v", run.name, seed, err)
		}
	}
	return runs
}

// checkMetamorphicFilters verifies that a run's options use only the policy
// meant: the cuckoo family on all levels and in Filters, or none at all.
func checkMetamorphicFilters(o *pebble.Options, cuckoo bool) error {
	for i := range o.Levels {
		name := o.Levels[i].FilterPolicy.Name()
		if cuckoo && name != cuckooName || !cuckoo && o.Levels[i].FilterPolicy != pebble.NoFilterPolicy {
			return fmt.Errorf("L%d has filter policy %q", i, name)
		}
	}
	if cuckoo && (len(o.Filters) != 1 || o.Filters[cuckooName] == nil) || !cuckoo && len(o.Filters) != 0 {
		return fmt.Errorf("Filters map %v", o.Filters)
	}
	return nil
}
