package cuckoo

import (
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// Hash returns the 64-bit xxhash of key, the one hash every filter in this
// module is addressed by. It is stable across processes and releases: filters
// live on disk.
func Hash(key []byte) uint64 { return xxhash.Sum64(key) }

// mix derives the addressing value of a hash under a seed. Hashes come from
// xxhash64 and are already well mixed; the seed is folded in with one
// multiply so that a rebuild with another seed moves every key without
// hashing keys again.
func mix(h, seed uint64) uint64 {
	x := (h ^ seed*0x9e3779b97f4a7c15) * 0xff51afd7ed558ccd
	return x ^ x>>32
}

// remix derives a second value from a mixed hash: its high half gives the
// fingerprint and its low half the static filter's second bucket. It is one
// multiply, so its input must already be well mixed (a mix output): on small
// or structured integers its outputs fall on a lattice.
func remix(x uint64) uint64 { return x * 0xc4ceb9fe1a85ec53 }

// reduce maps x to [0, m) without division: the high word of x*m.
func reduce(x, m uint64) uint64 {
	hi, _ := bits.Mul64(x, m)
	return hi
}

// fingerprint maps the top 32 bits of y to [1, 2^f): every nonzero value
// gets the same weight, and 0 stays free to mark an empty slot.
func fingerprint(y uint64, f uint) uint32 {
	return uint32(((y>>32)*(1<<(f&63)-1))>>32) + 1
}

// staticAddr is the addressing of the static (sstable) filter: two buckets
// drawn independently from the hash (the second within the window), and a
// fingerprint from bits that neither index uses (for m <= 2^32). Lookup's
// generated fast path (lookup_fast.go) and the builder's placement pass spell
// it out inline, since it is too large to inline and both are hot loops; the
// tests check them against it.
func staticAddr(h, seed, m uint64, f uint) (i1, i2 uint64, fp uint32) {
	x := mix(h, seed)
	y := remix(x)
	i1 = reduce(x, m)
	return i1, second(i1, y, m), fingerprint(y, f)
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
		return reduce(rot32(y), m)
	}
	i := i1 + 1 + (uint64(uint32(y))*(window-1))>>32
	// Wrap without a branch: in a table a few windows long the wrap is
	// taken at random, and a mispredicted branch costs more than this.
	return i - m&uint64(int64(m-1-i)>>63)
}
