// Migrate switches an existing Pebble database from Pebble's bloom filter to
// the cuckoo filter and shows the switch with cuckoopolicy.FilterUsage: the
// old tables keep their bloom filters, and stay filtered, until compactions
// rewrite them as cuckoo tables. Then it shows the trap: setting the levels'
// policy without cuckoopolicy.Apply leaves the old tables with no filter at
// all.
//
//	go run ./examples/migrate
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

func main() {
	keys := flag.Int("keys", 50000, "keys to load")
	flushes := flag.Int("flushes", 4, "memtable flushes (overlapping L0 tables)")
	gets := flag.Int("gets", 10000, "absent Gets per check")
	flag.Parse()
	if err := run(os.Stdout, *keys, *flushes, *gets); err != nil {
		log.Fatal(err)
	}
}

// withApply configures opts for the cuckoo filter the safe way.
func withApply(opts *pebble.Options) {
	cuckoopolicy.Apply(opts, cuckoopolicy.FilterPolicy(10))
}

// levelsOnly sets the cuckoo filter on every level and nothing else: bloom is
// no longer in opts.Filters, so Pebble reads the bloom tables unfiltered.
func levelsOnly(opts *pebble.Options) {
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = cuckoopolicy.FilterPolicy(10)
		opts.Levels[i].FilterType = pebble.TableFilter
	}
}

func run(w io.Writer, keys, flushes, gets int) error {
	for _, c := range []struct {
		title     string
		configure func(*pebble.Options)
	}{
		{"with cuckoopolicy.Apply", withApply},
		{"the trap: levels set to cuckoo, no Apply", levelsOnly},
	} {
		fmt.Fprintf(w, "== %s\n", c.title)
		if err := migrate(w, c.configure, keys, flushes, gets); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}

func migrate(w io.Writer, configure func(*pebble.Options), keys, flushes, gets int) error {
	dir, err := os.MkdirTemp("", "pebble-cuckoo-migrate")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// A database written with Pebble's bloom filter, its tables in L0.
	db, err := open(dir, func(o *pebble.Options) {
		for i := range o.Levels {
			o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
			o.Levels[i].FilterType = pebble.TableFilter
		}
	})
	if err != nil {
		return err
	}
	if err := load(db, keys, flushes); err != nil {
		db.Close()
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}

	// Reopened for the cuckoo filter.
	if db, err = open(dir, configure); err != nil {
		return err
	}
	defer db.Close()
	fmt.Fprintln(w, "reopened over the bloom tables:")
	if err := report(w, db, keys, gets); err != nil {
		return err
	}
	// A database this small compacts straight into L6, whose filters Get
	// never reads; prefix reads with UseL6Filters do.
	if err := db.Compact(context.Background(), key(0), key(keys), false); err != nil {
		return err
	}
	fmt.Fprintln(w, "after a manual compaction:")
	return report(w, db, keys, gets)
}

func open(dir string, configure func(*pebble.Options)) (*pebble.DB, error) {
	opts := &pebble.Options{
		Logger: quiet{},
		// Keep every flushed table in L0 until the manual compaction.
		DisableAutomaticCompactions: true,
		L0CompactionThreshold:       1 << 20,
		L0StopWritesThreshold:       1 << 20,
	}
	configure(opts)
	return pebble.Open(dir, opts)
}

// key spreads keys over the key space, so every L0 table overlaps the others.
func key(i int) []byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:], uint64(i)*0x9e3779b97f4a7c15)
	binary.BigEndian.PutUint64(k[8:], uint64(i))
	return k[:]
}

func load(db *pebble.DB, keys, flushes int) error {
	for f := range flushes {
		b := db.NewBatch()
		for i := f; i < keys; i += flushes {
			if err := b.Set(key(i), []byte("value"), nil); err != nil {
				return err
			}
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			return err
		}
		if err := db.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// report prints FilterUsage and what absent Gets got from the filters, and
// checks that every key is still there.
func report(w io.Writer, db *pebble.DB, keys, gets int) error {
	rows, err := cuckoopolicy.FilterUsage(db)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-5s %-26s %6s %8s %12s %9s\n", "level", "filter policy", "tables", "keys", "filter bytes", "bits/key")
	for _, u := range rows {
		fmt.Fprintf(w, "  L%-4d %-26s %6d %8d %12d %9.2f\n", u.Level, u.Policy, u.Tables, u.Keys, u.FilterBytes, u.BitsPerEntry())
	}
	s, err := absentGets(db, keys, gets)
	if err != nil {
		return err
	}
	note := ""
	if s.hits+s.misses == 0 && onlyL6(rows) {
		note = " (Get never reads L6 filters)"
	}
	fmt.Fprintf(w, "  %d absent Gets:          %s%s\n", gets, s, note)
	if s, err = absentPrefixReads(db, keys, gets); err != nil {
		return err
	}
	fmt.Fprintf(w, "  %d absent prefix reads:  %s (UseL6Filters)\n", gets, s)
	lost, err := presentGets(db, keys)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %d present keys read, %d lost\n", keys, lost)
	return nil
}

func onlyL6(rows []cuckoopolicy.Usage) bool {
	for _, u := range rows {
		if u.Level != 6 {
			return false
		}
	}
	return len(rows) > 0
}

type filterStats struct{ hits, misses int64 }

func (s filterStats) String() string {
	if s.hits+s.misses == 0 {
		return "no filter read: each table searched"
	}
	return fmt.Sprintf("%d filter probes, %d tables ruled out", s.hits+s.misses, s.hits)
}

func absentPrefixReads(db *pebble.DB, keys, reads int) (filterStats, error) {
	before := db.Metrics().Filter
	it, err := db.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		return filterStats{}, err
	}
	for i := range reads {
		if it.SeekPrefixGE(key(keys + 1 + i)) {
			it.Close()
			return filterStats{}, fmt.Errorf("absent key %x found", key(keys+1+i))
		}
	}
	if err := it.Close(); err != nil {
		return filterStats{}, err
	}
	after := db.Metrics().Filter
	return filterStats{after.Hits - before.Hits, after.Misses - before.Misses}, nil
}

func absentGets(db *pebble.DB, keys, gets int) (filterStats, error) {
	before := db.Metrics().Filter
	for i := range gets {
		// Absent: the same shape as a real key, an index past the loaded ones.
		_, closer, err := db.Get(key(keys + 1 + i))
		if err == nil {
			closer.Close()
			return filterStats{}, fmt.Errorf("absent key %x found", key(keys+1+i))
		}
		if err != pebble.ErrNotFound {
			return filterStats{}, err
		}
	}
	after := db.Metrics().Filter
	return filterStats{after.Hits - before.Hits, after.Misses - before.Misses}, nil
}

func presentGets(db *pebble.DB, keys int) (lost int, err error) {
	for i := range keys {
		v, closer, err := db.Get(key(i))
		if err == pebble.ErrNotFound {
			lost++
			continue
		}
		if err != nil {
			return lost, err
		}
		if string(v) != "value" {
			lost++
		}
		closer.Close()
	}
	return lost, nil
}

// quiet discards Pebble's informational log lines.
type quiet struct{}

func (quiet) Infof(string, ...any)      {}
func (quiet) Errorf(f string, a ...any) { log.Printf(f, a...) }
func (quiet) Fatalf(f string, a ...any) { log.Fatalf(f, a...) }
