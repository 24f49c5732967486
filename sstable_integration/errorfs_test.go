package sstableintegration

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/sstable/block"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// filterFaults is an errorfs.Injector that fails, with probability p, the
// reads of filter blocks: every ReadAt on a table it was told about whose
// offset falls inside that table's filter block or its block trailer. Pebble
// v2.1.7 reads a block of a local file with one ReadAt at the block's offset
// (objstorageprovider ignores read-before and reads ahead only through the
// OS), so these are exactly the filter reads. Safe for concurrent use.
type filterFaults struct {
	mu     sync.Mutex
	rng    *rand.Rand
	p      float64
	armed  bool
	blocks map[string][2]int64 // by file base name: [start, end) of the filter block and its trailer
	counts faultCounts
}

// faultCounts counts the filter reads an injector saw and those it failed.
type faultCounts struct {
	reads, fired int64
}

func (c faultCounts) minus(d faultCounts) faultCounts {
	return faultCounts{c.reads - d.reads, c.fired - d.fired}
}

func (f *filterFaults) String() string { return "filter block read faults" }

// MaybeError implements errorfs.Injector.
func (f *filterFaults) MaybeError(op errorfs.Op) error {
	if op.Kind != errorfs.OpFileReadAt {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.blocks[baseName(op.Path)]
	if !f.armed || !ok || op.Offset < r[0] || op.Offset >= r[1] {
		return nil
	}
	f.counts.reads++
	if f.rng.Float64() >= f.p {
		return nil
	}
	f.counts.fired++
	return errorfs.ErrInjected
}

// arm targets the filter blocks of the database's live tables (read through
// fs, below the injector) and starts failing their reads with probability p;
// it returns the number of tables targeted on each level.
func (f *filterFaults) arm(t *testing.T, db *pebble.DB, fs vfs.FS, dir string, p float64) [7]int {
	t.Helper()
	blocks := map[string][2]int64{}
	var perLevel [7]int
	for _, tf := range liveTables(t, db, fs, dir) {
		name, _, layout := readFilterBlock(t, fs, tf.path, sstable.ReaderOptions{})
		if want := "fullfilter." + cuckoopolicy.PolicyName; name != want {
			t.Fatalf("%s: filter block %q in the metaindex, want %q", tf.path, name, want)
		}
		h := layout.Filter[0].Handle
		blocks[baseName(tf.path)] = [2]int64{int64(h.Offset), int64(h.Offset + h.Length + block.TrailerLen)}
		perLevel[tf.level]++
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blocks, f.p, f.armed = blocks, p, true
	return perLevel
}

func (f *filterFaults) disarm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = false
}

func (f *filterFaults) load() faultCounts {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts
}

func baseName(path string) string {
	return path[strings.LastIndexByte(path, '/')+1:]
}

// faultTally is what the lookups of one mode gave.
type faultTally struct {
	lookups   int
	readFile  int // lookups that read a filter block from the file
	fired     int // lookups during which the injector failed a read
	surfaced  int // ... and that returned the injected error
	lost      int // present keys reported missing
	swallowed int // lookups that hit an injected error yet answered
	spurious  int // errors with no injection behind them
	wrong     int // wrong values and phantoms
}

// lookupFunc looks up k and reports whether it was found, with its value, or
// the error that the lookup returned.
type lookupFunc func(k []byte) (found bool, value []byte, err error)

func getLookup(db *pebble.DB) lookupFunc {
	return func(k []byte) (bool, []byte, error) {
		v, closer, err := db.Get(k)
		if err != nil {
			if errors.Is(err, pebble.ErrNotFound) {
				err = nil
			}
			return false, nil, err
		}
		v = slices.Clone(v)
		return true, v, closer.Close()
	}
}

// seekLookup runs SeekPrefixGE(k) on a fresh iterator with L6 filters on, so
// that no state (a cached error, a filter block held) carries from one
// lookup to the next.
func seekLookup(db *pebble.DB) lookupFunc {
	return func(k []byte) (bool, []byte, error) {
		it, err := db.NewIter(&pebble.IterOptions{UseL6Filters: true})
		if err != nil {
			return false, nil, err
		}
		found := it.SeekPrefixGE(k) && bytes.Equal(it.Key(), k)
		var v []byte
		if found {
			v, err = it.ValueAndErr()
			v = slices.Clone(v)
		}
		if err == nil {
			err = it.Error()
		}
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		return found, v, err
	}
}

// probeWithFaults looks up every present key and every absent one with
// lookup, watching the injector around each lookup, and classifies the
// answers. A lookup during which a filter read failed must return the
// injected error; one during which none failed must answer correctly; no
// lookup may report a present key missing.
func probeWithFaults(t *testing.T, what string, faults *filterFaults, lookup lookupFunc, want oracle, absent [][]byte) faultTally {
	t.Helper()
	var tally faultTally
	f := &pebbletest.Failures{T: t, What: what}
	probe := func(k []byte, wantV string, present bool) {
		before := faults.load()
		found, v, err := lookup(k)
		c := faults.load().minus(before)
		tally.lookups++
		if c.reads > 0 {
			tally.readFile++
		}
		if c.fired > 0 {
			tally.fired++
		}
		switch {
		case err != nil && c.fired > 0:
			tally.surfaced++
			if !errors.Is(err, errorfs.ErrInjected) {
				f.Add("%q: %d filter reads failed, and the lookup returned another error: %v", k, c.fired, err)
			}
		case err != nil:
			tally.spurious++
			f.Add("%q: error with no filter read failed: %v", k, err)
		case c.fired > 0:
			tally.swallowed++
			f.Add("%q: %d filter reads failed, and the lookup answered found=%v without an error", k, c.fired, found)
			if present && !found {
				tally.lost++
			}
		case present && !found:
			tally.lost++
			f.Add("%q: present key reported missing", k)
		case present && string(v) != wantV:
			tally.wrong++
			f.Add("%q = %q, want %q", k, v, wantV)
		case !present && found:
			tally.wrong++
			f.Add("%q: absent key found with value %q", k, v)
		}
	}
	for k, v := range want {
		probe([]byte(k), v, true)
	}
	for _, k := range absent {
		probe(k, "", false)
	}
	t.Logf("%s: %+v", what, tally)
	f.Check()
	return tally
}

// TestFilterReadErrors fails reads of filter blocks through Pebble's
// vfs/errorfs, at random, in a database configured with
// cuckoopolicy.Apply(FilterPolicy(10)) and a one-byte block cache (so that
// every lookup reads the filter from the file), in both table formats, and
// checks, over every present key and half as many absent ones, that every
// failure surfaces as an error and never as "absent":
//
//   - four overlapping L0 tables, probed by db.Get and by SeekPrefixGE with
//     UseL6Filters;
//   - the same keys compacted into L6, probed by SeekPrefixGE with
//     UseL6Filters; db.Get, which never reads L6 filters, must then meet no
//     failure at all (the injector targets filter blocks only).
//
// A lookup during which a filter read failed must return errorfs.ErrInjected;
// one during which none failed must answer correctly. Each mode must read
// filters from the file on every lookup, fail some and leave others, so the
// test cannot pass without injecting anything.
func TestFilterReadErrors(t *testing.T) {
	t.Parallel()
	seed := pebbletest.Seed(t)
	n := pebbletest.Scale(1000, 2000, 10000)
	const tables = 4
	eachFormat(t, seed, func(t *testing.T, f dbFormat, rng *rand.Rand, mem *vfs.MemFS) {
		faults := &filterFaults{rng: pebbletest.Rand(rng.Uint64())}
		o := &pebble.Options{
			FS:                          errorfs.Wrap(mem, faults),
			FormatMajorVersion:          f.fmv,
			Logger:                      pebbletest.QuietLogger{},
			CacheSize:                   1,
			DisableAutomaticCompactions: true,
			DisableTableStats:           true,
			MemTableSize:                64 << 20,
		}
		cuckoopolicy.Apply(o, cuckoopolicy.FilterPolicy(10))
		var corruptions atomic.Int64
		o.EventListener = &pebble.EventListener{
			DataCorruption: func(pebble.DataCorruptionInfo) { corruptions.Add(1) },
		}
		db := openDB(t, "db", o)
		defer closeDB(t, db)
		want := oracle{}
		writeInterleaved(t, db, "k", n, tables, want)
		absent := absentOdd(rng, "k", n, n/2)

		// requireCoverage asserts that a mode read a filter block from the
		// file on every lookup, and that the injector both failed and spared
		// some of them.
		requireCoverage := func(what string, tl faultTally) {
			t.Helper()
			if tl.readFile != tl.lookups || tl.fired == 0 || tl.fired == tl.lookups || tl.surfaced != tl.fired {
				t.Fatalf("%s: %d lookups, %d read a filter from the file, %d met an injected failure, %d surfaced it; "+
					"want every lookup to read a filter, some but not all to fail, every failure surfaced",
					what, tl.lookups, tl.readFile, tl.fired, tl.surfaced)
			}
		}

		if c := levelCounts(db); c[0] != tables {
			t.Fatalf("tables per level %v, want %d overlapping L0 tables", c, tables)
		}
		if got := faults.arm(t, db, mem, "db", 0.5); got[0] != tables {
			t.Fatalf("filter blocks targeted per level %v, want the %d L0 tables", got, tables)
		}
		requireCoverage("L0, Get", probeWithFaults(t, "L0, Get", faults, getLookup(db), want, absent))
		requireCoverage("L0, SeekPrefixGE", probeWithFaults(t, "L0, SeekPrefixGE", faults, seekLookup(db), want, absent))
		faults.disarm()

		if err := db.Compact(context.Background(), key("k", 0), key("k", 2*n+1), false); err != nil {
			t.Fatal(err)
		}
		if c := levelCounts(db); c[6] == 0 || slices.Max(c[:6]) != 0 {
			t.Fatalf("tables per level %v, want them all in L6", c)
		}
		faults.arm(t, db, mem, "db", 0.5)
		requireCoverage("L6, SeekPrefixGE with UseL6Filters",
			probeWithFaults(t, "L6, SeekPrefixGE with UseL6Filters", faults, seekLookup(db), want, absent))
		faults.arm(t, db, mem, "db", 1)
		if tl := probeWithFaults(t, "L6, Get", faults, getLookup(db), want, absent); tl.readFile != 0 {
			t.Fatalf("L6, Get: %d lookups read an L6 filter block: db.Get should not, or the injector targets other blocks", tl.readFile)
		}
		faults.disarm()

		// With nothing injected, every key reads back and the filters
		// skip absent keys.
		checkReader(t, "after the faults", db, bytes.Compare, want, absent)
		if fm := absentSeeks(t, db, absent, true); fm.Hits == 0 {
			t.Fatalf("no absent prefix was skipped by the L6 filters: %+v", fm)
		}
		total := faults.load()
		t.Logf("%d filter reads seen, %d failed; %d corruption events", total.reads, total.fired, corruptions.Load())
	})
}
