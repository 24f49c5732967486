package sstableintegration

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

var flagUpdateGoldenDB = flag.Bool("update-golden-db", false,
	"rewrite testdata/golden-db/"+currentGoldenDB+" with today's code (the older databases are generate.sh's)")

// goldenDBDir holds the golden databases, one directory each: db/ (Pebble's
// files) and tables.txt (the tables as their writer listed them). Its
// README.md says which code wrote each and the commands that rebuild them.
const goldenDBDir = "testdata/golden-db"

// currentGoldenDB is the database today's writer writes, every kind of
// block in it; -update-golden-db rewrites it. When the block format gets a
// new version, keep it as it is (README.md says how to rebuild it from its
// commit) and give the flag a new directory.
const currentGoldenDB = "v3-all-kinds"

// goldenBatch is n keys, goldenKey(first), goldenKey(first+2), ..., each
// with goldenValue of its number, flushed to a table of their own.
type goldenBatch struct{ first, n int }

func goldenKey(i int) []byte   { return fmt.Appendf(nil, "key%06d", i) }
func goldenValue(i int) []byte { return fmt.Appendf(nil, "value%06d", i) }

// baseBatches is the layout of every golden database, as gen/main.go's
// writeBase writes it (keep the two alike): 2000 keys compacted to L6,
// then in L0 tables of 500 keys, 40 keys (where FilterPolicy(10) has
// written a raw bloom block since e1b7846), 1 key, and a range deletion
// alone over [key900000, key900001) (a table whose filter block Pebble
// writes with zero bytes).
var baseBatches = []goldenBatch{{0, 2000}, {1, 500}, {1001, 40}, {1081, 1}}

// currentBatches adds what the current database's live plans write to L0:
// 300 keys in a bloom block, 200 in an unfiltered block.
var currentBatches = append(slices.Clip(baseBatches), goldenBatch{1083, 300}, goldenBatch{1683, 200})

// goldenDBs are the golden databases: one for each block format version
// this project has shipped, written by the code of its commit, and today's.
// kinds counts their tables by level and filter block (goldenKind).
var goldenDBs = []struct {
	dir     string
	batches []goldenBatch
	kinds   map[string]int
}{
	{"v1", baseBatches, map[string]int{"L0 cuckoo v1": 3, "L0 zero-length": 1, "L6 cuckoo v1": 1}},
	{"v2", baseBatches, map[string]int{"L0 cuckoo v2": 3, "L0 zero-length": 1, "L6 cuckoo v2": 1}},
	{"v3", baseBatches, map[string]int{"L0 cuckoo v3": 3, "L0 zero-length": 1, "L6 cuckoo v3": 1}},
	{currentGoldenDB, currentBatches, map[string]int{
		"L0 cuckoo v3": 2, "L0 raw bloom": 1, "L0 zero-length": 1, "L0 bloom block v2": 1, "L0 unfiltered v2": 1,
		"L6 cuckoo v3": 1,
	}},
}

