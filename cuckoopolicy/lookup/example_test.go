package lookup_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/cockroachkvs"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/lookup"
)

// openExample opens an in-memory database with the cuckoo filter on every
// level, L6 included, and keys user0000 to user0999 compacted into L6.
func openExample() *pebble.DB {
	opts := &pebble.Options{FS: vfs.NewMem(), Logger: quiet{}}
	cuckoopolicy.Apply(opts, cuckoopolicy.FilterPolicy(10))
	db, err := pebble.Open("db", opts)
	if err != nil {
		log.Fatal(err)
	}
	for half := range 2 { // overlapping tables: the compaction writes L6's filter
		for i := half; i < 1000; i += 2 {
			if err := db.Set(fmt.Appendf(nil, "user%04d", i), []byte("profile"), pebble.NoSync); err != nil {
				log.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			log.Fatal(err)
		}
	}
	if err := db.Compact(context.Background(), []byte("user"), []byte("userz"), false); err != nil {
		log.Fatal(err)
	}
	return db
}

// A datastore's Has through the L6 filters: an absent key the filter rules
// out reads no L6 data block, where db.Get would read one.
func ExampleHas() {
	db := openExample()
	defer db.Close()
	for _, k := range []string{"user0042", "user0042x"} {
		found, err := lookup.Has(db, []byte(k))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(k, found)
	}
	// Output:
	// user0042 true
	// user0042x false
}

// Get has db.Get's contract: the value is valid until the closer is closed,
// which must happen before the database closes.
func ExampleGet() {
	db := openExample()
	defer db.Close()
	v, closer, err := lookup.Get(db, []byte("user0042"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", v)
	if err := closer.Close(); err != nil {
		log.Fatal(err)
	}
	_, _, err = lookup.Get(db, []byte("user0042x"))
	fmt.Println(err == pebble.ErrNotFound)
	// Output:
	// profile
	// true
}

// An Adaptive serves a workload whose share of absent keys changes: db.Get
// while most keys asked are present, the L6 filters once many are absent.
func ExampleAdaptive() {
	db := openExample()
	defer db.Close()
	var a lookup.Adaptive // safe for concurrent use; one per workload
	for i := range 100 {
		if _, err := a.Has(db, fmt.Appendf(nil, "user%04dx", i)); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("after 100 absent keys: %.0f%% absent, filtered path: %v\n",
		100*a.AbsentShare(), a.AbsentShare() > lookup.DefaultThreshold)
	// Output:
	// after 100 absent keys: 79% absent, filtered path: true
}

// Filtered with CockroachDB's comparer, whose Split keeps the key without its
// timestamp: SeekPrefixGE lands on the newest version at or below the one
// asked, and the comparer's Equal tells whether it is the one asked.
func ExampleFiltered() {
	opts := &pebble.Options{FS: vfs.NewMem(), Logger: quiet{}, Comparer: &cockroachkvs.Comparer,
		KeySchema: cockroachkvs.KeySchema.Name, KeySchemas: sstable.MakeKeySchemas(&cockroachkvs.KeySchema)}
	cuckoopolicy.Apply(opts, cuckoopolicy.FilterPolicy(10))
	db, err := pebble.Open("db", opts)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	at := func(wall uint64) []byte { return cockroachkvs.EncodeMVCCKey(nil, []byte("/Table/1/1/alice"), wall, 0) }
	if err := db.Set(at(100), []byte("v100"), pebble.NoSync); err != nil {
		log.Fatal(err)
	}
	f := lookup.Filtered{Comparer: &cockroachkvs.Comparer}
	for _, wall := range []uint64{100, 150} {
		found, err := f.Has(db, at(wall))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("@%d: %v\n", wall, found)
	}
	// Output:
	// @100: true
	// @150: false
}

// quiet discards Pebble's informational log lines.
type quiet struct{}

func (quiet) Infof(string, ...any)      {}
func (quiet) Errorf(f string, a ...any) { log.Printf(f, a...) }
func (quiet) Fatalf(f string, a ...any) { log.Fatalf(f, a...) }
