package sstableintegration

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/metamorphic"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// TestMetamorphic runs Pebble's own metamorphic test in-process: for each
// seed and each key format (Pebble's test keys and CockroachDB's), the same
// random operations under the same random options (metamorphic.RandomOptions),
// once with no filter on any level and once under each filter variant of
// metamorphicVariants; every variant's history must equal the run's without
// filters. The variants:
//
//   - pebble: the filter RandomOptions drew (bloom(10) or its testing bloom
//     of 1 to 16 bits a key, on every level), or bloom(10), as metamorphic's
//     default options have, where it drew none.
//   - cuckoo: a cuckoo policy on every level, its budget or configuration
//     drawn per level (clamped budgets included).
//   - uniform: cuckoopolicy.Apply with FilterPolicy(B), one random B.
//   - progressive: plan.Apply with plan.Progressive().
//   - mixed: plan.Apply with a random plan of bloom.FilterPolicy(b),
//     cuckoopolicy.FilterPolicy(b) and no filter on L0 to L5, some bloom
//     among them, and cuckoopolicy.FilterPolicy(5 to 8) on L6, with small
//     memtables and tables and eager L0 compactions, so that the cuckoo
//     levels write raw bloom blocks (bloom's own table, which the family
//     writes on tables of 35 to 64 keys at those budgets).
//   - live: a plan.Live, applied before the harness opens the database and
//     started on the database it opens, refitting on its own after
//     flushes, compactions and ingests (at most once per 1 to 20 ms) and,
//     asked by a goroutine of the test, every 20 to 120 operations, beside
//     the operations that follow. One key format's run of each seed has a
//     ceiling of 256 B to 64 KiB (its levels write cuckoo blocks), the
//     other a fixed budget of 32 to 128 B with a memtable and tables of
//     1 MiB (unfiltered blocks, and bloom tables in cuckoopolicy's trailer
//     on tables of a hundred keys and more). Its probe counts include the
//     fits' own reads.
//
// The mixed variant, and the live one with a tight budget, are the only
// runs whose options differ from the baseline's beyond the filters (the
// metamorphic test holds histories equal across options); on a mismatch
// such a run is repeated without filters, to say which change made the
// difference.
//
// How the live variant reaches the database: metamorphic.New opens it and
// keeps it unexported, and replaces the options' EventListener with its
// own. The database is the argument of Options.DebugCheck, which the
// harness keeps (wrapped) and Pebble calls within Open, so a DebugCheck
// that records its argument holds the open database once New returns, and
// the new one after a restart. The live plan's listener is chained back
// by a metamorphic.CustomOption, whose Open the harness calls with its own
// options before each open. The operations run one at a time through
// Test.Step (Execute's one-thread path; histories are compared operation
// by operation, so threads do not change them): before each operation
// that closes or restarts the database (Pebble's metamorphic op types,
// found by reflection, as nothing exports them), the test stops the plan
// (Live.Stop, which waits for a fit in flight), since Pebble's Close is
// not safe beside a refit's reads, and after a restart starts it on the
// reopened database.
//
// Seeds take three operation mixes in turn (metamorphicOpMixes). Over all
// seeds the filters must have been probed and have skipped a table, the
// mixed plans must have written raw bloom blocks and the live plans
// unfiltered blocks (where the seeds gave none, more seeds of the growing
// mix run those variants), with refits and events; in the long form the
// live plans must also have written bloom blocks. See doc.go for the
// flags that run more seeds.
func TestMetamorphic(t *testing.T) {
	t.Parallel()
	totals := map[string]*runTotals{}
	for _, v := range metamorphicVariants[1:] {
		totals[v] = &runTotals{}
	}
	seeds, ops := metamorphicSeeds(t), metamorphicOps()
	for _, seed := range seeds {
		runSeed(t, seed, ops, metamorphicVariants, totals)
	}
	if t.Failed() {
		return
	}
	// Some blocks need tables of a size only some runs form: where the
	// seeds wrote none, more seeds of the growing mix run that variant (at
	// most 8), so that the checks below are not left to chance.
	rng := pebbletest.Rand(seeds[len(seeds)-1] ^ 0x6a3d)
	for _, g := range metamorphicGoals {
		for extra := 0; extra < 8 && *flagMetaSeed == 0 && !t.Failed() && totals[g.variant].blocks[g.kind] == 0; extra++ {
			seed := mixSeed(rng.Uint64(), growingMix)
			t.Logf("no %s blocks from the %s variant yet: seed %d of the growing mix", blockKindNames[g.kind], g.variant, seed)
			runSeed(t, seed, ops, []string{"nofilter", g.variant}, totals)
		}
	}
	var probes, skipped int64
	for _, v := range metamorphicVariants[1:] {
		tot := totals[v]
		t.Logf("%-11s %d runs: %d filters (%s), %d probes, %d skipped%s",
			v, tot.runs, tot.writers, tot.blocks, tot.probes, tot.skipped, tot.liveString())
		probes += tot.probes
		skipped += tot.skipped
	}
	// Over all seeds the filters must have been asked, and have answered
	// "absent" at least once: else equal histories say nothing of them.
	if probes == 0 || skipped == 0 {
		t.Errorf("over all seeds the filters were probed %d times and skipped %d", probes, skipped)
	}
	if *flagMetaSeed != 0 {
		return // one seed replayed: the blocks it writes are its own
	}
	for _, g := range metamorphicGoals {
		if tot := totals[g.variant]; tot.blocks[g.kind] == 0 {
			t.Errorf("the %s variant wrote no %s block in %d runs", g.variant, blockKindNames[g.kind], tot.runs)
		}
	}
	// Bloom tables in the trailer take tables of a hundred keys and more,
	// which few runs form: the long form's hundreds of live runs must
	// have written some.
	live := totals["live"]
	if live.blocks[bloomBlock] == 0 && live.runs >= 100 {
		t.Errorf("the live variant wrote no bloom block in %d runs", live.runs)
	}
	if live.refits == 0 || live.events == 0 {
		t.Errorf("the live plans refitted %d times on %d events in %d runs", live.refits, live.events, live.runs)
	}
}

