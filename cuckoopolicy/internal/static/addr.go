package static

import "github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"

// addr is the addressing of the static (sstable) filter: two buckets
// drawn independently from the hash (the second within the window), and a
// fingerprint from bits that neither index uses (for m <= 2^32). Lookup's
// generated fast path (lookup_fast.go) and the builder's placement pass spell
// it out inline, since it is too large to inline and both are hot loops; the
// tests check them against it.
func addr(h, seed, m uint64, f uint) (i1, i2 uint64, fp uint32) {
	x := cuckoohash.Mix(h, seed)
	y := cuckoohash.Remix(x)
	i1 = cuckoohash.Reduce(x, m)
	return i1, second(i1, y, m), cuckoohash.Fingerprint(y, f)
}

// window bounds the distance from a key's first bucket to its second, so
// that the builder can hold each entry's other bucket as a 16-bit offset
// (offset, other) and its eviction walks stay local. Tables of at most window
// buckets draw the second bucket from the whole table.
const window = 1 << 14

// second draws the second bucket from the low half of y: uniformly from the
// whole table when it is small, else at distance 1..window-1 after i1,
// wrapping around.
func second(i1, y, m uint64) uint64 {
	if m <= window {
		return cuckoohash.Reduce(rot32(y), m)
	}
	i := i1 + 1 + (uint64(uint32(y))*(window-1))>>32
	// Wrap without a branch: in a table a few windows long the wrap is
	// taken at random, and a mispredicted branch costs more than this.
	return i - m&uint64(int64(m-1-i)>>63)
}

func rot32(y uint64) uint64 { return y<<32 | y>>32 }
