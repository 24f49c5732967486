package lookup

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// openL6 opens a database on fs with c's options, changed by edit if not nil,
// and writes keys 0 to n-1 of plainKeys, values "v<i>", all compacted into
// L6.
func openL6(t testing.TB, c config, fs vfs.FS, n int, edit func(*pebble.Options)) *pebble.DB {
	t.Helper()
	o := c.options(fs)
	if edit != nil {
		edit(o)
	}
	db, err := pebble.Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	// Two flushes of interleaved keys: overlapping L0 tables, which the
	// compaction rewrites into L6 with L6's filter (a lone table would move
	// down with the filter it was written with).
	for half := range 2 {
		b := db.NewBatch()
		for i := half; i < n; i += 2 {
			if err := b.Set(plainKeys{}.key(i), fmt.Appendf(nil, "v%d", i), nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Compact(t.Context(), []byte("a"), []byte("z"), false); err != nil {
		t.Fatal(err)
	}
	m := db.Metrics()
	for l := range 6 {
		if m.Levels[l].TablesCount != 0 {
			t.Fatalf("L%d holds %d tables, want every key in L6", l, m.Levels[l].TablesCount)
		}
	}
	return db
}

func closeDB(t testing.TB, db *pebble.DB) {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// filterProbes returns how many table filters the database's reads have
// asked so far.
func filterProbes(db *pebble.DB) int64 {
	f := db.Metrics().Filter
	return f.Hits + f.Misses
}

// TestReadsL6Filters: with every key in L6, an absent Get asks no filter,
// and Get and Has here ask the L6 filter once per absent key, which rules
// out nearly all of them; without an L6 filter they ask none either.
func TestReadsL6Filters(t *testing.T) {
	t.Parallel()
	n, absent := 2000, pebbletest.Scale(300, 1000, 1000)
	for _, l6 := range []bool{true, false} {
		db := openL6(t, config{keys: plainKeys{}, l6: l6}, vfs.NewMem(), n, nil)
		ask := func(name string, lookup func(k []byte) error) int64 {
			before := db.Metrics().Filter
			for i := range absent {
				// Within the table's bounds: a key outside them asks no filter.
				if err := lookup(fmt.Appendf(plainKeys{}.key(i), "x")); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			after := db.Metrics().Filter
			hits, probes := after.Hits-before.Hits, after.Hits+after.Misses-before.Hits-before.Misses
			t.Logf("L6 filter %v, %s: %d absent keys, %d filter probes, %d ruled out", l6, name, absent, probes, hits)
			if l6 && probes > 0 && hits < probes*95/100 {
				t.Errorf("%s: the L6 filter ruled out %d of %d absent keys", name, hits, probes)
			}
			return probes
		}
		notFound := func(_ []byte, _ any, err error) error {
			if err != pebble.ErrNotFound {
				return fmt.Errorf("err %v, want pebble.ErrNotFound", err)
			}
			return nil
		}
		get := ask("db.Get", func(k []byte) error { v, c, err := db.Get(k); return notFound(v, c, err) })
		lget := ask("Get", func(k []byte) error { v, c, err := Get(db, k); return notFound(v, c, err) })
		has := ask("Has", func(k []byte) error {
			if found, err := Has(db, k); err != nil || found {
				return fmt.Errorf("Has = %v, %v", found, err)
			}
			return nil
		})
		if get != 0 {
			t.Errorf("db.Get asked %d filters, want none (Pebble reads no L6 filter for Get)", get)
		}
		if want := int64(absent); l6 && (lget != want || has != want) {
			t.Errorf("Get asked %d filters, Has %d, want %d", lget, has, want)
		}
		if !l6 && (lget != 0 || has != 0) {
			t.Errorf("without an L6 filter: Get asked %d filters, Has %d, want none", lget, has)
		}
		closeDB(t, db)
	}
}

// TestNilKey: a nil key is the empty key, absent or present, for Get and Has
// as for db.Get, in a memtable and in L6. Pebble v2.1.7 writes the empty key
// only to row-oriented tables (its columnar writer panics on it), so the
// database has the oldest format. (CockroachDB's keys are never empty:
// TestMatchesGet asks it absent there.)
func TestNilKey(t *testing.T) {
	t.Parallel()
	for _, c := range configs[:2] {
		t.Run(c.name, func(t *testing.T) {
			db := openL6(t, c, vfs.NewMem(), 10, func(o *pebble.Options) {
				o.FormatMajorVersion = pebble.FormatMinSupported
			})
			defer closeDB(t, db)
			f, a := Filtered{Comparer: c.keys.comparer()}, &Adaptive{Comparer: c.keys.comparer()}
			for _, step := range []string{"absent", "memtable", "L6"} {
				switch step {
				case "memtable":
					if err := db.Set(nil, []byte("empty"), nil); err != nil {
						t.Fatal(err)
					}
					if err := db.Set([]byte("j"), []byte("j"), nil); err != nil {
						t.Fatal(err)
					}
				case "L6":
					if err := db.Compact(t.Context(), []byte{}, []byte("z"), false); err != nil {
						t.Fatal(err)
					}
					if m := db.Metrics(); m.Levels[0].TablesCount != 0 {
						t.Fatalf("L0 holds %d tables after the compaction", m.Levels[0].TablesCount)
					}
				}
				for _, k := range [][]byte{nil, {}} {
					want, closer, wantErr := db.Get(k)
					if wantErr == nil {
						want = append([]byte(nil), want...)
						_ = closer.Close()
					}
					for _, g := range []getter{{"Filtered", f.Get, f.Has}, {"Adaptive", a.Get, a.Has}} {
						v, closer, err := g.get(db, k)
						if err != wantErr || string(v) != string(want) {
							t.Errorf("%s: %s.Get(%#v) = %q, %v; db.Get: %q, %v", step, g.name, k, v, err, want, wantErr)
						}
						if err == nil {
							_ = closer.Close()
						}
						if found, err := g.has(db, k); err != nil || found != (wantErr == nil) {
							t.Errorf("%s: %s.Has(%#v) = %v, %v", step, g.name, k, found, err)
						}
					}
				}
			}
		})
	}
}

// TestUnindexedBatch: a batch that is not indexed cannot be read; every
// lookup answers pebble.ErrNotIndexed, as its Get does.
func TestUnindexedBatch(t *testing.T) {
	t.Parallel()
	db := openL6(t, configs[0], vfs.NewMem(), 10, nil)
	defer closeDB(t, db)
	b := db.NewBatch()
	defer b.Close()
	if _, _, err := b.Get([]byte("k")); err != pebble.ErrNotIndexed {
		t.Fatalf("batch.Get: %v, want pebble.ErrNotIndexed", err)
	}
	a := &Adaptive{}
	for _, g := range []getter{{"lookup", Get, Has}, {"Adaptive", a.Get, a.Has}} {
		if _, _, err := g.get(b, []byte("k")); err != pebble.ErrNotIndexed {
			t.Errorf("%s.Get: %v, want pebble.ErrNotIndexed", g.name, err)
		}
		if _, err := g.has(b, []byte("k")); err != pebble.ErrNotIndexed {
			t.Errorf("%s.Has: %v, want pebble.ErrNotIndexed", g.name, err)
		}
	}
}

// TestValueValidUntilClose: a value stays as read until its closer is
// closed, across writes, flushes and compactions that rewrite its table.
func TestValueValidUntilClose(t *testing.T) {
	t.Parallel()
	const n = 200
	db := openL6(t, configs[0], vfs.NewMem(), n, nil)
	defer closeDB(t, db)
	type held struct {
		v, want []byte
		closer  interface{ Close() error }
	}
	var all []held
	for i := 0; i < n; i += 7 {
		v, closer, err := Get(db, plainKeys{}.key(i))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, held{v, append([]byte(nil), v...), closer})
	}
	for i := range n {
		if err := db.Set(plainKeys{}.key(i), []byte(strings.Repeat("x", 8)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(t.Context(), []byte("a"), []byte("z"), false); err != nil {
		t.Fatal(err)
	}
	for _, h := range all {
		if string(h.v) != string(h.want) {
			t.Errorf("value changed before Close: %q, was %q", h.v, h.want)
		}
		if err := h.closer.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCloserOutlivesDB: a closer left open holds the database's state, and
// the database's Close panics (the trap the package doc names).
func TestCloserOutlivesDB(t *testing.T) {
	t.Parallel()
	db := openL6(t, configs[0], vfs.NewMem(), 10, nil)
	if _, _, err := Get(db, plainKeys{}.key(3)); err != nil { // closer never closed
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("db.Close() with a closer open did not panic")
		}
	}()
	_ = db.Close()
}

// countingBlobFS counts the reads of blob files (separated values).
type countingBlobFS struct {
	vfs.FS
	reads atomic.Int64
}

func (fs *countingBlobFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.Open(name, opts...)
	if err != nil || !strings.HasSuffix(name, ".blob") {
		return f, err
	}
	return &countingFile{File: f, n: &fs.reads}, nil
}

type countingFile struct {
	vfs.File
	n *atomic.Int64
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	f.n.Add(1)
	return f.File.ReadAt(p, off)
}

// TestHasReadsNoValue: with values separated into blob files and no room in
// the block cache, Has reads no blob file where Get reads one per key.
func TestHasReadsNoValue(t *testing.T) {
	t.Parallel()
	const n = 100
	fs := &countingBlobFS{FS: vfs.NewMem()}
	cache := pebble.NewCache(1)
	defer cache.Unref()
	db := openL6(t, configs[0], fs, 0, func(o *pebble.Options) {
		o.Cache = cache
		o.Experimental.ValueSeparationPolicy = func() pebble.ValueSeparationPolicy {
			return pebble.ValueSeparationPolicy{Enabled: true, MinimumSize: 64, MaxBlobReferenceDepth: 10}
		}
	})
	defer closeDB(t, db)
	for i := range n {
		if err := db.Set(plainKeys{}.key(i), []byte(strings.Repeat("v", 1024)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	count := func(name string, lookup func(k []byte) error) int64 {
		before := fs.reads.Load()
		for i := range n {
			if err := lookup(plainKeys{}.key(i)); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		return fs.reads.Load() - before
	}
	present := func(found bool, err error) error {
		if err != nil || !found {
			return fmt.Errorf("Has = %v, %v", found, err)
		}
		return nil
	}
	get := count("Get", func(k []byte) error {
		v, closer, err := Get(db, k)
		if err != nil || len(v) != 1024 {
			return errors.Join(err, fmt.Errorf("value of %d bytes", len(v)))
		}
		return closer.Close()
	})
	has := count("Has", func(k []byte) error { return present(Has(db, k)) })
	t.Logf("blob file reads for %d present keys: Get %d, Has %d", n, get, has)
	if get < n || has != 0 {
		t.Errorf("blob file reads: Get %d (want >= %d), Has %d (want 0)", get, n, has)
	}
}

// TestAllocs: Get (value read, closer closed) and Has allocate nothing once
// Pebble's pools are warm, for present and absent keys.
func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	db := openL6(t, configs[0], vfs.NewMem(), 1000, nil)
	defer closeDB(t, db)
	for _, k := range [][]byte{plainKeys{}.key(5), []byte("k000005x")} {
		get := testing.AllocsPerRun(1000, func() {
			if _, closer, err := Get(db, k); err == nil {
				_ = closer.Close()
			}
		})
		has := testing.AllocsPerRun(1000, func() { _, _ = Has(db, k) })
		if get != 0 || has != 0 {
			t.Errorf("%q: Get allocates %v times, Has %v; want 0", k, get, has)
		}
	}
}
