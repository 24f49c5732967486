package main

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// TestRun runs the example's database with each policy on fewer keys. Every
// present key must be found; the absent Gets must have probed the filters
// (at most one probe per L0 table each); and on these keys and queries
// (fixed, as the builds are deterministic) the cuckoo filter must let fewer
// absent Gets through to a data block than bloom at the same bits per key
// (expected about 0.7% against 1.2%).
func TestRun(t *testing.T) {
	const keys, flushes, gets = 20_000, 4, 4_000
	var misses [2]int64
	for i, p := range []pebble.FilterPolicy{bloom.FilterPolicy(10), cuckoopolicy.FilterPolicy(10)} {
		r, err := run(p, keys, flushes, gets)
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		if r.lost != 0 {
			t.Errorf("%s: %d of %d present keys lost", p.Name(), r.lost, gets)
		}
		probes := r.hits + r.misses
		if probes < gets || probes > flushes*gets {
			t.Errorf("%s: %d filter probes for %d absent Gets over %d tables", p.Name(), probes, gets, flushes)
		}
		t.Logf("%s: %d probes, %d false positives (%.3f%%)", p.Name(), probes, r.misses, 100*r.fpr)
		misses[i] = r.misses
	}
	if misses[1] >= misses[0] {
		t.Errorf("cuckoo let %d absent Gets through, bloom %d", misses[1], misses[0])
	}
}
