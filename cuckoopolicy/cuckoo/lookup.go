package cuckoo

//go:generate go run gen_lookup.go

import "math"

// Static is a read-only view of a static filter's packed table, as Build
// writes it. The zero Static is an empty filter. Its methods do not allocate
// and are safe for concurrent use; it never modifies the bytes it views.
type Static struct {
	data []byte
	m    uint64
	seed uint64
	f    uint
	semi bool
}

// NewStatic validates the parameters against data (the packed table alone)
// and returns a view of it. It returns an error, never panics, on any
// inconsistency: an unsupported width or a length that does not match the
// bucket count. It does not allocate.
func NewStatic(data []byte, p StaticParams) (Static, error) {
	if !validWidth(p.FingerprintBits) {
		return Static{}, errTableParams
	}
	n, ok := tableBytes(p.Buckets, uint(p.FingerprintBits), p.SemiSort)
	if !ok || n != len(data) {
		return Static{}, errTableParams
	}
	return Static{data: data, m: p.Buckets, seed: p.Seed, f: uint(p.FingerprintBits), semi: p.SemiSort}, nil
}

// StaticSize returns the length in bytes of the packed table for p, and false
// if p is not a valid table.
func StaticSize(p StaticParams) (int, bool) {
	if !validWidth(p.FingerprintBits) {
		return 0, false
	}
	return tableBytes(p.Buckets, uint(p.FingerprintBits), p.SemiSort)
}

// Contains reports whether the key with hash h (from Hash) may be in the
// filter. An empty filter contains nothing.
func (s *Static) Contains(h uint64) bool {
	if s.m == 0 {
		return false
	}
	return Lookup(s.data, s.m, s.seed, s.f, s.semi, h)
}

// Lookup reports whether the static table in data (the packed table alone,
// padding included), of m buckets of f-bit fingerprints, semi-sorted if semi,
// placed with seed, may hold the key with hash h. It is NewStatic and
// Contains in one call without a struct, for hot paths. When the parameters
// do not describe a table of len(data) bytes it answers true: a table it
// cannot read cannot vouch for absence. m == 0 with empty data is the empty
// filter and answers false.
//
// Lookup is small enough to inline: one indirect call to the function for
// the width and layout, which checks the rest.
func Lookup(data []byte, m, seed uint64, f uint, semi bool, h uint64) bool {
	// lookupIndex, spelled out: calling it would cost Lookup its inlining.
	i := min(f, MaxFingerprintBits+1)
	if semi {
		i += MaxFingerprintBits + 2
	}
	return lookups[i](data, m, seed, h)
}

// lookupFunc is Lookup for one fingerprint width and layout.
type lookupFunc func(data []byte, m, seed, h uint64) bool

// lookups holds Lookup's function for each fingerprint width and layout, at
// lookupIndex(f, semi); init fills it.
var lookups [2 * (MaxFingerprintBits + 2)]lookupFunc

// lookupIndex is the index in lookups of the function for f-bit
// fingerprints, semi-sorted if semi: every width above MaxFingerprintBits
// shares the entry of MaxFingerprintBits+1.
func lookupIndex(f uint, semi bool) uint {
	i := min(f, MaxFingerprintBits+1)
	if semi {
		i += MaxFingerprintBits + 2
	}
	return i
}

// init fills lookups: a width outside [MinFingerprintBits,
// MaxFingerprintBits] answers true, widths up to 16 get the generated
// functions (lookup_fast.go), wider ones read their buckets slot by slot.
func init() {
	for _, semi := range []bool{false, true} {
		fast := fastPlain
		if semi {
			fast = fastSemi
		}
		for f := range uint(MaxFingerprintBits + 2) {
			var fn lookupFunc
			switch {
			case f < MinFingerprintBits || f > MaxFingerprintBits:
				fn = func([]byte, uint64, uint64, uint64) bool { return true }
			case f-MinFingerprintBits < uint(len(fast)):
				fn = fast[f-MinFingerprintBits]
			default:
				fn = func(data []byte, m, seed, h uint64) bool {
					return lookupWide(data, m, seed, f, semi, h)
				}
			}
			lookups[lookupIndex(f, semi)] = fn
		}
	}
}

// checkLength reports whether data is a table of m buckets of bb bits each,
// padding included, with 0 < m <= MaxBuckets. When it does not hold, a
// lookup answers unreadable(data, m).
func checkLength(data []byte, m, bb uint64) bool {
	return m-1 < MaxBuckets && uint64(len(data)) == (m*bb+7)>>3+padBytes
}

// unreadable is a lookup's answer for data that is not a table of m
// buckets: true (it cannot vouch for absence), except for the empty filter,
// m == 0 with no data.
func unreadable(data []byte, m uint64) bool { return m != 0 || len(data) != 0 }

// lookupWide is Lookup for fingerprints wider than 16 bits, whose buckets
// take more than one 8-byte load.
func lookupWide(data []byte, m, seed uint64, f uint, semi bool, h uint64) bool {
	bb := uint64(4 * f)
	if semi {
		bb -= 4
	}
	if !checkLength(data, m, bb) {
		return unreadable(data, m)
	}
	x := mix(h, seed)
	y := remix(x)
	i1 := reduce(x, m)
	t := table{data: data, m: m, f: f, semi: semi, bucketBits: uint(bb)}
	return t.containsSlow(i1, second(i1, y, m), fingerprint(y, f))
}

// b2i is 1 for true and 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// load returns the 8 bytes of data from bit offset p on, shifted down to bit
// 0. The caller guarantees they are in data: Lookup has checked the table's
// length against its bucket count, and the padding covers the last bucket.
func load(data []byte, p uint64) uint64 {
	return loadWord(data, p>>3) >> (p & 7)
}

// spreadNarrow[r][s] moves bit j of the slot mask s to bit j*r+r-1, for
// remainders of r < 5 bits, where one multiply would carry between lanes.
var spreadNarrow = func() (t [5][16]uint64) {
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
		m1 := nibbleSlots[w1&0xfff] >> sh & 15
		m2 := nibbleSlots[w2&0xfff] >> sh & 15
		var s1, s2 uint64
		if r >= 5 {
			// No two partial products overlap: one multiply spreads.
			sp := uint64(1) | 1<<(r-1) | 1<<((2*r-2)&63) | 1<<((3*r-3)&63)
			s1, s2 = m1*sp&onesR, m2*sp&onesR
		} else {
			s1, s2 = spreadNarrow[r][m1]>>r1, spreadNarrow[r][m2]>>r1
		}
		return z1&s1|z2&s2 != 0
	}
	if semi {
		// f = 4: a bucket is its 12-bit code alone.
		nib := uint16(fp & 15)
		return hasNibble(decodeTable[w1&0xfff], nib) || hasNibble(decodeTable[w2&0xfff], nib)
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

// hasNibble reports whether any of the four nibbles of n equals nib.
func hasNibble(n, nib uint16) bool {
	x := n ^ nib*0x1111
	return (x-0x1111)&^x&0x8888 != 0
}

// nibbleSlots[c] holds, in bits 4n..4n+3, the slots of semi-sorted code c
// whose low nibble is n (32 KB). It is filled with decodeTable, in
// semisort.go.
var nibbleSlots [1 << 12]uint64