// metamorphicGoals are the kinds of block TestMetamorphic requires of a
// variant over its seeds.
var metamorphicGoals = []struct {
	variant string
	kind    blockKind
}{
	{"mixed", rawBloomBlock},
	{"live", unfilteredBlock},
}

// runSeed runs the seed's operations with both key formats under variants,
// each key format a subtest, checks every run against the first variant's
// and adds the runs to totals.
func runSeed(t *testing.T, seed, ops uint64, variants []string, totals map[string]*runTotals) {
	for _, kf := range metamorphicKeyFormats {
		t.Run(fmt.Sprintf("seed=%d/keys=%s", seed, kf.Name), func(t *testing.T) {
			runs := runMetamorphic(t, seed, kf, ops, variants, nil)
			for _, run := range runs[1:] {
				c := run.counts
				t.Logf("%s (%v): %d filters over %d keys (%s), %d probes, %d skipped%s",
					run.variant, run.elapsed.Round(time.Millisecond), c.writers.Load(), c.keys.Load(), c.blockString(),
					c.probes.Load(), c.absent.Load(), run.liveString())
				totals[run.variant].add(run)
				if n := c.blocks[invalidBlock].Load(); n > 0 {
					t.Errorf("%s: %d filter blocks of the cuckoo family that Inspect rejects", run.variant, n)
				}
				if c.writers.Load() == 0 {
					t.Errorf("the %s run wrote no filter: its comparison tested nothing", run.variant)
				}
				checkHistory(t, seed, kf, ops, runs[0], run)
			}
		})
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
		kf := metamorphicKeyFormats[try%len(metamorphicKeyFormats)]
		runs := runMetamorphic(t, seed, kf, 2000, []string{"nofilter", "cuckoo"},
			func(p pebble.FilterPolicy) pebble.FilterPolicy { return lossyPolicy{p} })
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

// metamorphicKeyFormats are the key formats every seed runs with.
var metamorphicKeyFormats = []metamorphic.KeyFormat{metamorphic.TestkeysKeyFormat, metamorphic.CockroachKeyFormat}

// metamorphicVariants are the filter configurations of a seed's runs, as
// TestMetamorphic describes them; the first, no filter on any level, is the
// history the others must match.
var metamorphicVariants = []string{"nofilter", "pebble", "cuckoo", "uniform", "progressive", "mixed", "live"}

// opMix is a distribution of operations a seed's runs draw theirs from.
type opMix struct {
	name string
	// cfg returns the mix's configuration, afresh for every run: its
	// distribution of suffixes changes as GenerateOps draws from it.
	cfg func() metamorphic.OpConfig
}

// metamorphicOpMixes are the operation mixes of the seeds, a seed's by its
// value modulo 3 (metamorphicSeeds gives its i-th seed the i-th mix, in
// turn): Pebble's default; one that deletes (point, single, range and
// excise) a tenth as often, under which the database grows to tables of
// dozens of keys, where the cuckoo family writes raw bloom blocks; and
// Pebble's own preset for many versions of few prefixes (metamorphic's
// second preset configuration, with no merges).
var metamorphicOpMixes = [3]opMix{
	{"default", metamorphic.DefaultOpConfig},
	growingMix: {"growing", func() metamorphic.OpConfig {
		return metamorphic.DefaultOpConfig().
			WithOpWeight(metamorphic.OpWriterDelete, 10).
			WithOpWeight(metamorphic.OpWriterSingleDelete, 5).
			WithOpWeight(metamorphic.OpWriterDeleteRange, 5).
			WithOpWeight(metamorphic.OpWriterIngestAndExcise, 5)
	}},
	{"versions", func() metamorphic.OpConfig {
		return metamorphic.DefaultOpConfig().
			WithNewPrefixProbability(0.04).
			WithOpWeight(metamorphic.OpWriterDeleteRange, 1).
			WithOpWeight(metamorphic.OpWriterDelete, 5).
			WithOpWeight(metamorphic.OpWriterSingleDelete, 5).
			WithOpWeight(metamorphic.OpWriterMerge, 0)
	}},
}

// growingMix is the index of the growing mix in metamorphicOpMixes.
const growingMix = 1

// mixSeed returns a seed derived from r whose operation mix is mix.
func mixSeed(r uint64, mix int) uint64 {
	return (r>>2)*uint64(len(metamorphicOpMixes)) + uint64(mix)
}

// opMixOf returns the seed's operation mix.
func opMixOf(seed uint64) opMix { return metamorphicOpMixes[seed%uint64(len(metamorphicOpMixes))] }

// metamorphicSeeds returns the seeds to run: -metamorphic.seed alone, or
// -metamorphic.seeds of them (3 by default, 2 with -short, 200 when long)
// derived from the test seed, taking the operation mixes in turn.
func metamorphicSeeds(t *testing.T) []uint64 {
	if *flagMetaSeed != 0 {
		return []uint64{*flagMetaSeed}
	}
	n := *flagMetaSeeds
	if n == 0 {
		n = pebbletest.Scale(2, 3, 200)
	}
	rng := pebbletest.Rand(pebbletest.Seed(t))
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = mixSeed(rng.Uint64(), i%len(metamorphicOpMixes))
	}
	return seeds
}

// metamorphicOps is the number of operations per run: -metamorphic.ops, or
// 2000 with -short, 3000 by default, 5000 when long.
func metamorphicOps() uint64 {
	if *flagMetaOps > 0 {
		return uint64(*flagMetaOps)
	}
	return uint64(pebbletest.Scale(2000, 2000, 5000))
}

// metamorphicRun holds one run of a seed and what it did.
type metamorphicRun struct {
	variant string
	history string
	counts  *policyCounters
	// shaped is set where the variant changed options besides the filters.
	shaped  bool
	elapsed time.Duration
	live    *liveRun // the live variant's plan and what it did
}

// liveString describes what the run's live plan did, if it had one.
func (r *metamorphicRun) liveString() string {
	if r.live == nil {
		return ""
	}
	l := r.live
	return fmt.Sprintf("; live plan %d refits (%d asked by the test), %d events, %d starts, last plan %s",
		l.refits, l.asked.Load(), l.events.Load(), l.starts, l.lp.Plan())
}

// runTotals sums a variant's runs over the seeds.
type runTotals struct {
	runs, writers, probes, skipped int64
	blocks                         blockCounts
	refits, events                 int64
}

func (tot *runTotals) add(r *metamorphicRun) {
	c := r.counts
	tot.runs++
	tot.writers += c.writers.Load()
	tot.probes += c.probes.Load()
	tot.skipped += c.absent.Load()
	for k := range tot.blocks {
		tot.blocks[k] += c.blocks[k].Load()
	}
	if r.live != nil {
		tot.refits += int64(r.live.refits)
		tot.events += r.live.events.Load()
	}
}

func (tot *runTotals) liveString() string {
	if tot.refits == 0 && tot.events == 0 {
		return ""
	}
	return fmt.Sprintf(", %d refits on %d events", tot.refits, tot.events)
}

// checkHistory compares run's history with the baseline's. On a mismatch of
// a variant whose options differ beyond the filters, it reruns those
// options without filters, to tell a filter's loss from a difference that
// Pebble makes between the options.
func checkHistory(t *testing.T, seed uint64, kf metamorphic.KeyFormat, ops uint64, base, run *metamorphicRun) {
	t.Helper()
	i, diff := metamorphic.CompareHistories(t, []string{base.history, run.history})
	if i == 0 {
		return
	}
	verdict := ""
	if run.shaped {
		bare := runMetamorphicOnce(t, seed, kf, ops, run.variant, true, nil)
		if j, _ := metamorphic.CompareHistories(t, []string{base.history, bare.history}); j != 0 {
			verdict = " (its options without filters differ too: the difference is Pebble's, between the options, not the filters')"
		} else {
			verdict = " (its options without filters match: the filters made the difference)"
		}
	}
	t.Fatalf("seed %d, %s keys: the %s run's history differs from the run without filters%s:\n%s",
		seed, kf.Name, run.variant, verdict, diff)
}

// runMetamorphic executes the seed's operations with kf's keys once per
// variant and returns the runs, the first variant's first; their histories
// are files under a temporary directory. wrap, if not nil, wraps every
// filter policy of the runs with filters.
func runMetamorphic(t *testing.T, seed uint64, kf metamorphic.KeyFormat, ops uint64, variants []string,
	wrap func(pebble.FilterPolicy) pebble.FilterPolicy) []*metamorphicRun {
	t.Helper()
	if wrap == nil {
		t.Logf("metamorphic seed %d, %d ops of the %s mix, %s keys (replay with -run '%s' -metamorphic.seed=%d -metamorphic.ops=%d)",
			seed, ops, opMixOf(seed).name, kf.Name, t.Name(), seed, ops)
	} else {
		t.Logf("metamorphic seed %d, %d ops of the %s mix, %s keys, policies wrapped", seed, ops, opMixOf(seed).name, kf.Name)
	}
	runs := make([]*metamorphicRun, len(variants))
	for i, v := range variants {
		runs[i] = runMetamorphicOnce(t, seed, kf, ops, v, false, wrap)
	}
	return runs
}

// runMetamorphicOnce executes the seed's operations under variant (without
// its filters, if bare) and returns the run.
func runMetamorphicOnce(t *testing.T, seed uint64, kf metamorphic.KeyFormat, ops uint64, variant string, bare bool,
	wrap func(pebble.FilterPolicy) pebble.FilterPolicy) *metamorphicRun {
	t.Helper()
	// Options and operations are drawn afresh from the seed for each run,
	// so that all start from identical state (RandomOptions makes a new
	// in-memory filesystem each time); the variant's own draws come from a
	// generator of its own, the same for every key format.
	rng := pebbletest.Rand(seed)
	testOpts := metamorphic.RandomOptions(rng, kf, metamorphic.RandomOptionsCfg{})
	generated := metamorphic.GenerateOps(rng, ops, kf, opMixOf(seed).cfg())
	o := testOpts.Opts

	run := &metamorphicRun{variant: variant, counts: &policyCounters{}}
	vrng := pebbletest.Rand(seed ^ variantSalt(variant))
	desc := configureFilters(run, o, kf, vrng)
	if bare {
		setPolicy(o, pebble.NoFilterPolicy)
		run.live, desc = nil, desc+", filters removed"
	}
	if run.live != nil {
		run.live.install(testOpts)
	}
	countPolicies(o, run.counts, wrap)
	o.EnsureDefaults()
	if err := checkMetamorphicFilters(o, variant, bare); err != nil {
		t.Fatalf("%s: %v", variant, err)
	}
	t.Logf("%s: %s", variant, desc)

	run.history = filepath.Join(t.TempDir(), variant+".history")
	f, err := os.Create(run.history)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	test, err := metamorphic.New(generated, testOpts, "", f)
	if err == nil {
		if run.live != nil {
			err = run.live.execute(test, generated)
		} else {
			err = metamorphic.Execute(test)
		}
	}
	run.elapsed = time.Since(start)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("%s run of seed %d, %s keys: %v", variant, seed, kf.Name, err)
	}
	if run.live != nil {
		if err := run.live.err(); err != nil {
			t.Errorf("%s run of seed %d, %s keys: %v", variant, seed, kf.Name, err)
		}
	}
	return run
}