// TestGoldenDB opens a copy of each golden database with today's code
// (cuckoopolicy.Apply with FilterPolicy(10), automatic compactions off):
// the format major version and every table are as their writer listed
// them; the OPTIONS file names this package's policy on every level; each
// table names it in its properties and its metaindex and holds the kind of
// block expected; FilterUsage's rows are the listing's, summed; every key
// is read back through Get and SeekPrefixGE with UseL6Filters, absent keys
// are absent, and the old filters rule some out. Then a compaction rewrites
// every table with today's writer and every key is read back again.
//
// With -update-golden-db it first rewrites the current database.
func TestGoldenDB(t *testing.T) {
	if *flagUpdateGoldenDB {
		writeCurrentGoldenDB(t, filepath.Join(goldenDBDir, currentGoldenDB))
	} else {
		t.Parallel()
	}
	for _, g := range goldenDBs {
		t.Run(g.dir, func(t *testing.T) {
			src := filepath.Join(goldenDBDir, g.dir)
			fmv, listing := readGoldenListing(t, filepath.Join(src, "tables.txt"))
			checkGoldenOptions(t, filepath.Join(src, "db"))

			dir := filepath.Join(t.TempDir(), "db")
			if err := os.CopyFS(dir, os.DirFS(filepath.Join(src, "db"))); err != nil {
				t.Fatal(err)
			}
			opts := &pebble.Options{DisableAutomaticCompactions: true, Logger: pebbletest.QuietLogger{}}
			cuckoopolicy.Apply(opts, cuckoopolicy.FilterPolicy(10))
			db := openDB(t, dir, opts)
			defer func() { closeDB(t, db) }()
			if got := db.FormatMajorVersion(); got != fmv {
				t.Errorf("format major version %d, written at %d", got, fmv)
			}

			kinds := checkGoldenTables(t, db, dir, listing)
			byLevel := map[string]int{}
			for i, k := range kinds {
				byLevel[fmt.Sprintf("L%d %s", listing[i].level, k)]++
			}
			if !maps.Equal(byLevel, g.kinds) {
				t.Errorf("tables by level and block kind: %v, want %v", byLevel, g.kinds)
			}
			checkGoldenUsage(t, db, listing, kinds)

			o := oracle{}
			for _, b := range g.batches {
				for i := b.first; i < b.first+2*b.n; i += 2 {
					o[string(goldenKey(i))] = string(goldenValue(i))
				}
			}
			var absent [][]byte
			for i := 2083; i < 4000; i += 4 { // odd keys no batch writes
				absent = append(absent, goldenKey(i))
			}
			absent = append(absent, goldenKey(900000), goldenKey(-1), []byte("key"), []byte("zzz"))
			before := filterMetrics(db)
			checkReader(t, g.dir+" as written", db, bytes.Compare, o, absent)
			if m := filterMetrics(db); m.Hits == before.Hits {
				t.Errorf("the golden tables' filters ruled out no absent key (filter metrics %+v)", m)
			}

			// The way forward: today's writer rewrites every table.
			if err := db.Compact(context.Background(), []byte("key"), []byte("key~"), false); err != nil {
				t.Fatal(err)
			}
			checkReader(t, g.dir+" compacted", db, bytes.Compare, o, absent)
			rows, err := cuckoopolicy.FilterUsage(db)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 || rows[0].Level != 6 || rows[0].Policy != cuckooName || rows[0].Unfiltered ||
				rows[0].Entries != uint64(len(o)) {
				t.Errorf("after the compaction FilterUsage is %+v; want one L6 row of %s, %d entries", rows, cuckooName, len(o))
			}
			for _, tf := range liveTables(t, db, vfs.Default, dir) {
				if _, block := goldenFilterBlock(t, tf.path); goldenKind(block) != "cuckoo v3" {
					t.Errorf("compacted table %s: filter block %s, want cuckoo v3", tf.path, goldenKind(block))
				}
			}
		})
	}
}

// goldenTable is one line of tables.txt: a table as Pebble's properties
// gave it when it was written.
type goldenTable struct {
	level              int
	file               string
	size               uint64
	policy             string
	filterBytes, count uint64 // filter block bytes; entries
}

// readGoldenListing reads a tables.txt: the format major version and the
// tables, in the order of FilterUsage's levels.
func readGoldenListing(t *testing.T, path string) (pebble.FormatMajorVersion, []goldenTable) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fmv pebble.FormatMajorVersion
	var tables []goldenTable
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		var g goldenTable
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "format-major-version "):
			if _, err := fmt.Sscanf(line, "format-major-version %d", &fmv); err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
		default:
			if _, err := fmt.Sscanf(line, "L%d %s %d %q %d %d", &g.level, &g.file, &g.size, &g.policy, &g.filterBytes, &g.count); err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
			tables = append(tables, g)
		}
	}
	if fmv == 0 || len(tables) == 0 {
		t.Fatalf("%s: no format major version or no tables", path)
	}
	return fmv, tables
}

// checkGoldenOptions checks that the golden database's OPTIONS file, parsed
// with this package's hooks, names this package's policy on every level.
func checkGoldenOptions(t *testing.T, dir string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "OPTIONS-*"))
	if err != nil || len(paths) != 1 {
		t.Fatalf("OPTIONS files %v (%v), want one", paths, err)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var o pebble.Options
	if err := o.Parse(string(data), cuckoopolicy.ParseHooks()); err != nil {
		t.Fatalf("parse %s: %v", paths[0], err)
	}
	for l, lo := range o.Levels {
		if lo.FilterPolicy == nil || lo.FilterPolicy.Name() != cuckooName || lo.FilterType != pebble.TableFilter {
			t.Errorf("%s: L%d filter %v (type %v), want %s", paths[0], l, lo.FilterPolicy, lo.FilterType, cuckooName)
		}
	}
}

