package cuckoohash

import "math"

// SpreadNarrow[r][s] moves bit j of the slot mask s to bit j*r+r-1, for
// remainders of r < 5 bits, where one multiply would carry between lanes.
var SpreadNarrow = func() (t [5][16]uint64) {
	for r := 1; r < 5; r++ {
		for s := range 16 {
			for j := range 4 {
				if s>>j&1 != 0 {
					t[r][s] |= 1 << (j*r + r - 1)
				}
			}
		}
	}
	return t
}()

// probe reports whether either of two fast buckets (4f <= 64), as loaded
// and shifted down to bit 0, holds fp. Bits above a bucket are ignored.
func probe(w1, w2 uint64, fp uint32, f uint, semi bool) bool {
	if semi && f > 4 {
		// Match the (f-4)-bit remainders and the decoded low nibbles
		// separately, each as a mask of slots, without branches.
		r := (f - 4) & 63
		r2, r3, r1 := (2*r)&63, (3*r)&63, (r-1)&63
		onesR := uint64(1) | 1<<r | 1<<r2 | 1<<r3
		lanes := onesR * (1<<r - 1)
		highR := onesR << r1
		lowR := lanes &^ highR
		q := uint64(fp>>4) * onesR
		x1 := (w1>>12 ^ q) & lanes
		x2 := (w2>>12 ^ q) & lanes
		z1 := (^((x1&lowR + lowR) | x1 | lowR) & highR) >> r1
		z2 := (^((x2&lowR + lowR) | x2 | lowR) & highR) >> r1
		// nibbleSlots gives, for the bucket's code and fp's low nibble, the
		// slots holding that nibble as 4 bits; spread them to z's layout.
		sh := uint64(fp&15) * 4
		m1 := NibbleSlots[w1&0xfff] >> sh & 15
		m2 := NibbleSlots[w2&0xfff] >> sh & 15
		var s1, s2 uint64
		if r >= 5 {
			// No two partial products overlap: one multiply spreads.
			sp := uint64(1) | 1<<(r-1) | 1<<((2*r-2)&63) | 1<<((3*r-3)&63)
			s1, s2 = m1*sp&onesR, m2*sp&onesR
		} else {
			s1, s2 = SpreadNarrow[r][m1]>>r1, SpreadNarrow[r][m2]>>r1
		}
		return z1&s1|z2&s2 != 0
	}
	if semi {
		// f = 4: a bucket is its 12-bit code alone.
		nib := uint16(fp & 15)
		return HasNibble(DecodeTable[w1&0xfff], nib) || HasNibble(DecodeTable[w2&0xfff], nib)
	}
	f &= 63
	ones := uint64(1) | 1<<f | 1<<((2*f)&63) | 1<<((3*f)&63)
	lanes := uint64(math.MaxUint64) >> ((64 - 4*f) & 63)
	q := uint64(fp) * ones
	highs := ones << ((f - 1) & 63)
	x1 := (w1 ^ q) & lanes
	x2 := (w2 ^ q) & lanes
	return ((x1-ones)&^x1|(x2-ones)&^x2)&highs != 0
}

// HasNibble reports whether any of the four nibbles of n equals nib.
func HasNibble(n, nib uint16) bool {
	x := n ^ nib*0x1111
	return (x-0x1111)&^x&0x8888 != 0
}

// NibbleSlots[c] holds, in bits 4n..4n+3, the slots of semi-sorted code c
// whose low nibble is n (32 KB). It is filled with decodeTable, in
// semisort.go.
var NibbleSlots [1 << 12]uint64
