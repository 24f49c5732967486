package cuckoopolicy

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	pbloom "github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/static"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// BenchmarkLookupParts decomposes a lookup of FilterPolicy(B)'s block, in
// the cache (8k and 64k keys), for absent keys and at a 50% hit rate:
//
//   - hash: the key's xxhash alone;
//   - table: static.Lookup on the table, the trailer decoded beforehand
//     (the hash included, as in every part below);
//   - maycontain: FilterPolicy.MayContain called directly: the trailer's
//     read and checks on top of table;
//   - interface: MayContain through the pebble.FilterPolicy interface, as
//     Pebble calls it;
//   - bloom: bloom.FilterPolicy(B).MayContain through the interface.
//
// The answers are summed without a branch, so that the loop does not pay a
// mispredicted branch on each random answer. The differences are what each
// layer costs; compare ratios from one run:
//
//	go test ./cuckoopolicy -run '^$' -bench LookupParts -count 5
func BenchmarkLookupParts(b *testing.B) {
	for _, bits := range []int{10, 16} {
		for _, n := range []int{8000, 64000} {
			for _, hits := range []int{0, 50} {
				b.Run(fmt.Sprintf("B=%d/n=%d/hits=%d%%", bits, n, hits), func(b *testing.B) {
					lookupParts(b, bits, n, hits)
				})
			}
		}
	}
}

func lookupParts(b *testing.B, bits, n, hits int) {
	const nq = 1 << 16
	r := testkit.Rand(uint64(n), uint64(bits))
	keys := testkit.RandomKeys(r, n)
	absent := testkit.RandomKeys(r, nq)
	queries := make([][]byte, nq)
	for i := range queries {
		queries[i] = absent.At(i)
		if int(r.Uint32N(100)) < hits {
			queries[i] = keys.At(int(r.Uint32N(uint32(n))))
		}
	}
	block := build(FilterPolicy(bits), keys)
	if !isShort(block) {
		b.Fatal("the writer wrote a long trailer")
	}
	t := shortTrailer(block)
	table := block[:len(block)-shortTrailerLen+cuckoohash.PadBytes]
	var iface pebble.FilterPolicy = FilterPolicy(bits)
	bloomBlock := build(pbloom.FilterPolicy(bits), keys)
	var bloomIface pebble.FilterPolicy = pbloom.FilterPolicy(bits)
	var sink int
	b.Run("hash", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += int(cuckoohash.Hash(queries[i&(nq-1)]) & 1)
			i++
		}
	})
	b.Run("table", func(b *testing.B) {
		i := 0
		for b.Loop() {
			h := cuckoohash.Hash(queries[i&(nq-1)])
			sink += b2i(static.Lookup(table, t.buckets, t.seed, uint(t.f), t.flags&flagSemiSort != 0, h))
			i++
		}
	})
	b.Run("maycontain", func(b *testing.B) {
		p, i := FilterPolicy(bits), 0
		for b.Loop() {
			sink += b2i(p.MayContain(pebble.TableFilter, block, queries[i&(nq-1)]))
			i++
		}
	})
	b.Run("interface", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += b2i(iface.MayContain(pebble.TableFilter, block, queries[i&(nq-1)]))
			i++
		}
	})
	b.Run("bloom", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += b2i(bloomIface.MayContain(pebble.TableFilter, bloomBlock, queries[i&(nq-1)]))
			i++
		}
	})
	if sink < 0 {
		b.Fatal("unreachable")
	}
}

// b2i is 1 for true: the compiler makes it a flag set, not a branch.
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}
