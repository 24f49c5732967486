package cuckoo

import (
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// Hash returns the 64-bit xxhash of key, the one hash every filter in this
// module is addressed by. It is stable across processes and releases: filters
// live on disk.
func Hash(key []byte) uint64 { return xxhash.Sum64(key) }

// mix scrambles h with seed (the 64-bit finalizer of MurmurHash3). A rebuild
// with another seed remixes the stored 64-bit hashes; keys are never hashed
// again.
func mix(h, seed uint64) uint64 {
	x := h ^ (seed * 0x9e3779b97f4a7c15)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// remix derives a second, independent 64-bit value from a mixed hash.
func remix(x uint64) uint64 {
	x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// reduce maps x to [0, m) without division: the high word of x*m.
func reduce(x, m uint64) uint64 {
	hi, _ := bits.Mul64(x, m)
	return hi
}

// fingerprint maps the top 32 bits of y to [1, 2^f): every nonzero value
// gets the same weight, and 0 stays free to mark an empty slot.
func fingerprint(y uint64, f uint) uint32 {
	return uint32(((y>>32)*(1<<f-1))>>32) + 1
}

// staticAddr is the addressing of the static (sstable) filter: two buckets
// drawn independently from the hash, and a fingerprint from bits that neither
// index uses (for m <= 2^32).
func staticAddr(h, seed, m uint64, f uint) (i1, i2 uint64, fp uint32) {
	x := mix(h, seed)
	y := remix(x)
	return reduce(x, m), reduce(rot32(y), m), fingerprint(y, f)
}