// checkGoldenTables checks the database's tables, as today's code reads
// their properties, against the listing, and the filter block each holds
// against its properties; it returns the kind of each table's block
// (goldenKind), in the listing's order.
func checkGoldenTables(t *testing.T, db *pebble.DB, dir string, listing []goldenTable) []string {
	t.Helper()
	tables := liveTables(t, db, vfs.Default, dir)
	if len(tables) != len(listing) {
		t.Fatalf("%d tables, listed %d", len(tables), len(listing))
	}
	kinds := make([]string, len(tables))
	for i, tf := range tables {
		p := tf.props
		got := goldenTable{tf.level, filepath.Base(tf.path), goldenFileSize(t, tf.path), p.FilterPolicyName, p.FilterSize, p.NumEntries}
		if got != listing[i] {
			t.Errorf("table %d: %+v, listed %+v", i, got, listing[i])
		}
		name, block := goldenFilterBlock(t, tf.path)
		kinds[i] = goldenKind(block)
		if p.FilterPolicyName != cuckooName || uint64(len(block)) != p.FilterSize ||
			(block != nil) != (name == "fullfilter."+cuckooName) {
			t.Errorf("%s: properties name filter %q of %d bytes; the metaindex has %q, %d bytes",
				tf.path, p.FilterPolicyName, p.FilterSize, name, len(block))
		}
	}
	return kinds
}

// checkGoldenUsage checks FilterUsage's rows against the listing's tables
// summed by level, policy and whether their block (of the kind kinds
// gives, in the listing's order) is an unfiltered block.
func checkGoldenUsage(t *testing.T, db *pebble.DB, listing []goldenTable, kinds []string) {
	t.Helper()
	var want []cuckoopolicy.Usage
	for i, g := range listing {
		unfiltered := strings.HasPrefix(kinds[i], "unfiltered")
		i := slices.IndexFunc(want, func(u cuckoopolicy.Usage) bool {
			return u.Level == g.level && u.Policy == g.policy && u.Unfiltered == unfiltered
		})
		if i < 0 {
			want = append(want, cuckoopolicy.Usage{Level: g.level, Policy: g.policy, Unfiltered: unfiltered})
			i = len(want) - 1
		}
		want[i].Tables++
		want[i].Bytes += g.size
		want[i].FilterBytes += g.filterBytes
		want[i].Entries += g.count
	}
	rows, err := cuckoopolicy.FilterUsage(db)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows, want) {
		t.Errorf("FilterUsage:\n  %+v\nwant, from tables.txt:\n  %+v", rows, want)
	}
}

// goldenFilterBlock returns the metaindex name and the bytes of the filter block
// of the table at path, or "" and nil for a table without one.
func goldenFilterBlock(t *testing.T, path string) (string, []byte) {
	t.Helper()
	r, err := openTable(vfs.Default, path, sstable.ReaderOptions{})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer r.Close()
	layout, err := r.Layout()
	if err != nil {
		t.Fatalf("layout of %s: %v", path, err)
	}
	switch len(layout.Filter) {
	case 0:
		return "", nil
	case 1:
	default:
		t.Fatalf("%s: %d filter blocks (%v), want at most one", path, len(layout.Filter), layout.Filter)
	}
	h := layout.Filter[0]
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.Offset+h.Length > uint64(len(data)) {
		t.Fatalf("%s: filter block [%d, +%d) past the file's %d bytes", path, h.Offset, h.Length, len(data))
	}
	return h.Name, data[h.Offset : h.Offset+h.Length]
}

// goldenKind names a filter block by its bytes (FORMAT.md): "cuckoo v3" for
// buckets and the short trailer; "cuckoo vN", "empty vN", "unfiltered vN"
// or "bloom block vN" for the long trailer of version N; "raw bloom";
// "zero-length" for the block Pebble writes for a table without point keys
// (no filter writer is finished); "none" for no block.
func goldenKind(b []byte) string {
	switch {
	case b == nil:
		return "none"
	case len(b) == 0:
		return "zero-length" // Pebble's, for a table without point keys
	}
	info, err := cuckoopolicy.Inspect(b)
	switch {
	case err != nil:
		return fmt.Sprintf("invalid (%v)", err)
	case info.RawBloom:
		return "raw bloom"
	case b[len(b)-1] == 'c':
		return "cuckoo v3"
	}
	v := b[len(b)-5] // the long trailer's version, at offset 27 of 32
	switch {
	case info.Unfiltered:
		return fmt.Sprintf("unfiltered v%d", v)
	case info.BloomBlock:
		return fmt.Sprintf("bloom block v%d", v)
	case info.Buckets == 0:
		return fmt.Sprintf("empty v%d", v)
	}
	return fmt.Sprintf("cuckoo v%d", v)
}