// variantSalt separates the variants' generators.
func variantSalt(variant string) uint64 {
	h := uint64(0xc0c0)
	for _, b := range []byte(variant) {
		h = h*131 + uint64(b)
	}
	return h
}

// configureFilters sets run.variant's filters on o, the seed's random
// options, drawing any choice from rng, and returns their description. For
// the live variant it sets run.live.
func configureFilters(run *metamorphicRun, o *pebble.Options, kf metamorphic.KeyFormat, rng *rand.Rand) string {
	drawn := o.Levels[0].FilterPolicy // RandomOptions sets L0, and EnsureDefaults copies it down
	// RandomOptions registered its draw in Filters: every variant starts
	// from an empty map.
	o.Filters = nil
	switch run.variant {
	case "nofilter":
		setPolicy(o, pebble.NoFilterPolicy)
		return "no filter"
	case "pebble":
		if drawn == pebble.NoFilterPolicy {
			drawn = bloom.FilterPolicy(10)
		}
		setPolicy(o, drawn)
		return "every level " + policyString(drawn)
	case "cuckoo":
		var desc []string
		for i := range o.Levels {
			p := randomCuckoo(rng)
			o.Levels[i].FilterPolicy = p
			desc = append(desc, fmt.Sprintf("L%d:%s", i, policyString(p)))
		}
		return strings.Join(desc, " ")
	case "uniform":
		p := cuckoopolicy.FilterPolicy(rng.IntN(42) - 1) // -1 .. 40, clamped by the policy
		cuckoopolicy.Apply(o, p)
		return "cuckoopolicy.Apply " + policyString(p)
	case "progressive":
		p := plan.Progressive()
		plan.Apply(o, p)
		return "plan.Apply " + p.String()
	case "mixed":
		// L6, where compactions put a small database's data in tables of a
		// few dozen keys, writes the cuckoo family at the budgets whose raw
		// bloom blocks span the most table sizes (5 to 8 bits a key: tables
		// of 35 to 43 keys and more, up to 64); L0 to L5 any of bloom,
		// cuckoo or none, some bloom among them.
		var p plan.Plan
		p[6] = cuckoopolicy.FilterPolicy(5 + rng.IntN(4))
		hasBloom := false
		for l := 0; l < 6; l++ {
			switch b := 1 + rng.IntN(14); rng.IntN(3) {
			case 0:
				p[l], hasBloom = bloom.FilterPolicy(b), true
			case 1:
				p[l] = cuckoopolicy.FilterPolicy(b)
			}
		}
		if !hasBloom {
			p[0] = bloom.FilterPolicy(1 + rng.IntN(14))
		}
		plan.Apply(o, p)
		// Tables of a few dozen keys: small memtables and compaction
		// outputs, and compactions out of L0 from its second table.
		o.MemTableSize = 8 << (10 + rng.IntN(3)) // 8 - 32 KiB
		size := int64(2<<10) << rng.IntN(3)      // 2 - 8 KiB
		for i := range o.TargetFileSizes {
			o.TargetFileSizes[i] = size
		}
		o.L0CompactionThreshold = 2
		o.L0CompactionFileThreshold = 4
		o.L0StopWritesThreshold = max(o.L0StopWritesThreshold, 100)
		run.shaped = true
		return fmt.Sprintf("plan.Apply %s; memtable %d B, tables %d B", p, o.MemTableSize, size)
	case "live":
		setPolicy(o, pebble.NoFilterPolicy) // the reference: bloom(10) on L0 to L5
		cfg := plan.Config{UseL6: rng.IntN(3) == 0}
		desc := ""
		// One run of each seed, by key format, has a tight ceiling; the
		// other a ceiling from 256 B to 64 KiB, a cap or a fixed budget.
		if tight := rng.IntN(2) == 0; tight != (kf.Name == metamorphic.CockroachKeyFormat.Name) {
			// A few bytes a table: levels without filters (unfiltered
			// blocks), and below 4 bits a key bloom tables in
			// cuckoopolicy's trailer, which the plan chooses on tables of
			// a hundred keys and more: a memtable and tables of 1 MiB let
			// them form.
			cfg.MaxFilterBytes, cfg.Fixed = 32<<rng.IntN(3), true // 32 - 128 B
			o.MemTableSize = 1 << 20
			for i := range o.TargetFileSizes {
				o.TargetFileSizes[i] = 1 << 20
			}
			run.shaped = true
			desc = "; memtable and tables 1 MiB"
		} else {
			cfg.MaxFilterBytes, cfg.Fixed = 256<<rng.IntN(9), rng.IntN(2) == 0 // 256 B - 64 KiB
		}
		interval := time.Duration(1+rng.IntN(20)) * time.Millisecond
		run.live = &liveRun{lp: plan.NewLive(cfg, interval), every: 20 + rng.IntN(101)}
		// Live.Apply chains its listener after the options'; the harness
		// replaces theirs, so the hook chains it back.
		o.EventListener = nil
		run.live.lp.Apply(o)
		run.live.hook = &liveHook{live: *o.EventListener, events: &run.live.events}
		return fmt.Sprintf("plan.NewLive(ceiling %d B, fixed %v, UseL6 %v; refit interval %v), refit by the test every %d ops%s",
			cfg.MaxFilterBytes, cfg.Fixed, cfg.UseL6, interval, run.live.every, desc)
	}
	panic("unknown metamorphic variant " + run.variant)
}

