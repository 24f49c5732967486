package cuckoopolicy

import (
	"runtime"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// TestWriterMemory: AddKey through Finish allocates at most 16 bytes per key
// besides the block it returns, even with cold pools.
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
		perKey := float64(after.TotalAlloc-before.TotalAlloc-uint64(cap(block))) / float64(n)
		t.Logf("%v: %.2f bytes per key of temporary memory", p, perKey)
		if perKey > 16 {
			t.Errorf("%v: %.2f bytes per key of temporary memory, want <= 16", p, perKey)
		}
	}
}