func goldenFileSize(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(fi.Size())
}

// writeCurrentGoldenDB rewrites the current golden database at dir with
// today's code: the base layout with FilterPolicy(10) on every level
// (cuckoo blocks with the short trailer, a raw bloom block on the 40-key
// table), and, each in a session of its own, a table written by a live
// plan at a fixed budget of 150 bytes for L0 to L5 (a bloom block in this
// package's trailer) and one by a live plan at a budget of 1 byte (an
// unfiltered block). Its tables.txt is written as gen/main.go writes one.
func writeCurrentGoldenDB(t *testing.T, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dbDir := filepath.Join(dir, "db")
	options := func() *pebble.Options {
		return &pebble.Options{
			FormatMajorVersion:          pebble.FormatNewest,
			DisableAutomaticCompactions: true,
			DisableWAL:                  true, // every batch is flushed
			Logger:                      pebbletest.QuietLogger{},
		}
	}
	set := func(db *pebble.DB, b goldenBatch) {
		t.Helper()
		batch := db.NewBatch()
		for i := b.first; i < b.first+2*b.n; i += 2 {
			if err := batch.Set(goldenKey(i), goldenValue(i), nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := batch.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}

	// The base layout, with a live plan's tables between its batches:
	// while L0 holds the 500-key table alone, a live plan whose budget
	// gives L0 less than 4 bits per key writes a bloom block there; at the
	// end, one with a budget of 1 byte, which holds no filter, writes an
	// unfiltered block.
	withCuckoo := func(write func(db *pebble.DB)) {
		t.Helper()
		opts := options()
		cuckoopolicy.Apply(opts, cuckoopolicy.FilterPolicy(10))
		db := openDB(t, dbDir, opts)
		write(db)
		closeDB(t, db)
	}
	withLive := func(cfg plan.Config, bloom bool, b goldenBatch) {
		t.Helper()
		lp := plan.NewLive(cfg, time.Hour)
		opts := options()
		lp.Apply(opts)
		d, err := lp.Start(openDB(t, dbDir, opts))
		if err != nil {
			t.Fatal(err)
		}
		p := lp.Plan()
		t.Logf("live plan at %d bytes: %v", cfg.MaxFilterBytes, p)
		if isBloom := strings.HasSuffix(fmt.Sprint(p[0]), "in cuckoo blocks"); isBloom != bloom || !bloom && p[0] != nil {
			t.Fatalf("live plan %v at %d bytes: want L0 to write bloom blocks: %v, else none", p, cfg.MaxFilterBytes, bloom)
		}
		set(d.DB, b)
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	withCuckoo(func(db *pebble.DB) {
		set(db, baseBatches[0])
		if err := db.Compact(context.Background(), []byte("key"), []byte("key~"), false); err != nil {
			t.Fatal(err)
		}
		set(db, baseBatches[1])
	})
	withLive(plan.Config{MaxFilterBytes: 150, Fixed: true}, true, currentBatches[len(baseBatches)])
	withCuckoo(func(db *pebble.DB) {
		for _, b := range baseBatches[2:] {
			set(db, b)
		}
		if err := db.DeleteRange(goldenKey(900000), goldenKey(900001), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	})
	withLive(plan.Config{MaxFilterBytes: 1, Fixed: true, UseL6: true}, false, currentBatches[len(baseBatches)+1])

	// tables.txt, as gen/main.go writes it.
	opts := options()
	cuckoopolicy.Apply(opts, cuckoopolicy.FilterPolicy(10))
	opts.ReadOnly = true
	db := openDB(t, dbDir, opts)
	var b strings.Builder
	fmt.Fprintf(&b, "# go test ./sstable_integration -run TestGoldenDB -update-golden-db\n")
	fmt.Fprintf(&b, "# level file size filter-policy filter-bytes entries\n")
	fmt.Fprintf(&b, "format-major-version %d\n", db.FormatMajorVersion())
	for _, tf := range liveTables(t, db, vfs.Default, dbDir) {
		p := tf.props
		fmt.Fprintf(&b, "L%d %s %d %q %d %d\n", tf.level, filepath.Base(tf.path), goldenFileSize(t, tf.path), p.FilterPolicyName, p.FilterSize, p.NumEntries)
	}
	closeDB(t, db)
	if err := os.WriteFile(filepath.Join(dir, "tables.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dbDir, "LOCK")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}