// countPolicies wraps every policy of o, the levels' and the readers' in
// Filters, to count their use in c, after wrap if it is not nil.
func countPolicies(o *pebble.Options, c *policyCounters, wrap func(pebble.FilterPolicy) pebble.FilterPolicy) {
	count := func(p pebble.FilterPolicy) pebble.FilterPolicy {
		if wrap != nil {
			p = wrap(p)
		}
		return countingPolicy{p, c}
	}
	for i := range o.Levels {
		if p := o.Levels[i].FilterPolicy; p != nil && p != pebble.NoFilterPolicy {
			o.Levels[i].FilterPolicy = count(p)
		}
	}
	for name, p := range o.Filters {
		o.Filters[name] = count(p)
	}
}

// checkMetamorphicFilters verifies that a run's options use only the
// policies its variant means: none at all without filters, and otherwise
// a filter on some level, every level's policy registered in Filters (so
// that every table is read through its filter), and every filtered level
// of the cuckoo family where the variant writes only that family.
func checkMetamorphicFilters(o *pebble.Options, variant string, bare bool) error {
	filtered := 0
	for i := range o.Levels {
		p := o.Levels[i].FilterPolicy
		if p == pebble.NoFilterPolicy {
			continue
		}
		filtered++
		name := p.Name()
		switch {
		case variant == "nofilter" || bare:
			return fmt.Errorf("L%d has filter policy %q", i, name)
		case o.Filters[name] == nil:
			return fmt.Errorf("L%d's policy %q is not in Filters %v", i, name, o.Filters)
		case variant == "mixed" && name != cuckooName && name != bloomName:
			return fmt.Errorf("L%d has filter policy %q in a plan of bloom and cuckoo", i, name)
		case variant != "pebble" && variant != "mixed" && name != cuckooName:
			return fmt.Errorf("L%d has filter policy %q, want the cuckoo family", i, name)
		}
	}
	if variant == "nofilter" || bare {
		if len(o.Filters) != 0 {
			return fmt.Errorf("Filters map %v without filters", o.Filters)
		}
		return nil
	}
	if filtered == 0 {
		return fmt.Errorf("no level has a filter")
	}
	return nil
}

