package sstableintegration

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/sstable_integration/pebbletest"
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

// The random workload's key spaces: "k" keys take every kind of write, "s"
// keys alternate between one Set and one SingleDelete.
const workloadKeys, workloadSingles = 3000, 500

// workload draws the random operations of TestDBWorkload and keeps the
// oracle of what they leave.
type workload struct {
	rng       *rand.Rand
	want      oracle
	singleSet map[int]bool // "s" keys currently set once
}

// write applies round r's 300 random operations to w: sets, deletes,
// merges, range deletions and single deletes.
func (wl *workload) write(t *testing.T, w pebble.Writer, r int) {
	t.Helper()
	const nk, ns = workloadKeys, workloadSingles
	rng, want, singleSet := wl.rng, wl.want, wl.singleSet
	for op := 0; op < 300; op++ {
		i := rng.IntN(nk)
		k := key("k", i)
		v := fmt.Sprintf("r%d.%d", r, op)
		var err error
		switch x := rng.IntN(100); {
		case x < 45:
			err = w.Set(k, []byte(v), nil)
			want[string(k)] = v
		case x < 60:
			err = w.Delete(k, nil)
			delete(want, string(k))
		case x < 75:
			err = w.Merge(k, []byte(v), nil)
			want[string(k)] += v
		case x < 78:
			j := min(nk, i+1+rng.IntN(40))
			err = w.DeleteRange(k, key("k", j), nil)
			for d := i; d < j; d++ {
				delete(want, string(key("k", d)))
			}
		default:
			// Single deletes only ever meet one Set.
			s := rng.IntN(ns)
			sk := key("s", s)
			if singleSet[s] {
				err = w.SingleDelete(sk, nil)
				delete(want, string(sk))
			} else {
				err = w.Set(sk, []byte(v), nil)
				want[string(sk)] = v
			}
			singleSet[s] = !singleSet[s]
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// snapshotCheck is a snapshot with the oracle as of its creation.
type snapshotCheck struct {
	snap *pebble.Snapshot
	want oracle
}

// TestDBWorkload runs a random workload of sets, deletes, single deletes,
// merges, range deletions, batches, snapshots, flushes, compactions and
// reopens (with a different budget or configuration of the policy each time,
// since any instance reads any block) against a map oracle, and checks the
// database and every open snapshot against it at every checkpoint.
func TestDBWorkload(t *testing.T) {
	t.Parallel()
	seed := pebbletest.Seed(t)
	rounds := pebbletest.Scale(12, 30, 150)
	for _, f := range dbFormats {
		t.Run(f.name, func(t *testing.T) {
			rng := pebbletest.Rand(seed)
			wl := &workload{rng: rng, want: oracle{}, singleSet: map[int]bool{}}
			wd := newWorkloadDB(t, f, wl)
			for r := 0; r < rounds; r++ {
				b := wd.db.NewBatch()
				w := pebble.Writer(wd.db)
				if rng.IntN(2) == 0 {
					w = b
				}
				wl.write(t, w, r)
				if w == b {
					if err := b.Commit(pebble.NoSync); err != nil {
						t.Fatal(err)
					}
				} else {
					_ = b.Close()
				}
				wd.maintain(r)
				if r%5 == 4 {
					wd.check(fmt.Sprintf("round %d", r))
				}
			}
			if err := wd.db.Flush(); err != nil {
				t.Fatal(err)
			}
			wd.check("end")
			wd.closeSnaps()
			if err := wd.db.Compact(context.Background(), []byte("a"), []byte("z"), true); err != nil {
				t.Fatal(err)
			}
			wd.check("after a full compaction")
			requireAllCuckoo(t, wd.db, wd.fs, "db")
			wd.hits += filterMetrics(wd.db).Hits
			closeDB(t, wd.db)
			t.Logf("%d rounds, %d reopens, %d keys live, filters skipped %d tables", rounds, wd.reopens, len(wl.want), wd.hits)
			if wd.hits == 0 {
				t.Fatalf("the filters never skipped a table")
			}
		})
	}
}

// workloadDB is TestDBWorkload's database: reopened with the next policy
// of the list each time, with up to three open snapshots and the filter
// hits of the databases closed so far.
type workloadDB struct {
	t        *testing.T
	f        dbFormat
	fs       vfs.FS
	wl       *workload
	db       *pebble.DB
	reopens  int
	snaps    []snapshotCheck
	hits     int64
	universe [][]byte // every key the workload may write
}

// workloadPolicies are the policies the database is reopened with in turn:
// any instance of the family reads any block.
var workloadPolicies = []pebble.FilterPolicy{
	cuckoopolicy.FilterPolicy(10),
	cuckoopolicy.FilterPolicy(16),
	cuckoopolicy.Policy{FingerprintBits: 9, SemiSort: false},
	cuckoopolicy.FilterPolicy(7),
	cuckoopolicy.Policy{FingerprintBits: 24, SemiSort: true},
}

func newWorkloadDB(t *testing.T, f dbFormat, wl *workload) *workloadDB {
	wd := &workloadDB{t: t, f: f, fs: vfs.NewMem(), wl: wl}
	for i := 0; i < workloadKeys; i++ {
		wd.universe = append(wd.universe, key("k", i))
	}
	for i := 0; i < workloadSingles; i++ {
		wd.universe = append(wd.universe, key("s", i))
	}
	wd.open()
	return wd
}

func (wd *workloadDB) open() {
	o := dbOptions(wd.fs, wd.f, workloadPolicies[wd.reopens%len(workloadPolicies)])
	o.MemTableSize = 256 << 10
	o.TargetFileSizes[0] = 64 << 10
	wd.db = openDB(wd.t, "db", o)
}

// check checks the database and every open snapshot against their oracles.
func (wd *workloadDB) check(when string) {
	checkReader(wd.t, when, wd.db, bytes.Compare, wd.wl.want, wd.universe)
	for i, s := range wd.snaps {
		checkReader(wd.t, fmt.Sprintf("%s, snapshot %d", when, i), s.snap, bytes.Compare, s.want, wd.universe)
	}
}

func (wd *workloadDB) closeSnaps() {
	for _, s := range wd.snaps {
		if err := s.snap.Close(); err != nil {
			wd.t.Fatal(err)
		}
	}
	wd.snaps = nil
}

// maintain ends round r with, at random, a flush, a compaction of a random
// range, a snapshot, a check and a reopen, or nothing.
func (wd *workloadDB) maintain(r int) {
	t, rng := wd.t, wd.wl.rng
	switch x := rng.IntN(10); {
	case x < 3:
		if err := wd.db.Flush(); err != nil {
			t.Fatal(err)
		}
	case x < 5:
		lo := rng.IntN(workloadKeys)
		if err := wd.db.Compact(context.Background(), key("k", lo), key("k", lo+1+rng.IntN(workloadKeys)), rng.IntN(2) == 0); err != nil {
			t.Fatal(err)
		}
	case x < 7:
		if len(wd.snaps) < 3 {
			wd.snaps = append(wd.snaps, snapshotCheck{wd.db.NewSnapshot(), wd.wl.want.clone()})
		}
	case x < 8:
		wd.check(fmt.Sprintf("round %d before reopen", r))
		wd.closeSnaps()
		wd.hits += filterMetrics(wd.db).Hits
		closeDB(t, wd.db)
		wd.reopens++
		wd.open()
	}
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

// TestOptionsRoundTrip writes the policy into an OPTIONS file and reads it
// back with ParseFilterPolicy as ParseHooks.NewFilterPolicy: the file names
// the policy on every level, Options.Parse rebuilds it, and a database opened
// with the parsed options uses the filters and finds every key.
func TestOptionsRoundTrip(t *testing.T) {
	t.Parallel()
	seed := pebbletest.Seed(t)
	hooks := &pebble.ParseHooks{NewFilterPolicy: cuckoopolicy.ParseFilterPolicy}

	// A mix of policies survives Options.String and Options.Parse per level.
	mixed := &pebble.Options{}
	for i, p := range []pebble.FilterPolicy{
		pebble.NoFilterPolicy, bloom.FilterPolicy(10), cuckoopolicy.FilterPolicy(10),
		cuckoopolicy.Policy{FingerprintBits: 13}, bloom.FilterPolicy(10), cuckoopolicy.FilterPolicy(16),
		cuckoopolicy.FilterPolicy(12),
	} {
		mixed.Levels[i].FilterPolicy = p
	}
	mixed.EnsureDefaults()
	s := mixed.String()
	var parsed pebble.Options
	if err := parsed.Parse(s, hooks); err != nil {
		t.Fatalf("Parse: %v\n%s", err, s)
	}
	for i := range mixed.Levels {
		if got, want := parsed.Levels[i].FilterPolicy.Name(), mixed.Levels[i].FilterPolicy.Name(); got != want {
			t.Fatalf("L%d: parsed filter policy %q, want %q", i, got, want)
		}
	}
	parsed.EnsureDefaults()
	if got := filterPolicyLines(parsed.String()); !slices.Equal(got, filterPolicyLines(s)) {
		t.Fatalf("filter_policy lines after a round trip: %q, want %q", got, filterPolicyLines(s))
	}

	// A database's own OPTIONS file.
	eachFormat(t, seed, func(t *testing.T, f dbFormat, rng *rand.Rand, fs *vfs.MemFS) {
		n := pebbletest.Scale(2000, 4000, 20000)
		want := writeDB(t, fs, f, cuckoopolicy.FilterPolicy(12), n, 3)

		names, err := fs.List("db")
		if err != nil {
			t.Fatal(err)
		}
		var optionsFile string
		for _, name := range names {
			if strings.HasPrefix(name, "OPTIONS-") && name > optionsFile {
				optionsFile = name
			}
		}
		if optionsFile == "" {
			t.Fatalf("no OPTIONS file in %v", names)
		}
		data := readAll(t, fs, fs.PathJoin("db", optionsFile))
		lines := filterPolicyLines(data)
		if len(lines) != 7 || slices.ContainsFunc(lines, func(l string) bool { return l != "filter_policy="+cuckooName }) {
			t.Fatalf("%s: filter_policy lines %q, want %d times filter_policy=%s", optionsFile, lines, 7, cuckooName)
		}
		var o pebble.Options
		if err := o.Parse(data, hooks); err != nil {
			t.Fatalf("Parse(%s): %v", optionsFile, err)
		}
		for i := range o.Levels {
			if o.Levels[i].FilterPolicy == nil || o.Levels[i].FilterPolicy.Name() != cuckooName {
				t.Fatalf("L%d: parsed filter policy %#v, want the cuckoo policy", i, o.Levels[i].FilterPolicy)
			}
		}
		o.FS = fs
		o.Logger = pebbletest.QuietLogger{}
		db := openDB(t, "db", &o)
		absent := absentOdd(rng, "k", n, n/2)
		checkFiltered(t, "reopened with parsed options", db, want, absent)
		closeDB(t, db)
	})
}

func filterPolicyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "filter_policy=") {
			out = append(out, l)
		}
	}
	return out
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

// TestDBSwitchPolicies opens one database in turn with bloom, cuckoo, no
// filter and other cuckoo configurations. Each phase writes a table of its
// own keys (left alone afterwards, so tables of every policy coexist), then
// sets, overwrites and deletes keys of a shared range over a few flushes and
// compacts that range (rewriting those tables with the phase's policy). Every
// key written so far stays readable, with the level policy's Filters only and
// with both families registered; a final full compaction leaves only the last
// policy's tables.
func TestDBSwitchPolicies(t *testing.T) {
	t.Parallel()
	seed := pebbletest.Seed(t)
	for _, f := range dbFormats {
		t.Run(f.name, func(t *testing.T) {
			phases := []pebble.FilterPolicy{
				bloom.FilterPolicy(10),
				cuckoopolicy.FilterPolicy(10),
				pebble.NoFilterPolicy,
				cuckoopolicy.FilterPolicy(16),
				bloom.FilterPolicy(12),
				cuckoopolicy.Policy{FingerprintBits: 14},
			}
			if pebbletest.Long() {
				phases = append(phases, phases...)
			}
			sw := &switchRun{t: t, f: f, fs: vfs.NewMem(), rng: pebbletest.Rand(seed), want: oracle{}, used: map[string]bool{}}
			for i := 0; i < switchKeys; i++ {
				sw.universe = append(sw.universe, key("k", i))
			}
			for p, policy := range phases {
				sw.phase(p, policy)
			}
			// Automatic compactions and a last full compaction leave only
			// the last phase's policy.
			last := phases[len(phases)-1]
			db := openDB(t, "db", dbOptions(sw.fs, f, last))
			checkReader(t, "with automatic compactions", db, bytes.Compare, sw.want, sw.universe)
			if err := db.Compact(context.Background(), []byte("a"), []byte("z"), false); err != nil {
				t.Fatal(err)
			}
			checkReader(t, "after the final compaction", db, bytes.Compare, sw.want, sw.universe)
			if counts := policyCounts(t, db, sw.fs, "db"); len(counts) != 1 || counts[last.Name()] == 0 {
				t.Fatalf("after a full compaction, tables by filter policy %v; want all %q", counts, last.Name())
			}
			closeDB(t, db)
		})
	}
}

// switchKeys are the "k" keys every phase of TestDBSwitchPolicies
// overwrites and deletes; switchPhaseKeys those each phase writes once.
const switchKeys, switchPhaseKeys = 4000, 500

// switchRun is one database of TestDBSwitchPolicies across its phases.
type switchRun struct {
	t        *testing.T
	f        dbFormat
	fs       vfs.FS
	rng      *rand.Rand
	want     oracle
	universe [][]byte        // every key written, and absent ones beside them
	used     map[string]bool // policy names of the phases so far
}

// phase opens the database with policy, writes and compacts, and checks
// that every table of every phase so far is read, through the filter of
// its own policy when Filters holds both families.
func (sw *switchRun) phase(p int, policy pebble.FilterPolicy) {
	t := sw.t
	sw.used[policy.Name()] = true
	o := dbOptions(sw.fs, sw.f, policy)
	o.DisableAutomaticCompactions = true
	db := openDB(t, "db", o)
	sw.write(db, p)
	if err := db.Compact(context.Background(), key("k", 0), key("k", switchKeys), false); err != nil {
		t.Fatal(err)
	}
	what := fmt.Sprintf("phase %d (%s)", p, policyString(policy))
	checkReader(t, what, db, bytes.Compare, sw.want, sw.universe)
	counts := policyCounts(t, db, sw.fs, "db")
	t.Logf("%s: tables by filter policy %v", what, counts)
	for name := range sw.used {
		if name == pebble.NoFilterPolicy.Name() {
			name = ""
		}
		if counts[name] == 0 {
			t.Fatalf("%s: no table left with policy %q: %v", what, name, counts)
		}
	}
	closeDB(t, db)

	// Again with both families registered in Filters, so that every table
	// is read through its own filter.
	o = dbOptions(sw.fs, sw.f, policy)
	o.DisableAutomaticCompactions = true
	if o.Filters == nil {
		o.Filters = map[string]pebble.FilterPolicy{}
	}
	o.Filters[cuckooName] = cuckoopolicy.FilterPolicy(10)
	o.Filters[bloomName] = bloom.FilterPolicy(10)
	db = openDB(t, "db", o)
	checkReader(t, what+" with both families in Filters", db, bytes.Compare, sw.want, sw.universe)
	closeDB(t, db)
}

// write writes phase p's own keys into a table nothing compacts later,
// then three flushed rounds of sets and deletes of "k" keys.
func (sw *switchRun) write(db *pebble.DB, p int) {
	t, rng := sw.t, sw.rng
	flush := func() {
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	space := fmt.Sprintf("p%02d", p)
	for i := 0; i < switchPhaseKeys; i++ {
		k := key(space, i)
		if err := db.Set(k, k, nil); err != nil {
			t.Fatal(err)
		}
		sw.want[string(k)] = string(k)
		sw.universe = append(sw.universe, k, key(space, switchPhaseKeys+i))
	}
	flush()
	for round := 0; round < 3; round++ {
		for op := 0; op < 600; op++ {
			k := key("k", rng.IntN(switchKeys))
			if rng.IntN(5) == 0 {
				if err := db.Delete(k, nil); err != nil {
					t.Fatal(err)
				}
				delete(sw.want, string(k))
				continue
			}
			v := fmt.Sprintf("p%d.%d.%d", p, round, op)
			if err := db.Set(k, []byte(v), nil); err != nil {
				t.Fatal(err)
			}
			sw.want[string(k)] = v
		}
		flush()
	}
}
