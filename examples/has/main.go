// Has turns a datastore's Has, written with db.Get as go-ds-pebble's and
// geth's are, into lookup.Has, which reads the L6 filters that db.Get never
// reads. It loads keys into an embedded Pebble database in a temporary
// directory (cuckoopolicy.FilterPolicy(10) on every level), compacts them
// into L6, and asks absent and present keys through each Has: how many L6
// filters each asked, and how many absent keys they ruled out, each one an L6
// index and data block read saved. (BenchmarkLookup in cuckoopolicy/lookup
// times the paths.)
//
//	go run ./examples/has
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
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/lookup"
)

func main() {
	keys := flag.Int("keys", 100000, "keys to load")
	asks := flag.Int("asks", 20000, "absent and present keys asked, each, through each Has")
	flag.Parse()
	if err := run(os.Stdout, *keys, *asks); err != nil {
		log.Fatal(err)
	}
}

// hasByGet is a datastore's Has as go-ds-pebble and geth write it: a Get
// whose value is dropped.
func hasByGet(r pebble.Reader, key []byte) (bool, error) {
	_, closer, err := r.Get(key)
	switch err {
	case nil:
		return true, closer.Close()
	case pebble.ErrNotFound:
		return false, nil
	default:
		return false, err
	}
}

// result is what one Has did.
type result struct {
	probes, ruledOut int64 // L6 filters asked by the absent keys, and the keys they ruled out
	found            int   // present keys found
}

// run loads nkeys keys, then asks asks absent and asks present keys through
// each Has, and writes what each did to w.
func run(w io.Writer, nkeys, asks int) error {
	dir, err := os.MkdirTemp("", "pebble-cuckoo-has")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opts := &pebble.Options{Logger: quiet{}}
	cuckoopolicy.Apply(opts, cuckoopolicy.FilterPolicy(10))
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := load(db, nkeys); err != nil {
		return err
	}
	var adaptive lookup.Adaptive
	fmt.Fprintf(w, "%d keys in L6; %d absent and %d present keys asked through each Has\n\n", nkeys, asks, asks)
	fmt.Fprintf(w, "%-22s %18s %14s %14s\n", "Has", "L6 filter probes", "absent keys", "present keys")
	fmt.Fprintf(w, "%-22s %18s %14s %14s\n", "", "(absent keys)", "ruled out", "found")
	for _, h := range []struct {
		name string
		has  func(pebble.Reader, []byte) (bool, error)
	}{
		{"db.Get", hasByGet},
		{"lookup.Has", lookup.Has},
		{"lookup.Adaptive.Has", adaptive.Has},
	} {
		r, err := ask(db, h.has, nkeys, asks)
		if err != nil {
			return fmt.Errorf("%s: %w", h.name, err)
		}
		fmt.Fprintf(w, "%-22s %18d %14d %14d\n", h.name, r.probes, r.ruledOut, r.found)
	}
	fmt.Fprintf(w, "\nEvery absent key an L6 filter does not rule out reads an L6 index and data block.\n")
	return nil
}

// key returns the i-th key: a hash of i first, so absent keys (i >= the
// number loaded) fall between present ones.
func key(i int) []byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:], uint64(i)*0x9e3779b97f4a7c15)
	binary.BigEndian.PutUint64(k[8:], uint64(i))
	return k[:]
}

// load writes keys 0 to n-1 in two flushes of interleaved keys and compacts
// them into L6, which the compaction writes with L6's filter.
func load(db *pebble.DB, n int) error {
	for half := range 2 {
		b := db.NewBatch()
		for i := half; i < n; i += 2 {
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
	return db.Compact(context.Background(), []byte{0}, []byte{0xff}, false)
}

// ask asks asks absent keys, then asks present ones, through has.
func ask(db *pebble.DB, has func(pebble.Reader, []byte) (bool, error), nkeys, asks int) (result, error) {
	var r result
	absent := func(i int) []byte { return key(nkeys + i) }
	present := func(i int) []byte { return key(i * 7919 % nkeys) }
	before := db.Metrics().Filter
	for i := range asks {
		if found, err := has(db, absent(i)); err != nil || found {
			return r, fmt.Errorf("absent key %x: found %v, %v", absent(i), found, err)
		}
	}
	after := db.Metrics().Filter
	r.probes = after.Hits + after.Misses - before.Hits - before.Misses
	r.ruledOut = after.Hits - before.Hits
	for i := range asks {
		found, err := has(db, present(i))
		if err != nil {
			return r, err
		}
		if found {
			r.found++
		}
	}
	return r, nil
}

// quiet discards Pebble's informational log lines.
type quiet struct{}

func (quiet) Infof(string, ...any)      {}
func (quiet) Errorf(f string, a ...any) { log.Printf(f, a...) }
func (quiet) Fatalf(f string, a ...any) { log.Fatalf(f, a...) }