// liveRun is the live variant's plan on one run, and what it did.
type liveRun struct {
	lp    *plan.Live
	every int // operations between the test's refits
	hook  *liveHook
	// db is the harness's database, as Options.DebugCheck last saw it:
	// Pebble calls DebugCheck within Open, so after New or a restart it is
	// the database open now.
	db     atomic.Pointer[pebble.DB]
	events atomic.Int64 // flushes, compactions and ingests the plan heard of
	asked  atomic.Int64 // refits the test asked for that ran
	asking atomic.Bool  // a refit the test asked for runs

	starts int
	refits int // fits the plan ran, from its Status
	mu     sync.Mutex
	errs   []error
}

// install sets the hooks that reach the harness's database on testOpts.
func (l *liveRun) install(testOpts *metamorphic.TestOptions) {
	o := testOpts.Opts
	check := o.DebugCheck
	o.DebugCheck = func(db *pebble.DB) error {
		l.db.Store(db) // with the database's mutex held: record, call nothing
		if check != nil {
			return check(db)
		}
		return nil
	}
	testOpts.CustomOpts = append(testOpts.CustomOpts, l.hook)
}

// fail records an error of the plan's, reported after the run.
func (l *liveRun) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *liveRun) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return errors.Join(l.errs...)
}

// start starts the plan on the database open now.
func (l *liveRun) start() {
	db := l.db.Load()
	if db == nil {
		l.fail(errors.New("Options.DebugCheck never saw the database: the live plan cannot start"))
		return
	}
	l.starts++
	if _, err := l.lp.Start(db); err != nil {
		l.fail(fmt.Errorf("Live.Start: %w", err))
	}
}

