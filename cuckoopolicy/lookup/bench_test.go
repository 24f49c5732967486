package lookup

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// benchKey returns the i-th key of the benchmark: 16 bytes, a hash of i
// first so that present (i < benchKeys) and absent keys interleave over the
// key space, and every absent key falls within some table's bounds.
func benchKey(i int) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, uint64(i)*0x9e3779b97f4a7c15)
	binary.BigEndian.PutUint64(k[8:], uint64(i))
	return k
}

const benchKeys = 200_000

// openBench opens a database shaped like a steady LSM: every key in L6, a
// tenth of them rewritten in two L0 tables above, a thousand in the memtable;
// cuckoopolicy.FilterPolicy(10) on every level, and a block cache that holds
// every block.
func openBench(b *testing.B) *pebble.DB {
	b.Helper()
	cache := pebble.NewCache(1 << 30)
	defer cache.Unref()
	o := &pebble.Options{FS: vfs.NewMem(), Cache: cache, Logger: pebbletest.QuietLogger{},
		FormatMajorVersion: pebble.FormatNewest, DisableAutomaticCompactions: true}
	cuckoopolicy.Apply(o, cuckoopolicy.FilterPolicy(10))
	db, err := pebble.Open("bench", o)
	if err != nil {
		b.Fatal(err)
	}
	write := func(from, to, step int, value string) {
		batch := db.NewBatch()
		for i := from; i < to; i += step {
			if err := batch.Set(benchKey(i), []byte(value), nil); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Commit(pebble.NoSync); err != nil {
			b.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	for half := range 2 { // overlapping tables, rewritten into L6 with its filter
		write(half, benchKeys, 2, "value-of-the-first-version")
		must(db.Flush())
	}
	must(db.Compact(b.Context(), []byte{0}, bytes.Repeat([]byte{0xff}, 17), false))
	write(0, benchKeys, 20, "second-version")
	must(db.Flush())
	write(10, benchKeys, 20, "second-version")
	must(db.Flush())
	write(5, benchKeys, 200, "third-version")
	if m := db.Metrics(); m.Levels[0].TablesCount != 2 || m.Levels[6].TablesCount == 0 {
		b.Fatalf("LSM shape: %d L0 tables, %d L6 tables", m.Levels[0].TablesCount, m.Levels[6].TablesCount)
	}
	return db
}

// warm reads every block keys need into the block cache: index, data and
// filter blocks of every level.
func warm(b *testing.B, db *pebble.DB, keys [][]byte) {
	for _, k := range keys {
		has, err := Has(db, k)
		if err != nil {
			b.Fatal(err)
		}
		_, closer, err := db.Get(k)
		if has != (err == nil) {
			b.Fatalf("key %x: Has %v, Get %v", k, has, err)
		}
		if err == nil {
			_ = closer.Close()
		}
	}
}

// benchPath is one way to look a key up.
type benchPath struct {
	name string
	do   func(db *pebble.DB, key []byte) error
}

// benchPaths are the lookups the benchmarks compare, db.Get first; Get's
// values are read and their closers closed.
func benchPaths(a *Adaptive) []benchPath {
	get := func(get func(pebble.Reader, []byte) ([]byte, io.Closer, error)) func(*pebble.DB, []byte) error {
		return func(db *pebble.DB, k []byte) error {
			_, closer, err := get(db, k)
			if err == nil {
				return closer.Close()
			}
			if err == pebble.ErrNotFound {
				return nil
			}
			return err
		}
	}
	has := func(has func(pebble.Reader, []byte) (bool, error)) func(*pebble.DB, []byte) error {
		return func(db *pebble.DB, k []byte) error {
			_, err := has(db, k)
			return err
		}
	}
	return []benchPath{
		{"get", get(pebble.Reader.Get)},
		{"lookup", get(Get)},
		{"has", has(Has)},
		{"adaptive", get(a.Get)},
		{"adaptive-has", has(a.Has)},
	}
}

// benchMixes are the shares of present keys the benchmarks ask.
var benchMixes = []float64{1, 0.9, 0.5, 0.1, 0}

// benchMix returns 1<<14 keys, each present with probability present.
func benchMix(present float64) [][]byte {
	rng := pebbletest.Rand(1)
	keys := make([][]byte, 1<<14)
	for i := range keys {
		if rng.Float64() < present {
			keys[i] = benchKey(rng.IntN(benchKeys))
		} else {
			keys[i] = benchKey(benchKeys + rng.IntN(benchKeys))
		}
	}
	return keys
}

// BenchmarkLookup compares Get, Has and an Adaptive with db.Get, for keys
// present with probability 1, 0.9, 0.5, 0.1 and 0, every block in the block
// cache. cpu-ns/op is the CPU time of the benchmark's thread per lookup
// (Linux), which other processes on a shared machine leave as it is; ns/op is
// wall time. Compare the medians of paths within one run, e.g.
//
//	go test ./cuckoopolicy/lookup -run '^$' -bench 'Lookup$' -count 6 | benchstat -col /path -
//
// Go runs a sub-benchmark's repetitions back to back, so on a machine whose
// load drifts BenchmarkLookupInterleaved compares better.
func BenchmarkLookup(b *testing.B) {
	db := openBench(b)
	defer db.Close()
	for _, present := range benchMixes {
		keys := benchMix(present)
		warm(b, db, keys)
		var a Adaptive
		for _, p := range benchPaths(&a) {
			b.Run(fmt.Sprintf("present=%g/path=%s", present, p.name), func(b *testing.B) {
				// CPU time of this thread, not wall time: on a shared machine
				// other processes' time would swamp the difference.
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				start, ok := threadCPU()
				i := 0
				for b.Loop() {
					if err := p.do(db, keys[i&(len(keys)-1)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
				if end, _ := threadCPU(); ok {
					b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

// BenchmarkLookupInterleaved runs the paths of BenchmarkLookup in turns of
// 64 lookups within one benchmark, so that a drifting load weighs on all of
// them alike, and reports each path's CPU time per lookup (NAME-cpu-ns) and
// its ratio to db.Get's (NAME/get). An op is one turn of every path.
//
//	go test ./cuckoopolicy/lookup -run '^$' -bench 'LookupInterleaved' -count 6 | benchstat -
func BenchmarkLookupInterleaved(b *testing.B) {
	if _, ok := threadCPU(); !ok {
		b.Skip("no per-thread CPU clock on this platform")
	}
	const turn = 64
	db := openBench(b)
	defer db.Close()
	for _, present := range benchMixes {
		keys := benchMix(present)
		warm(b, db, keys)
		var a Adaptive
		paths := benchPaths(&a)
		b.Run(fmt.Sprintf("present=%g", present), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu := make([]int64, len(paths))
			next := make([]int, len(paths)) // each path its own stretch of keys
			for j := range next {
				next[j] = j * len(keys) / len(paths)
			}
			for n := 0; b.Loop(); n++ {
				for j := range paths {
					p := (j + n) % len(paths) // a different path first each time
					start, _ := threadCPU()
					for range turn {
						if err := paths[p].do(db, keys[next[p]&(len(keys)-1)]); err != nil {
							b.Fatal(err)
						}
						next[p]++
					}
					end, _ := threadCPU()
					cpu[p] += end - start
				}
			}
			for p := range paths {
				b.ReportMetric(float64(cpu[p])/float64(b.N*turn), paths[p].name+"-cpu-ns")
				if p > 0 {
					b.ReportMetric(float64(cpu[p])/float64(cpu[0]), paths[p].name+"/get")
				}
			}
		})
	}
}
