package cuckoo

import (
	"math/rand/v2"
	"testing"
)

// TestSemiSortCodes checks the code tables: 3876 distinct codes, each the
// rank of a sorted nibble tuple, and encode(decode(c)) == c.
func TestSemiSortCodes(t *testing.T) {
	seen := map[uint16]bool{}
	for c := 0; c < numCodes; c++ {
		v := decodeTable[c]
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
	for c := numCodes; c < len(decodeTable); c++ {
		if decodeTable[c] != 0 {
			t.Fatalf("code %d past the last is %x, want 0", c, decodeTable[c])
		}
	}
}

// TestSemiSortEveryCodeEveryWidth stores, for every width and every one of
// the 3876 nibble multisets, a bucket with those nibbles and random high
// bits, and reads it back through every path.
func TestSemiSortEveryCodeEveryWidth(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for f := uint(MinFingerprintBits); f <= MaxFingerprintBits; f++ {
		tb, err := newTable(numCodes, f, true)
		if err != nil {
			t.Fatal(err)
		}
		want := make([][4]uint32, numCodes)
		for c := 0; c < numCodes; c++ {
			v := decodeTable[c]
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
			tb.setBucket(uint64(c), sh)
			want[c] = s
		}
		for c := 0; c < numCodes; c++ {
			got := tb.bucket(uint64(c))
			if multiset(got) != multiset(want[c]) {
				t.Fatalf("f=%d code %d: got %x want %x", f, c, got, want[c])
			}
			if code := tb.readBits(uint64(c)*uint64(tb.bucketBits), 12); code != uint64(c) {
				t.Fatalf("f=%d: bucket %d stored code %d", f, c, code)
			}
			lo, hi := semiEncode(want[c], f)
			if multiset(semiDecode(lo, hi, f)) != multiset(want[c]) {
				t.Fatalf("f=%d code %d: semiEncode/semiDecode mismatch", f, c)
			}
			if 4*f-4 <= 64 {
				sh := want[c]
				r.Shuffle(4, func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
				if w := semiWord(sh, f); w != lo || hi != 0 {
					t.Fatalf("f=%d code %d: semiWord %x, semiEncode %x %x", f, c, w, hi, lo)
				}
			}
			for _, fp := range want[c] {
				if fp != 0 && !tb.contains(uint64(c), uint64(c), fp) {
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
