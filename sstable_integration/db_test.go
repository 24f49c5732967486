package sstableintegration

import (
	"bytes"
	"context"
	"fmt"
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

// key returns the i-th key of a keyspace: fixed width, so that keys sort by i.
func key(space string, i int) []byte {
	return fmt.Appendf(nil, "%s/%07d", space, i)
}

// writeInterleaved writes n keys key(space, 2i) (even numbers, so that the odd
// ones are absent keys inside every table's range) into `tables` flushes:
// table t holds the keys with i%tables == t, so every table spans the whole
// range and they all overlap.
func writeInterleaved(t testing.TB, db *pebble.DB, space string, n, tables int, o oracle) {
	t.Helper()
	for tab := 0; tab < tables; tab++ {
		b := db.NewBatch()
		for i := tab; i < n; i += tables {
			k := key(space, 2*i)
			v := fmt.Sprintf("%s=%d", k, i)
			if err := b.Set(k, []byte(v), nil); err != nil {
				t.Fatal(err)
			}
			o[string(k)] = v
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
}

// absentOdd returns m distinct absent keys key(space, 2i+1) from inside the
// range of every table written by writeInterleaved (away from its ends).
func absentOdd(rng *rand.Rand, space string, n, m int) [][]byte {
	const margin = 16
	m = min(m, n-2*margin)
	picked := map[int]bool{}
	out := make([][]byte, 0, m)
	for len(out) < m {
		i := margin + rng.IntN(n-2*margin)
		if picked[i] {
			continue
		}
		picked[i] = true
		out = append(out, key(space, 2*i+1))
	}
	return out
}

// absentProbes looks up every absent key with db.Get and with an iterator's
// SeekPrefixGE with UseL6Filters, and returns the filter metrics they
// produced: the filters of every level are consulted.
func absentProbes(t testing.TB, db *pebble.DB, absent [][]byte) sstable.FilterMetrics {
	t.Helper()
	g := absentGets(t, db, absent)
	s := absentSeeks(t, db, absent, true)
	return sstable.FilterMetrics{Hits: g.Hits + s.Hits, Misses: g.Misses + s.Misses}
}

// absentSeeks runs SeekPrefixGE on every absent key through one iterator,
// with or without L6 filters, and returns the filter metrics it caused.
func absentSeeks(t testing.TB, db *pebble.DB, absent [][]byte, useL6 bool) sstable.FilterMetrics {
	t.Helper()
	before := filterMetrics(db)
	it, err := db.NewIter(&pebble.IterOptions{UseL6Filters: useL6})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range absent {
		if it.SeekPrefixGE(k) {
			t.Fatalf("SeekPrefixGE(%q) found %q", k, it.Key())
		}
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	after := filterMetrics(db)
	return sstable.FilterMetrics{Hits: after.Hits - before.Hits, Misses: after.Misses - before.Misses}
}

// absentGets runs db.Get on every absent key and returns the filter metrics
// they produced.
func absentGets(t testing.TB, db *pebble.DB, absent [][]byte) sstable.FilterMetrics {
	t.Helper()
	before := filterMetrics(db)
	for _, k := range absent {
		if v, closer, err := db.Get(k); err != pebble.ErrNotFound {
			if err == nil {
				_ = closer.Close()
			}
			t.Fatalf("Get(%q) = %q, %v; want not found", k, v, err)
		}
	}
	after := filterMetrics(db)
	return sstable.FilterMetrics{Hits: after.Hits - before.Hits, Misses: after.Misses - before.Misses}
}

// writeDB creates the database "db" on fs with policy, writes n keys into
// `tables` flushes with writeInterleaved and closes it. It returns what the
// database holds.
func writeDB(t testing.TB, fs vfs.FS, f dbFormat, policy pebble.FilterPolicy, n, tables int) oracle {
	t.Helper()
	want := oracle{}
	db := openDB(t, "db", dbOptions(fs, f, policy))
	writeInterleaved(t, db, "k", n, tables, want)
	closeDB(t, db)
	return want
}

// checkFiltered checks db with checkReader against want and absent, then
// probes the absent keys (absentProbes): the filters must skip at least one.
func checkFiltered(t testing.TB, what string, db *pebble.DB, want oracle, absent [][]byte) {
	t.Helper()
	checkReader(t, what, db, bytes.Compare, want, absent)
	if fm := absentProbes(t, db, absent); fm.Hits == 0 {
		t.Fatalf("%s: no absent Get was filtered (%+v)", what, fm)
	}
}

// TestDBOverlappingL0 probes eight overlapping L0 tables with db.Get: every
// present key is found, every absent one is not, each absent Get consults all
// eight filters, and the filters skip nearly all of them.
func TestDBOverlappingL0(t *testing.T) {
	t.Parallel()
	seed := pebbletest.FixedSeed(t, 1) // statistical: fresh with PEBBLE_CUCKOO_LONG=1
	const tables = 8
	n, m := pebbletest.Scale(4000, 16000, 64000), pebbletest.Scale(1000, 4000, 20000)
	eachFormat(t, seed, func(t *testing.T, f dbFormat, rng *rand.Rand, fs *vfs.MemFS) {
		o := dbOptions(fs, f, cuckoopolicy.FilterPolicy(10))
		o.DisableAutomaticCompactions = true
		db := openDB(t, "db", o)
		defer closeDB(t, db)
		want := oracle{}
		writeInterleaved(t, db, "k", n, tables, want)
		if c := levelCounts(db); c[0] != tables {
			t.Fatalf("tables per level %v, want %d overlapping L0 tables", c, tables)
		}
		requireAllCuckoo(t, db, fs, "db")
		absent := absentOdd(rng, "k", n, m)
		checkReader(t, f.name, db, bytes.Compare, want, absent)

		fm := absentGets(t, db, absent)
		if fm.Hits+fm.Misses != int64(tables*len(absent)) {
			t.Fatalf("%d absent Gets consulted %d filters, want %d (all %d tables)",
				len(absent), fm.Hits+fm.Misses, tables*len(absent), tables)
		}
		_, bound := dbFPRBound(t, db, fs, "db", int(fm.Hits+fm.Misses))
		t.Logf("%d absent Gets: %d filter probes passed, %d skipped", len(absent), fm.Misses, fm.Hits)
		if float64(fm.Misses) > bound {
			t.Fatalf("%d of %d probes of absent keys passed the filters, bound %.1f", fm.Misses, fm.Hits+fm.Misses, bound)
		}
	})
}

// TestDBL6Filters compacts everything into L6 and checks Pebble's rules there:
// db.Get and plain iterators never consult L6 filters; iterators with
// UseL6Filters do, and skip absent keys without losing present ones.
func TestDBL6Filters(t *testing.T) {
	t.Parallel()
	seed := pebbletest.FixedSeed(t, 1) // statistical: fresh with PEBBLE_CUCKOO_LONG=1
	n, m := pebbletest.Scale(4000, 16000, 64000), pebbletest.Scale(1000, 4000, 20000)
	eachFormat(t, seed, func(t *testing.T, f dbFormat, rng *rand.Rand, fs *vfs.MemFS) {
		db := openDB(t, "db", dbOptions(fs, f, cuckoopolicy.FilterPolicy(12)))
		defer closeDB(t, db)
		want := oracle{}
		writeInterleaved(t, db, "k", n, 3, want)
		if err := db.Compact(context.Background(), key("k", 0), key("k", 2*n+1), false); err != nil {
			t.Fatal(err)
		}
		c := levelCounts(db)
		if c[6] != 1 || slices.Max(c[:6]) != 0 {
			t.Fatalf("tables per level %v, want one table, in L6", c)
		}
		requireAllCuckoo(t, db, fs, "db")
		absent := absentOdd(rng, "k", n, m)

		if fm := absentGets(t, db, absent); fm.Hits+fm.Misses != 0 {
			t.Fatalf("db.Get consulted L6 filters: %+v", fm)
		}
		probe := func(useL6 bool) sstable.FilterMetrics { return absentSeeks(t, db, absent, useL6) }
		if fm := probe(false); fm.Hits+fm.Misses != 0 {
			t.Fatalf("an iterator without UseL6Filters consulted L6 filters: %+v", fm)
		}
		fm := probe(true)
		if fm.Hits+fm.Misses != int64(len(absent)) {
			t.Fatalf("UseL6Filters: %d filter probes for %d absent prefixes", fm.Hits+fm.Misses, len(absent))
		}
		_, bound := dbFPRBound(t, db, fs, "db", len(absent))
		t.Logf("UseL6Filters: %d of %d absent prefixes skipped", fm.Hits, len(absent))
		if float64(fm.Misses) > bound {
			t.Fatalf("UseL6Filters: %d of %d absent prefixes passed the filter, bound %.1f", fm.Misses, len(absent), bound)
		}
		checkReader(t, f.name, db, bytes.Compare, want, absent)
	})
}

// TestDBReopen closes and reopens a database, with the same policy and with
// another instance of the family, and finds every key with the filters used.
func TestDBReopen(t *testing.T) {
	t.Parallel()
	seed := pebbletest.Seed(t)
	eachFormat(t, seed, func(t *testing.T, f dbFormat, rng *rand.Rand, fs *vfs.MemFS) {
		n := pebbletest.Scale(2000, 6000, 20000)
		want := writeDB(t, fs, f, cuckoopolicy.FilterPolicy(10), n, 4)
		absent := absentOdd(rng, "k", n, n/4)
		for _, p := range []pebble.FilterPolicy{cuckoopolicy.FilterPolicy(10), cuckoopolicy.Policy{}, cuckoopolicy.FilterPolicy(16)} {
			db := openDB(t, "db", dbOptions(fs, f, p))
			checkFiltered(t, fmt.Sprintf("reopened with %s", policyString(p)), db, want, absent)
			closeDB(t, db)
		}
	})
}

// TestDBIngest ingests external sstables built with sstable.NewWriter: with
// the database's policy, with other budgets of the family, and with bloom
// (absent from the database's Filters, so read unfiltered), overlapping the
// database's keys and not; every key stays readable, before and after a
// reopen, and the ingested cuckoo filters skip absent keys.
func TestDBIngest(t *testing.T) {
	t.Parallel()
	seed := pebbletest.Seed(t)
	eachFormat(t, seed, func(t *testing.T, f dbFormat, rng *rand.Rand, fs *vfs.MemFS) {
		n := pebbletest.Scale(2000, 6000, 20000)
		o := dbOptions(fs, f, cuckoopolicy.FilterPolicy(10))
		db := openDB(t, "db", o)
		want := oracle{}
		writeInterleaved(t, db, "k", n, 2, want)

		wo := func(p pebble.FilterPolicy) sstable.WriterOptions {
			return sstable.WriterOptions{TableFormat: db.FormatMajorVersion().MaxTableFormat(), FilterPolicy: p}
		}
		type ext struct {
			space  string
			policy pebble.FilterPolicy
			odd    bool // odd keys of "k": overlaps the database's tables
		}
		exts := []ext{
			{"k", cuckoopolicy.FilterPolicy(16), true},
			{"x", cuckoopolicy.FilterPolicy(10), false},
			{"y", bloom.FilterPolicy(10), false},
			{"z", cuckoopolicy.Policy{FingerprintBits: 20}, false},
		}
		var paths []string
		var absent [][]byte
		for e, x := range exts {
			m := map[string]string{}
			for i := 0; i < n; i += 2 {
				j := 2 * i
				if x.odd {
					j = 4*i + 1 // leaves 4i+3 absent
				}
				k := key(x.space, j)
				m[string(k)] = fmt.Sprintf("ext%d:%d", e, i)
				absent = append(absent, key(x.space, j+2))
			}
			path := fmt.Sprintf("ext%d.sst", e)
			writeTable(t, fs, path, wo(x.policy), sortedKVs(m, bytes.Compare))
			paths = append(paths, path)
			for k, v := range m {
				want[k] = v
			}
		}
		for _, p := range paths {
			if err := db.Ingest(context.Background(), []string{p}); err != nil {
				t.Fatalf("ingest %s: %v", p, err)
			}
		}
		counts := policyCounts(t, db, fs, "db")
		t.Logf("tables by filter policy after ingestion: %v, per level %v", counts, levelCounts(db))
		if counts[bloomName] != 1 || counts[cuckooName] < 4 {
			t.Fatalf("tables by filter policy %v: want the bloom table and the cuckoo ones", counts)
		}
		rng.Shuffle(len(absent), func(i, j int) { absent[i], absent[j] = absent[j], absent[i] })
		checkFiltered(t, "after ingestion", db, want, absent)
		closeDB(t, db)
		db = openDB(t, "db", dbOptions(fs, f, cuckoopolicy.FilterPolicy(12)))
		checkReader(t, "after reopen", db, bytes.Compare, want, absent)
		if err := db.Compact(context.Background(), []byte("a"), []byte("zz"), false); err != nil {
			t.Fatal(err)
		}
		checkReader(t, "after compaction", db, bytes.Compare, want, absent)
		t.Logf("tables by filter policy after compaction: %v", policyCounts(t, db, fs, "db"))
		closeDB(t, db)
	})
}

func readAll(t testing.TB, fs vfs.FS, path string) string {
	t.Helper()
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(f); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
