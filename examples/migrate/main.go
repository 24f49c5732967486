// Migrate switches an existing Pebble database from Pebble's bloom filter to
// the cuckoo filter and back, and shows each step with
// cuckoopolicy.FilterUsage and Usage.ReadBy: the old tables keep their
// filters, and stay filtered, until compactions rewrite them. Then it shows
// the traps: setting the levels' policy without cuckoopolicy.Apply, to switch
// or to roll back, leaves the other family's tables with no filter at all,
// and ReadBy says so before a single read is slower.
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

// applied configures opts for p the safe way.
func applied(p pebble.FilterPolicy) func(*pebble.Options) {
	return func(opts *pebble.Options) { cuckoopolicy.Apply(opts, p) }
}

// levelsOnly sets p on every level and nothing else: the other family is no
// longer in opts.Filters, so Pebble reads its tables unfiltered.
func levelsOnly(p pebble.FilterPolicy) func(*pebble.Options) {
	return func(opts *pebble.Options) {
		for i := range opts.Levels {
			opts.Levels[i].FilterPolicy = p
			opts.Levels[i].FilterType = pebble.TableFilter
		}
	}
}

// step is one migration: a database written with from, reopened with to.
type step struct {
	title    string
	from, to func(*pebble.Options)
}

func steps() []step {
	cuckoo, bloom10 := cuckoopolicy.FilterPolicy(10), bloom.FilterPolicy(10)
	return []step{
		{"switch with cuckoopolicy.Apply", levelsOnly(bloom10), applied(cuckoo)},
		{"the trap: levels set to cuckoo, no Apply", levelsOnly(bloom10), levelsOnly(cuckoo)},
		{"rollback with cuckoopolicy.Apply(opts, bloom.FilterPolicy(10))", applied(cuckoo), applied(bloom10)},
		{"the rollback trap: plain bloom options, no Apply", applied(cuckoo), levelsOnly(bloom10)},
	}
}

func run(w io.Writer, keys, flushes, gets int) error {
	for _, s := range steps() {
		fmt.Fprintf(w, "== %s\n", s.title)
		if err := migrate(w, s, keys, flushes, gets); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}

func migrate(w io.Writer, s step, keys, flushes, gets int) error {
	dir, err := os.MkdirTemp("", "pebble-cuckoo-migrate")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// A database written with the old filter, its tables in L0.
	db, _, err := open(dir, s.from)
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

	// Reopened for the new filter.
	db, opts, err := open(dir, s.to)
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Fprintln(w, "reopened over the old tables:")
	if err := report(w, db, opts, keys, gets); err != nil {
		return err
	}
	// A database this small compacts straight into L6, whose filters Get
	// never reads; prefix reads with UseL6Filters do.
	if err := db.Compact(context.Background(), key(0), key(keys), false); err != nil {
		return err
	}
	fmt.Fprintln(w, "after a manual compaction:")
	return report(w, db, opts, keys, gets)
}

func open(dir string, configure func(*pebble.Options)) (*pebble.DB, *pebble.Options, error) {
	opts := &pebble.Options{
		Logger: quiet{},
		// Keep every flushed table in L0 until the manual compaction.
		DisableAutomaticCompactions: true,
		L0CompactionThreshold:       1 << 20,
		L0StopWritesThreshold:       1 << 20,
	}
	configure(opts)
	db, err := pebble.Open(dir, opts)
	return db, opts, err
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

// report prints FilterUsage, whether opts read each row's filters, and what
// absent Gets got from the filters, and checks that every key is still there.
func report(w io.Writer, db *pebble.DB, opts *pebble.Options, keys, gets int) error {
	rows, err := cuckoopolicy.FilterUsage(db)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-5s %-26s %6s %8s %12s %9s  %s\n", "level", "filter policy", "tables", "entries", "filter bytes", "bits/entry", "ReadBy")
	for _, u := range rows {
		read := "yes"
		if !u.ReadBy(opts) {
			read = "NO: these tables are read unfiltered"
		}
		fmt.Fprintf(w, "  L%-4d %-26s %6d %8d %12d %9.2f  %s\n", u.Level, policyName(u), u.Tables, u.Entries, u.FilterBytes, u.BitsPerEntry(), read)
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

// policyName is a row's filter policy, "none" for tables without a filter,
// as plans print it.
func policyName(u cuckoopolicy.Usage) string {
	if u.Policy == "" {
		return "none"
	}
	return u.Policy
}
