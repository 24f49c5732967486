package cuckoopolicy

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	pbloom "github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// BenchmarkMayContainVersions reads the same FilterPolicy(10) table as a
// version 3 block (the short trailer the writer writes), a version 2 and a
// version 1 block (the long trailer, format.go), and Pebble's bloom over the
// same keys, with absent 16-byte keys. The cuckoo blocks go through the same
// MayContain: a long trailer fails the inline short-trailer test, and a
// version 1 trailer also the inline version 2 test, and is checked out of
// line, as the version 1 reader checked every block. The differences are
// what the trailer checks cost a lookup:
//
//	go test ./cuckoopolicy -run '^$' -bench MayContainVersions -count 5
func BenchmarkMayContainVersions(b *testing.B) {
	for _, n := range []int{100000, 1 << 24} {
		// The filters are built inside the n level, so that -bench selects
		// which sizes are built, not only which are timed.
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			r := testkit.Rand(1, 0)
			keys := testkit.RandomKeys(r, n)
			// Enough queries that the lines they touch do not stay in the
			// last cache level between rounds for the large filter.
			queries := testkit.RandomKeys(r, 1<<21)
			v3 := build(FilterPolicy(10), keys)
			blocks := []struct {
				name  string
				p     pebble.FilterPolicy
				block []byte
			}{
				{"cuckoo-v3", FilterPolicy(10), v3},
				{"cuckoo-v2", FilterPolicy(10), longBlock(v3)},
				{"cuckoo-v1", FilterPolicy(10), withVersion(v3, formatV1)},
				{"bloom", pbloom.FilterPolicy(10), build(pbloom.FilterPolicy(10), keys)},
			}
			for _, bl := range blocks {
				b.Run(bl.name, func(b *testing.B) {
					i := 0
					for b.Loop() {
						bl.p.MayContain(pebble.TableFilter, bl.block, queries.At(i&(1<<21-1)))
						i++
					}
				})
			}
		})
	}
}
