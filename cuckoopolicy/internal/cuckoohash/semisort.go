package cuckoohash

import "math/bits"

// Semi-sorting (Fan et al., section 5.2): a bucket's four fingerprints are
// sorted by their low 4 bits. The sorted multiset of four nibbles takes one of
// C(19,4) = 3876 values, stored as a 12-bit code instead of 16 bits, so a
// bucket of four f-bit fingerprints takes 4f-4 bits. The high f-4 bits of each
// fingerprint follow in the sorted order.

const NumCodes = 3876

// DecodeTable[c] holds the four sorted nibbles of code c, slot j in bits
// 4j..4j+3. Nibble tuples are numbered in lexicographic order. It has 4096
// entries so that any 12-bit value indexes it without a bounds check; codes
// past 3875 appear only in corrupt blocks and decode as four zero nibbles.
var DecodeTable [1 << 12]uint16

// encodeTable maps four sorted nibbles packed as in decodeTable to their code.
// Entries for unsorted tuples are unused.
var encodeTable [1 << 16]uint16

func init() {
	c := 0
	for a := 0; a < 16; a++ {
		for b := a; b < 16; b++ {
			for d := b; d < 16; d++ {
				for e := d; e < 16; e++ {
					v := uint16(a | b<<4 | d<<8 | e<<12)
					DecodeTable[c] = v
					encodeTable[v] = uint16(c)
					c++
				}
			}
		}
	}
	if c != NumCodes {
		panic("cuckoohash: semi-sort table has the wrong size")
	}
	for c := 0; c < NumCodes; c++ {
		for j := 0; j < Slots; j++ {
			n := DecodeTable[c] >> (4 * j) & 15
			NibbleSlots[c] |= 1 << (4*uint(n) + uint(j))
		}
	}
}

// NibbleKey is a fingerprint's sort key in a semi-sorted bucket: rotated so
// that its low nibble leads, then its high bits. 0 (an empty slot) sorts
// first.
func NibbleKey(fp uint32) uint32 { return bits.RotateLeft32(fp, -4) }

// byNibble returns a bucket's fingerprints as nibbleKeys in ascending order:
// sorted by nibble (ties by the high bits). The
// sorting network's compare-exchanges (order) have no branch: the order of
// fingerprints is random, and a branch on it would be mispredicted half the
// time.
func byNibble(a, b, c, d uint32) (uint32, uint32, uint32, uint32) {
	a, b, c, d = NibbleKey(a), NibbleKey(b), NibbleKey(c), NibbleKey(d)
	a, b = order(a, b)
	c, d = order(c, d)
	a, c = order(a, c)
	b, d = order(b, d)
	b, c = order(b, c)
	return a, b, c, d
}

// order returns min(a, b), max(a, b) computed with arithmetic: the compiler
// turns a pair of min and max into a compare and branches, which the random
// order of fingerprints mispredicts half the time.
func order(a, b uint32) (uint32, uint32) {
	less := uint32((uint64(a) - uint64(b)) >> 32) // all ones if a < b
	lo := b ^ (a^b)&less
	return lo, a ^ b ^ lo
}

// sort4 sorts a bucket's fingerprints by their low nibble.
func sort4(s *[4]uint32) {
	a, b, c, d := byNibble(s[0], s[1], s[2], s[3])
	*s = [4]uint32{bits.RotateLeft32(a, 4), bits.RotateLeft32(b, 4), bits.RotateLeft32(c, 4), bits.RotateLeft32(d, 4)}
}

// SemiWord returns the semi-sorted bucket holding the fingerprints s, for
// buckets of at most 64 bits (f <= 17): the 12-bit code of the sorted low
// nibbles, then the four (f-4)-bit remainders in that order. It has no
// branch: the bucket is assembled from the rotated fingerprints byNibble
// sorts.
func SemiWord(s [4]uint32, f uint) uint64 {
	a, b, c, d := byNibble(s[0], s[1], s[2], s[3])
	nibs := uint16(a>>28) | uint16(b>>28)<<4 | uint16(c>>28)<<8 | uint16(d>>28)<<12
	const high = 1<<28 - 1 // the f-4 high bits of a fingerprint, f <= 32
	r := (f - 4) & 63
	return uint64(encodeTable[nibs]) | uint64(a&high)<<12 | uint64(b&high)<<((12+r)&63) |
		uint64(c&high)<<((12+2*r)&63) | uint64(d&high)<<((12+3*r)&63)
}
