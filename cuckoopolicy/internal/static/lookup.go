package static

import "github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"

//go:generate go run gen_lookup.go

// Size returns the length in bytes of the packed table for p, padding
// included, and false if p is not a valid table.
func Size(p Params) (int, bool) {
	if !cuckoohash.ValidWidth(p.FingerprintBits) {
		return 0, false
	}
	return cuckoohash.TableBytes(p.Buckets, uint(p.FingerprintBits), p.SemiSort)
}

// Lookup reports whether the static table in data (the packed table alone,
// padding included), of m buckets of f-bit fingerprints, semi-sorted if semi,
// placed with seed, may hold the key with hash h. When the parameters
// do not describe a table of len(data) bytes it answers true: a table it
// cannot read cannot vouch for absence. m == 0 with empty data is the empty
// filter and answers false.
//
// Lookup is small enough to inline: one indirect call to the function for
// the width and layout, which checks the rest.
func Lookup(data []byte, m, seed uint64, f uint, semi bool, h uint64) bool {
	// lookupIndex, spelled out: calling it would cost Lookup its inlining.
	i := min(f, cuckoohash.MaxFingerprintBits+1)
	if semi {
		i += cuckoohash.MaxFingerprintBits + 2
	}
	return lookups[i](data, m, seed, h)
}

// lookupFunc is Lookup for one fingerprint width and layout.
type lookupFunc func(data []byte, m, seed, h uint64) bool

// lookups holds Lookup's function for each fingerprint width and layout, at
// lookupIndex(f, semi); init fills it.
var lookups [2 * (cuckoohash.MaxFingerprintBits + 2)]lookupFunc

// lookupIndex is the index in lookups of the function for f-bit
// fingerprints, semi-sorted if semi: every width above MaxFingerprintBits
// shares the entry of MaxFingerprintBits+1.
func lookupIndex(f uint, semi bool) uint {
	i := min(f, cuckoohash.MaxFingerprintBits+1)
	if semi {
		i += cuckoohash.MaxFingerprintBits + 2
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
		for f := range uint(cuckoohash.MaxFingerprintBits + 2) {
			var fn lookupFunc
			switch {
			case f < cuckoohash.MinFingerprintBits || f > cuckoohash.MaxFingerprintBits:
				fn = func([]byte, uint64, uint64, uint64) bool { return true }
			case f-cuckoohash.MinFingerprintBits < uint(len(fast)):
				fn = fast[f-cuckoohash.MinFingerprintBits]
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
	return m-1 < cuckoohash.MaxBuckets && uint64(len(data)) == (m*bb+7)>>3+cuckoohash.PadBytes
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
	x := cuckoohash.Mix(h, seed)
	y := cuckoohash.Remix(x)
	i1 := cuckoohash.Reduce(x, m)
	t := cuckoohash.Table{Data: data, M: m, F: f, Semi: semi, BucketBits: uint(bb)}
	return t.ContainsSlow(i1, second(i1, y, m), cuckoohash.Fingerprint(y, f))
}

// load returns the 8 bytes of data from bit offset p on, shifted down to bit
// 0. The caller guarantees they are in data: Lookup has checked the table's
// length against its bucket count, and the padding covers the last bucket.
func load(data []byte, p uint64) uint64 {
	return cuckoohash.LoadWord(data, p>>3) >> (p & 7)
}
