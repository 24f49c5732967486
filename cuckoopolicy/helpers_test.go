package cuckoopolicy

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/static"
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

// requireAll fails on any false negative.
func requireAll(t *testing.T, p pebble.FilterPolicy, block []byte, keys *testkit.Keys) {
	t.Helper()
	for i := range keys.Len() {
		if !p.MayContain(pebble.TableFilter, block, keys.At(i)) {
			t.Fatalf("false negative: key %d (%x) of %d", i, keys.At(i), keys.Len())
		}
	}
}

// falsePositives counts the absent keys the block admits.
func falsePositives(p pebble.FilterPolicy, block []byte, absent *testkit.Keys) int {
	n := 0
	for i := range absent.Len() {
		if p.MayContain(pebble.TableFilter, block, absent.At(i)) {
			n++
		}
	}
	return n
}

// buildAt builds c's table of keys (distinct keys) at width f with the
// static builder alone, sized as c's writer sizes it, and returns the length
// of the block around it and the table's parameters: what the writer would
// write at f, without its fallback to a narrower width.
func buildAt(b *static.Builder, c config, keys *testkit.Keys, f int) (int, static.Params) {
	var hl static.HashList
	for i := range keys.Len() {
		hl.Add(cuckoohash.Hash(keys.At(i)))
	}
	dst, p := b.Build(nil, &hl, f, c.semi, func(n int) uint64 { return c.buckets(f, n) })
	return blockLen(len(dst)), p
}
