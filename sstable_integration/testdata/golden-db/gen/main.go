// Command gen writes a golden database for TestGoldenDB: the base layout
// (goldendb_test.go's baseBatches) with cuckoopolicy.FilterPolicy(10) on
// every level, written by the code of the commit it is built at, and
// tables.txt, the tables as Pebble's properties give them at write time.
//
// It uses only what every commit since the first has (FilterPolicy and
// Pebble v2.1.7's API), so that generate.sh can build it in a worktree of
// an old commit. See ../README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

func main() {
	dir := flag.String("dir", "", "directory of the new database (must not exist)")
	format := flag.String("format", "", "row (pebble.FormatMinSupported) or columnar (pebble.FormatNewest)")
	tables := flag.String("tables", "", "file to write the table listing to")
	note := flag.String("note", "", "what wrote the database, for the listing's first line")
	flag.Parse()
	fmv := map[string]pebble.FormatMajorVersion{"row": pebble.FormatMinSupported, "columnar": pebble.FormatNewest}[*format]
	if *dir == "" || *tables == "" || fmv == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if _, err := os.Stat(*dir); err == nil {
		log.Fatalf("%s exists", *dir)
	}
	p := cuckoopolicy.FilterPolicy(10)
	opts := &pebble.Options{
		FormatMajorVersion:          fmv,
		DisableAutomaticCompactions: true,
		// Every batch is flushed to a table of its own: no WAL to keep.
		DisableWAL: true,
		Filters:    map[string]pebble.FilterPolicy{p.Name(): p},
	}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = p
		opts.Levels[i].FilterType = pebble.TableFilter
	}
	db, err := pebble.Open(*dir, opts)
	if err != nil {
		log.Fatal(err)
	}
	writeBase(db)
	listing := listTables(db, *note)
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*tables, []byte(listing), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Print(listing)
}

func key(i int) []byte   { return fmt.Appendf(nil, "key%06d", i) }
func value(i int) []byte { return fmt.Appendf(nil, "value%06d", i) }

// writeBase writes the base layout, each batch flushed to a table of its
// own: 2000 keys (0, 2, ..., 3998) compacted to L6; in L0, 500 keys (1, 3,
// ..., 999), 40 keys (1001, ..., 1079), 1 key (1081) and a range deletion
// alone over [key900000, key900001), which deletes nothing.
func writeBase(db *pebble.DB) {
	set(db, 0, 2000)
	if err := db.Compact(context.Background(), []byte("key"), []byte("key~"), false); err != nil {
		log.Fatal(err)
	}
	set(db, 1, 500)
	set(db, 1001, 40)
	set(db, 1081, 1)
	if err := db.DeleteRange(key(900000), key(900001), pebble.NoSync); err != nil {
		log.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		log.Fatal(err)
	}
}

// set writes n keys from first on, every other one, and flushes them.
func set(db *pebble.DB, first, n int) {
	b := db.NewBatch()
	for i := first; i < first+2*n; i += 2 {
		if err := b.Set(key(i), value(i), nil); err != nil {
			log.Fatal(err)
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		log.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		log.Fatal(err)
	}
}

// listTables is tables.txt: note and a header, the format major version,
// then a line per table: level, file, size, filter policy name, filter
// block bytes and entries, from Pebble's table properties.
func listTables(db *pebble.DB, note string) string {
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		log.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n# level file size filter-policy filter-bytes entries\n", note)
	fmt.Fprintf(&b, "format-major-version %d\n", db.FormatMajorVersion())
	for level, tables := range levels {
		for _, t := range tables {
			p := t.Properties
			fmt.Fprintf(&b, "L%d %06d.sst %d %q %d %d\n", level, t.BackingSSTNum, t.Size, p.FilterPolicyName, p.FilterSize, p.NumEntries)
		}
	}
	return b.String()
}
