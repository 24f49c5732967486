package cuckoopolicy

import (
	"encoding/binary"
	"math/bits"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// specTuples lists the sorted nibble 4-tuples in rank order.
var specTuples = func() (t [][4]uint64) {
	for a := uint64(0); a < 16; a++ {
		for b := a; b < 16; b++ {
			for c := b; c < 16; c++ {
				for d := c; d < 16; d++ {
					t = append(t, [4]uint64{a, b, c, d})
				}
			}
		}
	}
	return t
}()

// specMayContain reads a valid block exactly as FORMAT.md describes
// the format, bit by bit, without the package's code paths. specified is
// false when one of the key's buckets holds a semi-sort code the format never
// writes, for which the doc leaves the answer unspecified.
func specMayContain(block, key []byte) (may, specified bool) {
	var m, seed uint64
	var f uint
	var semi bool
	if block[len(block)-1] == 0 { // a raw bloom block: Pebble's bloom table alone
		return bloom.FilterPolicy(0).MayContain(pebble.TableFilter, block, key), true
	}
	if block[len(block)-1] == 'c' { // the short trailer
		tr := block[len(block)-16:]
		m = uint64(binary.LittleEndian.Uint32(tr[0:]))
		seed = uint64(binary.LittleEndian.Uint16(tr[8:]))
		f = uint(tr[12])
		semi = tr[13] == 1
	} else {
		tr := block[len(block)-trailerLen:]
		m = binary.LittleEndian.Uint64(tr[0:])
		seed = binary.LittleEndian.Uint64(tr[8:])
		f = uint(tr[24])
		semi = tr[25]&1 == 1
		switch {
		case tr[25] == 2: // unfiltered: no filter
			return true, true
		case tr[25] == 4: // bloom: the table is Pebble's bloom filter's
			return bloom.FilterPolicy(0).MayContain(pebble.TableFilter, block[:len(block)-trailerLen], key), true
		case m == 0:
			return false, true
		}
	}
	bit := func(k uint64) uint64 { return uint64(block[k/8]>>(k%8)) & 1 }
	field := func(pos uint64, n uint) uint64 {
		var v uint64
		for i := uint(0); i < n; i++ {
			v |= bit(pos+uint64(i)) << i
		}
		return v
	}
	bucket := func(i uint64) (s [4]uint64) {
		if !semi {
			bb := uint64(4 * f)
			for j := range s {
				s[j] = field(i*bb+uint64(j)*uint64(f), f)
			}
			return s
		}
		bb := uint64(4*f - 4)
		code := field(i*bb, 12)
		if code >= uint64(len(specTuples)) {
			specified = false
			return s
		}
		for j := range s {
			s[j] = field(i*bb+12+uint64(j)*uint64(f-4), f-4)<<4 | specTuples[code][j]
		}
		return s
	}
	h := xxhash.Sum64(key)
	x := (h ^ seed*0x9e3779b97f4a7c15) * 0xff51afd7ed558ccd
	x ^= x >> 32
	y := x * 0xc4ceb9fe1a85ec53
	i1, _ := bits.Mul64(x, m)
	var i2 uint64
	if m <= 16384 {
		i2, _ = bits.Mul64(bits.RotateLeft64(y, 32), m)
	} else {
		i2 = (i1 + 1 + (y&0xffffffff)*16383>>32) % m
	}
	fp := ((y>>32)*(1<<f-1))>>32 + 1
	specified = true
	for _, i := range []uint64{i1, i2} {
		for _, v := range bucket(i) {
			may = may || v == fp
		}
	}
	return may, specified
}

// TestFormatMatchesSpec: FORMAT.md's description of the format
// answers exactly as MayContain does, for present and absent keys, in every
// layout.
func TestFormatMatchesSpec(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	for _, p := range []pebble.FilterPolicy{FilterPolicy(10), FilterPolicy(4), FilterPolicy(17), FilterPolicy(31),
		Policy{FingerprintBits: 12}, Policy{FingerprintBits: 16}, Policy{FingerprintBits: 29, LoadFactor: 0.9}} {
		keys := testkit.RandomKeys(r, 700)
		block := build(p, keys)
		if p == FilterPolicy(10) {
			// 40 keys at 10 bits a key: a raw bloom block.
			few := testkit.RandomKeys(r, 40)
			raw := build(p, few)
			if !isRawBloom(raw) {
				t.Fatal("40 keys at 10 bits a key: not a raw bloom block")
			}
			for _, ks := range []*testkit.Keys{few, testkit.RandomKeys(r, 3000)} {
				for i := range ks.Len() {
					got := p.MayContain(pebble.TableFilter, raw, ks.At(i))
					if want, ok := specMayContain(raw, ks.At(i)); got != want || !ok {
						t.Fatalf("raw bloom block: key %x: MayContain %v, spec %v", ks.At(i), got, want)
					}
				}
			}
		}
		if !isShort(block) {
			t.Fatalf("%v: the writer wrote a long trailer", p)
		}
		if p == FilterPolicy(4) {
			// More than 16384 buckets: the second bucket comes from the window.
			keys = testkit.RandomKeys(r, 100000)
			block = build(p, keys)
			if info, _ := Inspect(block); info.Buckets <= 16384 {
				t.Fatalf("%d buckets: the window is not exercised", info.Buckets)
			}
		}
		absent := testkit.RandomKeys(r, 3000)
		// The same table with the long trailer (versions 1 and 2) reads
		// the same.
		for _, b := range [][]byte{block, longBlock(block), withVersion(block, formatV1)} {
			for _, ks := range []*testkit.Keys{keys, absent} {
				for i := range ks.Len() {
					got := p.MayContain(pebble.TableFilter, b, ks.At(i))
					if want, ok := specMayContain(b, ks.At(i)); got != want || !ok {
						t.Fatalf("%v, %d-byte block: key %x: MayContain %v, spec %v", p, len(b), ks.At(i), got, want)
					}
				}
			}
		}
	}
}
