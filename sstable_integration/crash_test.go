package sstableintegration

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// Sizes of a crash cycle: writer goroutines and the most keys in one
// batch. A database lives through crashLineage cycles before a fresh one
// starts, so that checking every key stays cheap.
const (
	crashWriters  = 3
	crashBatchMax = 16
	crashLineage  = 4
)

// crashConfig is the filter configuration of one cycle: a policy for each
// level and the Filters that read them.
type crashConfig struct {
	levels [7]pebble.FilterPolicy
	// live, if not nil, is the configuration of a live plan set on the
	// levels after them and started on each open, refitting every
	// millisecond while the writers write.
	live *plan.Config
}

func (c crashConfig) String() string {
	var b strings.Builder
	for i, p := range c.levels {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "L%d=%s", i, policyString(p))
	}
	if c.live != nil {
		fmt.Fprintf(&b, " live plan %+v", *c.live)
	}
	return b.String()
}

// open opens the cycle's database on fs, with its live plan started if it
// has one, and returns it with the function that closes it (through the
// plan's DB, which stops the refits first).
func (c crashConfig) open(t *testing.T, fs vfs.FS, f dbFormat, st *crashStats) (*pebble.DB, func()) {
	t.Helper()
	o := c.options(fs, f)
	var lp *plan.Live
	if c.live != nil {
		lp = plan.NewLive(*c.live, time.Millisecond)
		lp.Apply(o)
	}
	db, err := pebble.Open("db", o)
	if err != nil {
		t.Fatalf("%s: open: %v", c, err)
	}
	if lp == nil {
		return db, func() { closeDB(t, db) }
	}
	ldb, _ := lp.Start(db) // a fit's error is in the status; the levels keep writing
	return db, func() {
		if err := ldb.Close(); err != nil {
			t.Fatalf("%s: close: %v", c, err)
		}
		st.refits += lp.Status().Refits
	}
}

// options returns the options of the cycle's database on fs: small
// memtables and low compaction thresholds so that flushes and compactions
// run while the writers write.
func (c crashConfig) options(fs vfs.FS, f dbFormat) *pebble.Options {
	o := &pebble.Options{
		FS:                          fs,
		FormatMajorVersion:          f.fmv,
		Logger:                      pebbletest.QuietLogger{},
		MemTableSize:                64 << 10,
		MemTableStopWritesThreshold: 4,
		L0CompactionThreshold:       2,
		L0CompactionFileThreshold:   2,
		LBaseMaxBytes:               64 << 10,
	}
	// Apply registers the readers of both families; the levels are then
	// set one by one.
	cuckoopolicy.Apply(o, cuckoopolicy.FilterPolicy(10))
	for i, p := range c.levels {
		o.Levels[i].FilterPolicy = p
	}
	return o
}

// crashVariant draws the filter configuration of each cycle.
type crashVariant struct {
	name string
	draw func(rng *rand.Rand) crashConfig
}

