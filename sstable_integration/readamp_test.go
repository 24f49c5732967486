package sstableintegration

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// readAmp is what a run of absent Gets read.
type readAmp struct {
	gets       int
	dataBlocks int64 // data block reads
	otherReads int64 // filter, index and other block reads
	filter     sstable.FilterMetrics
	bitsPerKey float64 // filter bits per key, from the table properties
}

func (r readAmp) perGet() float64 { return float64(r.dataBlocks) / float64(r.gets) }

func (r readAmp) fpr() float64 {
	return float64(r.filter.Misses) / float64(r.filter.Hits+r.filter.Misses)
}

// measureReadAmp builds a database of `tables` overlapping L0 tables
// (automatic compactions off, a one-byte block cache so that every block
// read reaches the filesystem) holding the present keys, with policy on all
// levels, and counts the data blocks that db.Get of each absent key reads.
func measureReadAmp(t *testing.T, f dbFormat, policy pebble.FilterPolicy, tables int, present, absent [][]byte) readAmp {
	t.Helper()
	mem := vfs.NewMem()
	cfs := pebbletest.NewCountingFS(mem)
	o := dbOptions(cfs, f, policy)
	o.CacheSize = 1
	o.DisableAutomaticCompactions = true
	o.MemTableSize = 64 << 20
	db := openDB(t, "db", o)
	defer closeDB(t, db)
	want := writeRandomInterleaved(t, db, present, tables)
	if c := levelCounts(db); c[0] != int64(tables) {
		t.Fatalf("tables per level %v, want %d in L0", c, tables)
	}

	// The data blocks of every table, by file and offset.
	ropts := o.Clone()
	ropts.EnsureDefaults()
	dataBlocks := map[string]map[int64]bool{}
	var filterBits, keys float64
	for _, tf := range liveTables(t, db, mem, "db") {
		if tf.props.FilterPolicyName != policy.Name() {
			t.Fatalf("table %s has filter policy %q, want %q", tf.path, tf.props.FilterPolicyName, policy.Name())
		}
		filterBits += 8 * float64(tf.props.FilterSize)
		keys += float64(tf.props.NumEntries)
		r, err := openTable(mem, tf.path, ropts.MakeReaderOptions())
		if err != nil {
			t.Fatal(err)
		}
		layout, err := r.Layout()
		_ = r.Close()
		if err != nil {
			t.Fatal(err)
		}
		offs := map[int64]bool{}
		for _, h := range layout.Data {
			offs[int64(h.Offset)] = true
		}
		dataBlocks[mem.PathBase(tf.path)] = offs
	}

	// Open every table once (the file cache keeps them), then count.
	absentGets(t, db, absent[:1])
	cfs.Reset()
	fm := absentGets(t, db, absent)
	data, other := cfs.Count(dataBlocks)
	ra := readAmp{gets: len(absent), dataBlocks: data, otherReads: other, filter: fm, bitsPerKey: filterBits / keys}

	// Every table's filter was consulted once per Get, and each probe that
	// passed read at least one data block (at most two: the seek may step
	// into the next block).
	if fm.Hits+fm.Misses != int64(tables*len(absent)) {
		t.Fatalf("%s: %d absent Gets consulted %d filters, want %d", policyString(policy), len(absent), fm.Hits+fm.Misses, tables*len(absent))
	}
	if data < fm.Misses || data > 2*fm.Misses {
		t.Fatalf("%s: %d data blocks read for %d filter probes that passed", policyString(policy), data, fm.Misses)
	}

	// No key was lost on the way: a sample of present keys, all found.
	sample := oracle{}
	for k, v := range want {
		if len(sample) == min(2000, len(want)) {
			break
		}
		sample[k] = v
	}
	f2 := &pebbletest.Failures{T: t, What: policyString(policy)}
	for k, v := range sample {
		got, closer, err := db.Get([]byte(k))
		if err != nil || string(got) != v {
			f2.Add("Get(%q) = %q, %v; want %q", k, got, err, v)
		}
		if err == nil {
			_ = closer.Close()
		}
	}
	f2.Check()
	return ra
}

