package cuckoopolicy

import (
	"runtime"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// TestWriterMemory: AddKey through Finish allocates no more, besides the
// block it returns, than FORMAT.md's memory model gives for the table
// it built (writerBound), even with cold pools.
func TestWriterMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes sync.Pool, so allocations measure it, not the writer")
	}
	n := 500000
	if testing.Short() {
		n = 200000
	}
	keys := testkit.RandomKeys(testkit.Rand(testkit.Seed(t), 0), n)
	// FilterPolicy(17) and (32) keep their fingerprints in 32-bit slots
	// while building, and so does Policy{20}, whose lower load gives each
	// key more of them.
	for _, p := range []pebble.FilterPolicy{FilterPolicy(10), FilterPolicy(16), FilterPolicy(17), FilterPolicy(32),
		Policy{FingerprintBits: 13, SemiSort: true, LoadFactor: 0.975}, Policy{FingerprintBits: 20, LoadFactor: 0.9}} {
		runtime.GC()
		runtime.GC() // empties the pools
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		w := p.NewWriter(pebble.TableFilter)
		for i := range n {
			w.AddKey(keys.At(i))
		}
		block := w.Finish(nil)
		runtime.ReadMemStats(&after)
		info, err := Inspect(block)
		if err != nil {
			t.Fatal(err)
		}
		perKey := float64(after.TotalAlloc-before.TotalAlloc-uint64(cap(block))) / float64(n)
		bound := writerBound(n, info) / float64(n)
		t.Logf("%v: %.2f bytes per key of temporary memory, model %.2f", p, perKey, bound)
		if perKey > bound {
			t.Errorf("%v: %.2f bytes per key of temporary memory, above the model's %.2f", p, perKey, bound)
		}
	}
}

// writerBound is FORMAT.md's model of the writer's temporary memory
// for n distinct keys in the table info describes, as an upper bound: the
// hashes in chunks of 1024 (and the slice of chunk pointers, grown by
// append); the scratch table, 16 bytes a bucket up to 16-bit fingerprints
// and 24 beyond, plus a label byte, allocated with room for m/64+4 more
// buckets; the greedy pass's strays, 12 bytes each, at most n/13+64 of them,
// a quarter more for the list's growth; and 64 KiB for the writer, the
// builder and the pools' bookkeeping.
func writerBound(n int, info Info) float64 {
	chunks := (n + 1023) / 1024
	hashes := 8*1024*chunks + 2*8*chunks
	slot := 16
	if info.FingerprintBits > 16 {
		slot = 24
	}
	m := info.Buckets
	scratch := (slot + 1) * (m + m/64 + 4)
	strays := 12 * (n/13 + 64) * 5 / 4
	return float64(hashes + scratch + strays + 64<<10)
}