var crashVariants = []crashVariant{
	{"cuckoo", func(*rand.Rand) crashConfig {
		var c crashConfig
		for i := range c.levels {
			c.levels[i] = cuckoopolicy.FilterPolicy(10)
		}
		return c
	}},
	// bloom.FilterPolicy(10) on some levels, cuckoopolicy.FilterPolicy(b)
	// on others (at least one of each), pebble.NoFilterPolicy on one; a new
	// draw every cycle, so a table keeps the filter it was written with
	// while the level it sits on changes family.
	{"mixed", func(rng *rand.Rand) crashConfig {
		var c crashConfig
		b := cuckoopolicy.FilterPolicy(6 + rng.IntN(15)) // 6..20
		perm := rng.Perm(7)
		c.levels[perm[0]] = pebble.NoFilterPolicy
		c.levels[perm[1]] = bloom.FilterPolicy(10)
		c.levels[perm[2]] = b
		for _, l := range perm[3:] {
			if rng.IntN(2) == 0 {
				c.levels[l] = bloom.FilterPolicy(10)
			} else {
				c.levels[l] = b
			}
		}
		return c
	}},
	// A live plan on every level, refitting while the writers write: at
	// its default budget (FilterPolicy(10)'s bytes, the levels before it),
	// or a small fixed one, where its levels write bloom blocks in this
	// package's trailer and unfiltered blocks; with L6 filters or without.
	{"live", func(rng *rand.Rand) crashConfig {
		var c crashConfig
		for i := range c.levels {
			c.levels[i] = cuckoopolicy.FilterPolicy(10)
		}
		cfg := plan.Config{UseL6: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 {
			cfg.MaxFilterBytes, cfg.Fixed = uint64(rng.IntN(8<<10)), true
		}
		c.live = &cfg
		return c
	}},
}

// crashKey is the i-th key of writer w in cycle c of a database. Writers
// write even i only; odd ones are absent keys inside the tables' ranges.
func crashKey(c, w, i int) []byte {
	return fmt.Appendf(nil, "c/%05d/%d/%07d", c, w, i)
}

// crashValue is the value written under k: derived from k, so that any
// value read back can be checked, and 16 to 527 bytes long, so that the
// memtables fill.
func crashValue(k []byte) []byte {
	h := crc32.ChecksumIEEE(k)
	v := append(append([]byte(nil), k...), '=')
	return append(v, bytes.Repeat([]byte{'a' + byte(h%26)}, 16+int(h>>8)%512)...)
}

// lineage is one database carried from crash to crash: its filesystem (the
// crash clone of the last cycle) and what was written to it.
type lineage struct {
	fs      *vfs.MemFS
	format  dbFormat
	first   int             // the cycle that created it
	synced  map[string]bool // keys that must be present
	maybe   map[string]bool // keys that may be present: unsynced, or synced while the crash was taken
	written map[[2]int]int  // (cycle, writer) -> number of keys written
}

// crashRecorder tracks the keys of one cycle's writers against the moment
// of the crash. A synced batch counts as durable only if its Commit
// returned before the crash clone was taken: a writer records it after
// Commit returns, and the crash marks the recorder before it clones, both
// under mu; whatever is recorded after the mark stays "maybe".
type crashRecorder struct {
	mu       sync.Mutex
	lin      *lineage
	crashed  bool
	inFlight int // commits begun before the crash and returned after it
	batches  int
	syncs    int
}

func (r *crashRecorder) begin(c, w, n int, keys [][]byte) (beforeCrash bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys {
		r.lin.maybe[string(k)] = true
	}
	r.lin.written[[2]int{c, w}] = n
	return !r.crashed
}

func (r *crashRecorder) commit(keys [][]byte, synced, beforeCrash bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.crashed {
		if beforeCrash {
			r.inFlight++
		}
		return
	}
	r.batches++
	if synced {
		r.syncs++
		for _, k := range keys {
			r.lin.synced[string(k)] = true
		}
	}
}

func (r *crashRecorder) markCrashed() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.crashed = true
}

// crashStats sums what the cycles did, for the log and the final checks.
type crashStats struct {
	cycles, batches, syncs, inFlight int
	keysChecked, filterSkips         int64
	cuckoo, cuckooL6, bloom          int // checks that found such tables
	refits                           int // live plans' fits
}

