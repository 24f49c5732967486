package plan

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/family"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// build runs p's writer over keys and returns the block.
func build(p pebble.FilterPolicy, keys *testkit.Keys) []byte {
	w := p.NewWriter(pebble.TableFilter)
	for i := range keys.Len() {
		w.AddKey(keys.At(i))
	}
	return w.Finish(nil)
}

// bytesOf is the model's bytes for p's block on a table of n keys.
func bytesOf(p pebble.FilterPolicy, n uint64) float64 {
	b, _ := family.TableCost(p, n)
	return b
}