// TestReadAmplification counts, in the same database layout with the same
// keys, the data blocks that absent Gets read through eight overlapping L0
// tables with bloom.FilterPolicy(B) and with cuckoopolicy.FilterPolicy(B).
// Cuckoo must read fewer, by at least 5 standard deviations (Poisson
// counts), and the ratio must meet the project's targets: at most 0.70 at
// B=10 and 0.10 at B=16, in the row and the columnar format.
//
// The ratio's spread from one key set to the next puts the B=10 target
// about 3.5 standard deviations from its mean at the default number of
// Gets (see bench/NOTES.md): too close for a fresh seed each run, so the
// test runs a fixed seed, and a fresh one with PEBBLE_CUCKOO_LONG=1, whose
// five times as many Gets put the target about 5 standard deviations out.
func TestReadAmplification(t *testing.T) {
	t.Parallel()
	seed := pebbletest.FixedSeed(t, 1)
	const tables = 8
	// Tables of 4000 keys: Pebble's bloom rounds its bit array up to an odd
	// number of 64-byte lines, which at this size costs it only 1% extra
	// space at B=10 and none at B=16, so both policies spend the same
	// budget (at 2000 keys per table bloom(10) gets 10.5 bits per key).
	const perTable = 4000
	for _, tc := range []struct {
		bits   int
		target float64
		gets   int
	}{
		{10, 0.70, pebbletest.Scale(30000, 40000, 200000)},
		{16, 0.10, pebbletest.Scale(8000, 16000, 100000)},
	} {
		for _, f := range dbFormats {
			t.Run(fmt.Sprintf("B=%d/%s", tc.bits, f.name), func(t *testing.T) {
				present, absent := randomKeys(pebbletest.Rand(seed), tables, tables*perTable, tc.gets)
				b := measureReadAmp(t, f, bloom.FilterPolicy(tc.bits), tables, present, absent)
				c := measureReadAmp(t, f, cuckoopolicy.FilterPolicy(tc.bits), tables, present, absent)
				ratio := float64(c.dataBlocks) / float64(b.dataBlocks)
				se := ratio * math.Sqrt(1/float64(max(c.dataBlocks, 1))+1/float64(b.dataBlocks))
				t.Logf("%d absent Gets over %d L0 tables of %d keys: data blocks per absent Get: bloom(%d) %.4f (filter FPR %.3f%%, %.2f bits/key, %d other reads), cuckoo(%d) %.4f (FPR %.3f%%, %.2f bits/key, %d other reads); ratio %.3f ± %.3f (target <= %.2f)",
					tc.gets, tables, perTable,
					tc.bits, b.perGet(), 100*b.fpr(), b.bitsPerKey, b.otherReads,
					tc.bits, c.perGet(), 100*c.fpr(), c.bitsPerKey, c.otherReads,
					ratio, se, tc.target)
				// The comparison is at equal space: bloom may not get more
				// than 2% more filter bits per key.
				if b.bitsPerKey > 1.02*c.bitsPerKey {
					t.Fatalf("bloom has %.2f filter bits per key, cuckoo %.2f: not the same budget", b.bitsPerKey, c.bitsPerKey)
				}
				// The experiment must have the power to tell: bloom's false
				// positives must number enough for a ratio to mean something.
				if b.dataBlocks < 50 {
					t.Fatalf("bloom read only %d data blocks: too few absent Gets for a meaningful ratio", b.dataBlocks)
				}
				if !significantlyFewer(c.dataBlocks, b.dataBlocks, 5) {
					t.Fatalf("cuckoo read %d data blocks, bloom %d: not fewer by 5 standard deviations", c.dataBlocks, b.dataBlocks)
				}
				if ratio > tc.target {
					t.Fatalf("data blocks per absent Get, cuckoo(%d)/bloom(%d) = %.3f ± %.3f, want <= %.2f",
						tc.bits, tc.bits, ratio, se, tc.target)
				}
			})
		}
	}
}

// randomKeys returns n random present keys in order and m random absent
// keys, all inside the range of every one of `tables` tables that take the
// present keys in turn: keys are "user/" and 16 hex digits, like the random
// keys filter false-positive rates are usually measured on.
func randomKeys(rng *rand.Rand, tables, n, m int) (present, absent [][]byte) {
	gen := func() []byte { return fmt.Appendf(nil, "user/%016x", rng.Uint64()) }
	seen := map[string]bool{}
	for len(present) < n {
		if k := gen(); !seen[string(k)] {
			seen[string(k)] = true
			present = append(present, k)
		}
	}
	slices.SortFunc(present, bytes.Compare)
	lo, hi := present[tables], present[n-tables-1]
	for len(absent) < m {
		if k := gen(); !seen[string(k)] && bytes.Compare(k, lo) > 0 && bytes.Compare(k, hi) < 0 {
			seen[string(k)] = true
			absent = append(absent, k)
		}
	}
	return present, absent
}

// writeRandomInterleaved writes the sorted present keys into `tables`
// flushes, table t taking the keys at positions t, t+tables, ..., so that all
// tables overlap over the whole range, and returns the oracle.
func writeRandomInterleaved(t testing.TB, db *pebble.DB, present [][]byte, tables int) oracle {
	t.Helper()
	want := oracle{}
	for tab := 0; tab < tables; tab++ {
		b := db.NewBatch()
		for i := tab; i < len(present); i += tables {
			v := fmt.Sprintf("value of %s", present[i])
			if err := b.Set(present[i], []byte(v), nil); err != nil {
				t.Fatal(err)
			}
			want[string(present[i])] = v
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return want
}
