package cuckoohash

import (
	"math/rand/v2"
	"testing"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// TestSemiSortCodes checks the code tables: 3876 distinct codes, each the
// rank of a sorted nibble tuple, and encode(decode(c)) == c.
func TestSemiSortCodes(t *testing.T) {
	seen := map[uint16]bool{}
	for c := 0; c < NumCodes; c++ {
		v := DecodeTable[c]
		a, b, d, e := v&15, v>>4&15, v>>8&15, v>>12
		if a > b || b > d || d > e {
			t.Fatalf("code %d decodes to unsorted %x", c, v)
		}
		if seen[v] {
			t.Fatalf("code %d repeats tuple %x", c, v)
		}
		seen[v] = true
		if got := encodeTable[v]; int(got) != c {
			t.Fatalf("encode(decode(%d)) = %d", c, got)
		}
	}
	for c := NumCodes; c < len(DecodeTable); c++ {
		if DecodeTable[c] != 0 {
			t.Fatalf("code %d past the last is %x, want 0", c, DecodeTable[c])
		}
	}
}

// TestSemiSortEveryCodeEveryWidth stores, for every width and every one of
// the 3876 nibble multisets, a bucket with those nibbles and random high
// bits, and reads it back through every path.
func TestSemiSortEveryCodeEveryWidth(t *testing.T) {
	seed := testkit.Seed(t)
	r := rand.New(rand.NewPCG(seed, 1))
	for f := uint(MinFingerprintBits); f <= MaxFingerprintBits; f++ {
		tb, err := NewTable(NumCodes, f, true)
		if err != nil {
			t.Fatal(err)
		}
		want := make([][4]uint32, NumCodes)
		for c := 0; c < NumCodes; c++ {
			v := DecodeTable[c]
			var s [4]uint32
			for j := range s {
				hi := uint32(0)
				if f > 4 {
					hi = r.Uint32() & (1<<(f-4) - 1)
				}
				s[j] = hi<<4 | uint32(v>>(4*j)&15)
			}
			// Store in a shuffled order; the table sorts.
			sh := s
			r.Shuffle(4, func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
			tb.SetBucket(uint64(c), sh)
			want[c] = s
		}
		for c := 0; c < NumCodes; c++ {
			got := tb.Bucket(uint64(c))
			if multiset(got) != multiset(want[c]) {
				t.Fatalf("f=%d code %d: got %x want %x", f, c, got, want[c])
			}
			if code := tb.ReadBits(uint64(c)*uint64(tb.BucketBits), 12); code != uint64(c) {
				t.Fatalf("f=%d: bucket %d stored code %d", f, c, code)
			}
			lo, hi := semiEncode(want[c], f)
			if multiset(semiDecode(lo, hi, f)) != multiset(want[c]) {
				t.Fatalf("f=%d code %d: semiEncode/semiDecode mismatch", f, c)
			}
			if 4*f-4 <= 64 {
				sh := want[c]
				r.Shuffle(4, func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
				if w := SemiWord(sh, f); w != lo || hi != 0 {
					t.Fatalf("f=%d code %d: semiWord %x, semiEncode %x %x", f, c, w, hi, lo)
				}
			}
			for _, fp := range want[c] {
				if fp != 0 && !tb.Contains(uint64(c), uint64(c), fp) {
					t.Fatalf("f=%d code %d: contains(%x) false", f, c, fp)
				}
				if fp != 0 && f <= 16 {
					w := tb.rawWord(uint64(c))
					if !probe(w, w, fp, f, true) {
						t.Fatalf("f=%d code %d: probe(%x) false", f, c, fp)
					}
				}
			}
		}
	}
}

// multiset returns the sorted values, for comparing buckets.
func multiset(s [4]uint32) [4]uint32 {
	for i := 1; i < 4; i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// TestOrder checks the branch-free compare-exchange against min and max on
// the extremes of uint32 and on random pairs.
func TestOrder(t *testing.T) {
	edge := []uint32{0, 1, 2, 1<<31 - 1, 1 << 31, 1<<31 + 1, 1<<32 - 2, 1<<32 - 1}
	r := rand.New(rand.NewPCG(7, 7))
	var pairs [][2]uint32
	for _, a := range edge {
		for _, b := range edge {
			pairs = append(pairs, [2]uint32{a, b})
		}
	}
	for range 100000 {
		pairs = append(pairs, [2]uint32{r.Uint32(), r.Uint32()})
	}
	for _, p := range pairs {
		lo, hi := order(p[0], p[1])
		if lo != min(p[0], p[1]) || hi != max(p[0], p[1]) {
			t.Fatalf("order(%#x, %#x) = %#x, %#x", p[0], p[1], lo, hi)
		}
	}
}

// semiEncode packs four fingerprints of f bits (4 <= f <= 32) into a 12-bit
// code and four (f-4)-bit remainders, returned as lo (the first 64 bits) and
// hi (the rest, nonzero only when 4f-4 > 64).
func semiEncode(s [4]uint32, f uint) (lo, hi uint64) {
	sort4(&s)
	nibs := uint16(s[0]&15) | uint16(s[1]&15)<<4 | uint16(s[2]&15)<<8 | uint16(s[3]&15)<<12
	lo = uint64(encodeTable[nibs])
	r := f - 4
	pos := uint(12)
	for j := 0; j < 4; j++ {
		v := uint64(s[j] >> 4)
		lo, hi = orBits(lo, hi, pos, v)
		pos += r
	}
	return lo, hi
}

// semiDecode is the inverse of semiEncode.
func semiDecode(lo, hi uint64, f uint) (s [4]uint32) {
	nibs := DecodeTable[lo&0xfff]
	r := f - 4
	pos := uint(12)
	for j := 0; j < 4; j++ {
		v := getBits(lo, hi, pos, r)
		s[j] = uint32(v)<<4 | uint32(nibs>>(4*j)&15)
		pos += r
	}
	return s
}

// orBits ORs the low n bits of v at bit position pos of the 128-bit value
// (lo, hi).
func orBits(lo, hi uint64, pos uint, v uint64) (uint64, uint64) {
	if pos < 64 {
		lo |= v << pos
		if pos > 0 {
			hi |= v >> (64 - pos)
		}
	} else {
		hi |= v << (pos - 64)
	}
	return lo, hi
}

// getBits reads n <= 32 bits at position pos of the 128-bit value (lo, hi).
func getBits(lo, hi uint64, pos, n uint) uint64 {
	var v uint64
	if pos < 64 {
		v = lo >> pos
		if pos > 0 {
			v |= hi << (64 - pos)
		}
	} else {
		v = hi >> (pos - 64)
	}
	return v & (1<<n - 1)
}
