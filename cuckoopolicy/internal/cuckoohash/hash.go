package cuckoohash

import (
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// Hash returns the 64-bit xxhash of key, the one hash every filter in this
// module is addressed by. It is stable across processes and releases: filters
// live on disk.
func Hash(key []byte) uint64 { return xxhash.Sum64(key) }

// Mix derives the addressing value of a hash under a seed. Hashes come from
// xxhash64 and are already well mixed; the seed is folded in with one
// multiply so that a rebuild with another seed moves every key without
// hashing keys again.
func Mix(h, seed uint64) uint64 {
	x := (h ^ seed*0x9e3779b97f4a7c15) * 0xff51afd7ed558ccd
	return x ^ x>>32
}

// Remix derives a second value from a mixed hash: its high half gives the
// fingerprint and its low half the static filter's second bucket. It is one
// multiply, so its input must already be well mixed (a mix output): on small
// or structured integers its outputs fall on a lattice.
func Remix(x uint64) uint64 { return x * 0xc4ceb9fe1a85ec53 }

// Reduce maps x to [0, m) without division: the high word of x*m.
func Reduce(x, m uint64) uint64 {
	hi, _ := bits.Mul64(x, m)
	return hi
}

// Fingerprint maps the top 32 bits of y to [1, 2^f): every nonzero value
// gets the same weight, and 0 stays free to mark an empty slot.
func Fingerprint(y uint64, f uint) uint32 {
	return uint32(((y>>32)*(1<<(f&63)-1))>>32) + 1
}