// execute runs test's operations one at a time, with the live plan started
// on the harness's database and stopped before each operation that closes
// or restarts it, and a refit asked for every l.every operations from a
// goroutine that runs beside the operations after it.
func (l *liveRun) execute(test *metamorphic.Test, ops metamorphic.Ops) error {
	closes := 0
	for _, op := range ops {
		if closesDB(op) != 0 {
			closes++
		}
	}
	if closes == 0 {
		// The operations end with the database's Close: without finding it
		// the plan would read a closing database.
		return errors.New("no operation of the run closes the database: Pebble's metamorphic op types changed")
	}
	var refits sync.WaitGroup
	defer refits.Wait()
	defer l.lp.Stop()
	l.start()
	for i, op := range ops {
		kind := closesDB(op)
		if kind != 0 {
			l.lp.Stop()
		}
		if _, _, err := test.Step(); err != nil {
			return err
		}
		switch {
		case kind == restartOp:
			l.start()
		case kind == 0 && i%l.every == 0 && l.asking.CompareAndSwap(false, true):
			// One refit asked at a time: one slower than the operations
			// (under the race detector) is not queued behind.
			refits.Add(1)
			go func() {
				defer refits.Done()
				defer l.asking.Store(false)
				switch err := l.lp.Refit(); {
				case err == nil:
					l.asked.Add(1)
				case !errors.Is(err, plan.ErrNotStarted): // stopped meanwhile
					l.fail(fmt.Errorf("Live.Refit after op %d: %w", i, err))
				}
			}()
		}
	}
	l.lp.Stop()
	refits.Wait()
	st := l.lp.Status()
	l.refits = st.Refits
	if st.FitError != nil {
		l.fail(fmt.Errorf("the live plan's last fit: %w", st.FitError))
	}
	return nil
}