// TestCrashCycles runs crash cycles on Pebble's crashable in-memory
// filesystem (vfs.NewCrashableMem, CrashClone) with cuckoo filters, in three
// variants: cuckoopolicy.FilterPolicy(10) on every level through
// cuckoopolicy.Apply; a per-level mix drawn anew each cycle (bloom(10) on
// some levels, cuckoo(b) on others, no filter on one) with the readers of
// both families registered by Apply; and a live plan (package plan)
// refitting every millisecond while the writers write and while the clone
// is checked, closed through its DB.
//
// Each cycle opens the database, runs three writers committing batches of
// unique keys, synced or not at random, while another goroutine flushes and
// compacts at random points and automatic compactions run; at a random
// write operation on the filesystem (a WAL write, an sstable being written,
// a MANIFEST update), taken from inside that operation so that writes are
// in flight, it clones the filesystem as a crash would leave it, keeping a
// random share of the unsynced data. It then stops the writers, closes the
// database, reopens the clone and checks, with checkReader, that every key
// synced before the crash is read back by db.Get and by SeekPrefixGE with
// UseL6Filters, that every key present is one written, with its value, and
// that absent keys are absent. A database lives four cycles, in a table
// format drawn at random; then a fresh one starts.
//
// By default each variant runs 24 cycles (8 smaller ones with -short); with
// PEBBLE_CUCKOO_LONG=1, the repository's long-run switch, 1000 each. The
// logged seed, replayed with PEBBLE_CUCKOO_SEED, repeats every draw
// (configurations, batches, crash points), though not the interleaving of
// the goroutines.
func TestCrashCycles(t *testing.T) {
	t.Parallel()
	seed := pebbletest.Seed(t)
	cycles := pebbletest.Scale(8, 24, 1000)
	// The most write operations on the filesystem (WAL, sstables, MANIFEST)
	// before a crash: a few flushes of the 64 KiB memtables, fewer with
	// -short, which CI also runs under the race detector.
	writeOps := pebbletest.Scale(250, 600, 600)
	for _, v := range crashVariants {
		t.Run(v.name, func(t *testing.T) {
			rng := pebbletest.Rand(seed)
			var st crashStats
			var lin *lineage
			for c := 0; c < cycles; c++ {
				if c%crashLineage == 0 {
					lin = &lineage{
						fs:      vfs.NewCrashableMem(),
						format:  dbFormats[rng.IntN(len(dbFormats))],
						first:   c,
						synced:  map[string]bool{},
						maybe:   map[string]bool{},
						written: map[[2]int]int{},
					}
				}
				crashCycle(t, rng, v.draw(rng), lin, c, writeOps, &st)
			}
			t.Logf("%d cycles: %d batches committed before the crashes (%d synced), %d commits in flight at a crash; "+
				"%d keys checked, %d tables skipped by a filter; checks with cuckoo tables %d (in L6 %d), with bloom tables %d; %d live fits",
				st.cycles, st.batches, st.syncs, st.inFlight, st.keysChecked, st.filterSkips, st.cuckoo, st.cuckooL6, st.bloom, st.refits)
			// The checks must have gone through the filters: tables
			// skipped, cuckoo filters in L6 (read by UseL6Filters) where
			// every level has them, bloom filters beside cuckoo ones in
			// the mix.
			if st.filterSkips == 0 || st.cuckoo == 0 || (v.name == "cuckoo" && st.cuckooL6 == 0) || (v.name == "mixed" && st.bloom == 0) ||
				(v.name == "live" && st.refits == 0) {
				t.Fatalf("the checks did not exercise the filters: %+v", st)
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// crashCycle runs one cycle on lin (see TestCrashCycles) and leaves lin.fs
// the crash clone.
func crashCycle(t *testing.T, rng *rand.Rand, cfg crashConfig, lin *lineage, c, writeOps int, st *crashStats) {
	t.Helper()
	unsynced := rng.IntN(101)
	crashAt := 1 + rng.IntN(writeOps)
	what := fmt.Sprintf("cycle %d (database of cycle %d, %s tables, crash at write %d keeping %d%% of unsynced data; %s)",
		c, lin.first, lin.format.name, crashAt, unsynced, cfg)

	rec := &crashRecorder{lin: lin}
	var ops atomic.Int64
	ops.Store(-1 << 40) // not counting until the database is open
	cloned := make(chan *vfs.MemFS, 1)
	cloneRNG := pebbletest.Rand(rng.Uint64())
	// The absent keys depend on what the writers wrote: a generator of
	// their own keeps rng's draws the same on a replay.
	probeRNG := pebbletest.Rand(rng.Uint64())
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind.ReadOrWrite() == errorfs.OpIsWrite && ops.Add(1) == int64(crashAt) {
			rec.markCrashed()
			cloned <- lin.fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: unsynced, RNG: cloneRNG})
		}
		return nil
	})
	db, closeFirst := cfg.open(t, errorfs.Wrap(lin.fs, inj), lin.format, st)
	ops.Store(0)

	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < crashWriters; w++ {
		wrng := pebbletest.Rand(rng.Uint64())
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for !stop.Load() {
				keys := make([][]byte, 1+wrng.IntN(crashBatchMax))
				b := db.NewBatch()
				for j := range keys {
					keys[j] = crashKey(c, w, 2*n)
					n++
					if err := b.Set(keys[j], crashValue(keys[j]), nil); err != nil {
						t.Errorf("%s: Set: %v", what, err)
						return
					}
				}
				synced := wrng.IntN(2) == 0
				opt := pebble.NoSync
				if synced {
					opt = pebble.Sync
				}
				before := rec.begin(c, w, n, keys)
				if err := b.Commit(opt); err != nil {
					t.Errorf("%s: Commit: %v", what, err)
					return
				}
				rec.commit(keys, synced, before)
			}
		}()
	}
	mrng := pebbletest.Rand(rng.Uint64())
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			// Wait for a few more write operations, then flush or compact.
			next := ops.Load() + 1 + mrng.Int64N(40)
			for ops.Load() < next && !stop.Load() {
				time.Sleep(20 * time.Microsecond)
			}
			var err error
			switch mrng.IntN(4) {
			case 0:
				err = db.Flush()
			case 1:
				err = db.Compact(context.Background(), []byte("c/"), []byte("c0"), false)
			case 2:
				lo, hi := crashKey(c, mrng.IntN(crashWriters), mrng.IntN(400)), crashKey(c, crashWriters, 0)
				err = db.Compact(context.Background(), lo, hi, false)
			}
			if err != nil {
				t.Errorf("%s: flush or compaction: %v", what, err)
				return
			}
		}
	}()

	var clone *vfs.MemFS
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case clone = <-cloned:
	case <-done: // every goroutine failed before the crash
	}
	stop.Store(true)
	<-done
	if t.Failed() {
		closeFirst()
		t.FailNow()
	}
	closeFirst()
	lin.fs = clone

	// Reopen the crash clone and read everything back (a live plan
	// refitting meanwhile).
	db, closeDB := cfg.open(t, lin.fs, lin.format, st)
	defer closeDB()
	st.cycles++
	st.batches += rec.batches
	st.syncs += rec.syncs
	st.inFlight += rec.inFlight
	checkCrashed(t, what, probeRNG, db, lin, st)
}

