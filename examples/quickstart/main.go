// Quickstart opens an embedded Pebble database in a temporary directory with
// the cuckoo filter on all seven levels (cuckoopolicy.Apply), loads keys in
// several flushes, and reads present and absent keys. It prints what the
// filters did, beside the same run with Pebble's bloom filter at the same bits
// per key.
//
//	go run ./examples/quickstart
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

func main() {
	bits := flag.Int("bits", 10, "bits per key for both filters")
	keys := flag.Int("keys", 100000, "keys to load")
	flushes := flag.Int("flushes", 8, "memtable flushes (overlapping L0 tables)")
	gets := flag.Int("gets", 50000, "absent and present Gets each")
	flag.Parse()

	fmt.Printf("%d keys in %d flushes, %d absent and %d present Gets, %d bits per key\n\n",
		*keys, *flushes, *gets, *gets, *bits)
	fmt.Printf("%-16s %14s %14s %12s %12s %14s\n", "", "absent Gets:", "tables", "false", "false-pos.", "present Gets:")
	fmt.Printf("%-16s %14s %14s %12s %12s %14s\n", "policy", "tables probed", "skipped", "positives", "rate", "keys lost")
	var rates [2]float64
	for i, p := range []pebble.FilterPolicy{bloom.FilterPolicy(*bits), cuckoopolicy.FilterPolicy(*bits)} {
		r, err := run(p, *keys, *flushes, *gets)
		if err != nil {
			log.Fatal(err)
		}
		name := [2]string{"bloom", "cuckoo"}[i] + fmt.Sprintf("(%d)", *bits)
		fmt.Printf("%-16s %14d %14d %12d %11.3f%% %14d\n", name, r.hits+r.misses, r.hits, r.misses, 100*r.fpr, r.lost)
		rates[i] = r.fpr
	}
	if rates[0] > 0 {
		fmt.Printf("\ncuckoo/bloom false-positive ratio: %.2f (each false positive is a data block read)\n", rates[1]/rates[0])
	}
}

type result struct {
	hits, misses int64
	fpr          float64
	lost         int
}

// run loads nkeys keys in the given number of flushes into a new database
// filtered by p, then does gets Gets of absent keys and gets of present ones.
func run(p pebble.FilterPolicy, nkeys, flushes, gets int) (result, error) {
	dir, err := os.MkdirTemp("", "pebble-cuckoo-quickstart")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	db, err := open(dir, p)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	if err := load(db, nkeys, flushes); err != nil {
		return result{}, err
	}

	var res result
	r := rand.New(rand.NewPCG(1, 2))
	res.hits, res.misses, err = getAbsent(db, r, nkeys, gets)
	if err != nil {
		return res, err
	}
	if probes := res.hits + res.misses; probes > 0 {
		res.fpr = float64(res.misses) / float64(probes)
	}
	res.lost = getPresent(db, r, nkeys, gets)
	return res, nil
}

// open opens a database in dir with p on all seven levels.
func open(dir string, p pebble.FilterPolicy) (*pebble.DB, error) {
	opts := &pebble.Options{
		Logger: quiet{},
		// Keep every flushed table in L0, so each Get probes all of them.
		DisableAutomaticCompactions: true,
		L0CompactionThreshold:       1 << 20,
		L0StopWritesThreshold:       1 << 20,
	}
	// p on all seven levels; bloom and cuckoo tables written before stay
	// filtered whichever p is.
	cuckoopolicy.Apply(opts, p)
	return pebble.Open(dir, opts)
}

// key returns the i-th key: a hash of i spreads the keys over the key space.
func key(i int) []byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:], uint64(i)*0x9e3779b97f4a7c15)
	binary.BigEndian.PutUint64(k[8:], uint64(i))
	return k[:]
}

// load writes keys 0 to nkeys-1 in the given number of flushes. Every flush
// writes a slice of the keys spread over the whole key space, so the L0
// tables overlap and a Get must ask each one.
func load(db *pebble.DB, nkeys, flushes int) error {
	for f := range flushes {
		b := db.NewBatch()
		for i := f; i < nkeys; i += flushes {
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

// getAbsent does gets Gets of absent keys and returns what the filters
// did: hits are tables they skipped, misses their false positives.
func getAbsent(db *pebble.DB, r *rand.Rand, nkeys, gets int) (hits, misses int64, err error) {
	before := db.Metrics().Filter
	for range gets {
		// Absent: the same shape as a real key, an index past the loaded ones.
		_, closer, err := db.Get(key(nkeys + r.IntN(1<<30)))
		if err == nil {
			closer.Close()
			return 0, 0, fmt.Errorf("absent key found")
		}
		if err != pebble.ErrNotFound {
			return 0, 0, err
		}
	}
	after := db.Metrics().Filter
	return after.Hits - before.Hits, after.Misses - before.Misses, nil
}

// getPresent does gets Gets of loaded keys and returns how many were not
// found with their value: every one must be.
func getPresent(db *pebble.DB, r *rand.Rand, nkeys, gets int) (lost int) {
	for range gets {
		i := r.IntN(nkeys)
		v, closer, err := db.Get(key(i))
		if err != nil {
			lost++
			continue
		}
		if string(v) != "value" {
			lost++
		}
		closer.Close()
	}
	return lost
}

// quiet discards Pebble's informational log lines.
type quiet struct{}

func (quiet) Infof(string, ...any)      {}
func (quiet) Errorf(f string, a ...any) { log.Printf(f, a...) }
func (quiet) Fatalf(f string, a ...any) { log.Fatalf(f, a...) }