// What closesDB finds.
const (
	closeOp   = 1
	restartOp = 2
)

// closesDB reports whether op, one of the generated operations, closes the
// database (closeOp) or restarts it (restartOp). Pebble's metamorphic
// package exports neither type: they are found by name, and a Close by the
// tag of its object's id (dbTag, the top four bits, in metamorphic/utils.go).
func closesDB(op any) int {
	v := reflect.ValueOf(op)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return 0
	}
	s := v.Elem()
	switch s.Type().Name() {
	case "dbRestartOp":
		return restartOp
	case "closeOp":
		if id := s.FieldByName("objID"); id.IsValid() && id.CanUint() && id.Uint()>>28 == 1 {
			return closeOp
		}
	}
	return 0
}

// liveHook is a metamorphic.CustomOption that chains the live plan's event
// listener back onto the harness's options: metamorphic.New replaces the
// EventListener of the options it is given with its own, then calls each
// custom option's Open with those options (not a copy, whatever its doc
// says) before it opens the database, and again before each reopen.
type liveHook struct {
	live    pebble.EventListener  // the plan's, from Live.Apply
	events  *atomic.Int64         // counts the events passed on
	harness *pebble.EventListener // the harness's own, as first seen
}

var _ metamorphic.CustomOption = (*liveHook)(nil)

func (h *liveHook) Name() string  { return "pebble_cuckoo_live_plan" }
func (h *liveHook) Value() string { return "on" }

// Open chains the plan's listener after the harness's.
func (h *liveHook) Open(o *pebble.Options) error {
	if h.harness == nil {
		h.harness = o.EventListener
	}
	live := h.live
	el := pebble.TeeEventListener(*h.harness, pebble.EventListener{
		FlushEnd: func(info pebble.FlushInfo) {
			h.events.Add(1)
			live.FlushEnd(info)
		},
		CompactionEnd: func(info pebble.CompactionInfo) {
			h.events.Add(1)
			live.CompactionEnd(info)
		},
		TableIngested: func(info pebble.TableIngestInfo) {
			h.events.Add(1)
			live.TableIngested(info)
		},
	})
	o.EventListener = &el
	return nil
}

func (h *liveHook) Close(*pebble.Options) error { return nil }