// checkCrashed checks the reopened database against lin: every key it holds
// was written, with its value; every synced key is there (Get, and
// SeekPrefixGE with UseL6Filters); absent keys are absent. Keys found are
// durable from now on: they join lin.synced.
func checkCrashed(t *testing.T, what string, rng *rand.Rand, db *pebble.DB, lin *lineage, st *crashStats) {
	t.Helper()
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &pebbletest.Failures{T: t, What: what + ": scan"}
	present := oracle{}
	for valid := it.First(); valid; valid = it.Next() {
		k := string(it.Key())
		if !lin.synced[k] && !lin.maybe[k] {
			f.Add("%q present, never written", k)
		} else if v := it.Value(); !bytes.Equal(v, crashValue(it.Key())) {
			f.Add("%q = %q, want %q", k, v, crashValue(it.Key()))
		}
		present[k] = string(crashValue(it.Key()))
	}
	if err := it.Error(); err != nil {
		f.Add("scan: %v", err)
	}
	if err := it.Close(); err != nil {
		f.Add("close: %v", err)
	}
	for k := range lin.synced {
		if _, ok := present[k]; !ok {
			f.Add("synced key %q lost", k)
		}
	}
	f.Check()

	// Absent keys: odd indexes inside the written ranges.
	var absent [][]byte
	for cw, n := range lin.written {
		for j := 0; j < 8 && n > 0; j++ {
			absent = append(absent, crashKey(cw[0], cw[1], 2*rng.IntN(n)+1))
		}
	}
	before := filterMetrics(db)
	checkReader(t, what, db, bytes.Compare, present, absent)
	after := filterMetrics(db)
	st.keysChecked += int64(len(present))
	st.filterSkips += after.Hits - before.Hits

	var cuckoo, cuckooL6, bloom bool
	for _, tf := range liveTables(t, db, lin.fs, "db") {
		switch tf.props.FilterPolicyName {
		case cuckoopolicy.PolicyName:
			cuckoo, cuckooL6 = true, cuckooL6 || tf.level == 6
		case bloomName:
			bloom = true
		}
	}
	st.cuckoo += b2i(cuckoo)
	st.cuckooL6 += b2i(cuckooL6)
	st.bloom += b2i(bloom)
	for k := range present {
		lin.synced[k] = true
	}
}
