package cuckoohash

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
)

// Slots per bucket.
const Slots = 4

// Fingerprint widths the tables support.
const (
	MinFingerprintBits = 4
	MaxFingerprintBits = 32
)

// PadBytes follow the packed buckets so that every bucket (or, for wide
// buckets, every slot) is read with one unaligned 8-byte load.
const PadBytes = 8

// Table is an array of m buckets of four f-bit fingerprints, packed back to
// back at bit offset i*bucketBits, plain (4f bits a bucket) or semi-sorted
// (4f-4 bits). Fingerprint 0 marks an empty slot. The zero Table has no
// buckets.
type Table struct {
	Data       []byte // packed buckets, then padBytes
	M          uint64
	F          uint
	Semi       bool
	BucketBits uint
	// Fast: 4f <= 64, so a bucket, at any bit offset its index gives it, is
	// one 8-byte load and its fingerprints fit one 64-bit word.
	Fast bool
}

var errParams = errors.New("cuckoohash: bad table parameters")

// bucketBitsFor returns the size in bits of one bucket.
func bucketBitsFor(f uint, semi bool) uint {
	if semi {
		return Slots*f - 4
	}
	return Slots * f
}

// TableBytes returns the size in bytes of a table of m buckets, padding
// included, and false if it does not fit in an int.
func TableBytes(m uint64, f uint, semi bool) (int, bool) {
	if m == 0 {
		return 0, true
	}
	if m > MaxBuckets || f > MaxFingerprintBits {
		return 0, false
	}
	n := (m*uint64(bucketBitsFor(f, semi))+7)/8 + PadBytes
	if n > math.MaxInt {
		return 0, false
	}
	return int(n), true
}

// MaxBuckets bounds a table's bucket count (2^48 buckets, far beyond any
// memory), so that sizes never overflow and need no division to check.
const MaxBuckets = 1 << 48

func ValidWidth(f int) bool { return f >= MinFingerprintBits && f <= MaxFingerprintBits }

// NewTable allocates an empty table.
func NewTable(m uint64, f uint, semi bool) (Table, error) {
	n, ok := TableBytes(m, f, semi)
	if !ok || !ValidWidth(int(f)) {
		return Table{}, errParams
	}
	return TableOn(make([]byte, n), m, f, semi)
}

// TableOn wraps data, which must be exactly tableBytes(m, f, semi) long.
func TableOn(data []byte, m uint64, f uint, semi bool) (Table, error) {
	n, ok := TableBytes(m, f, semi)
	if !ok || !ValidWidth(int(f)) || len(data) != n {
		return Table{}, errParams
	}
	t := Table{Data: data, M: m, F: f, Semi: semi, BucketBits: bucketBitsFor(f, semi)}
	t.Fast = Slots*f <= 64
	return t, nil
}

func (t *Table) load(off uint64) uint64 { return binary.LittleEndian.Uint64(t.Data[off:]) }

// ReadBits reads n <= 57 bits at bit position pos.
func (t *Table) ReadBits(pos uint64, n uint) uint64 {
	return t.load(pos>>3) >> (pos & 7) & (1<<n - 1)
}

// writeBits stores the low n <= 57 bits of v at bit position pos.
func (t *Table) writeBits(pos uint64, n uint, v uint64) {
	off := pos >> 3
	sh := pos & 7
	mask := uint64(1)<<n - 1
	w := t.load(off)
	w = w&^(mask<<sh) | (v&mask)<<sh
	binary.LittleEndian.PutUint64(t.Data[off:], w)
}

// Bucket returns the fingerprints of Bucket i: in stored order for a plain
// table, sorted by low nibble for a semi-sorted one.
func (t *Table) Bucket(i uint64) [4]uint32 {
	if t.Fast {
		return t.bucketFast(i)
	}
	return t.bucketSlow(i)
}

// bucketSlow is bucket for any width, one slot at a time.
func (t *Table) bucketSlow(i uint64) (s [4]uint32) {
	pos := i * uint64(t.BucketBits)
	if !t.Semi {
		for j := range s {
			s[j] = uint32(t.ReadBits(pos+uint64(j)*uint64(t.F), t.F))
		}
		return s
	}
	nibs := DecodeTable[t.ReadBits(pos, 12)]
	r := t.F - 4
	for j := range s {
		v := t.ReadBits(pos+12+uint64(j)*uint64(r), r)
		s[j] = uint32(v)<<4 | uint32(nibs>>(4*j)&15)
	}
	return s
}

// SetBucket replaces the fingerprints of bucket i.
func (t *Table) SetBucket(i uint64, s [4]uint32) {
	if t.Fast {
		t.setBucketFast(i, s)
		return
	}
	t.setBucketSlow(i, s)
}

// setBucketSlow is setBucket for any width, one slot at a time.
func (t *Table) setBucketSlow(i uint64, s [4]uint32) {
	pos := i * uint64(t.BucketBits)
	if !t.Semi {
		for j := range s {
			t.writeBits(pos+uint64(j)*uint64(t.F), t.F, uint64(s[j]))
		}
		return
	}
	sort4(&s)
	nibs := uint16(s[0]&15) | uint16(s[1]&15)<<4 | uint16(s[2]&15)<<8 | uint16(s[3]&15)<<12
	t.writeBits(pos, 12, uint64(encodeTable[nibs]))
	r := t.F - 4
	for j := range s {
		t.writeBits(pos+12+uint64(j)*uint64(r), r, uint64(s[j]>>4))
	}
}

// Word returns bucket i of a fast table as one Word, shifted down to bit 0;
// the bits above the bucket belong to the next one.
func (t *Table) Word(i uint64) uint64 {
	p := i * uint64(t.BucketBits)
	return t.load(p>>3) >> (p & 7)
}

// setWord stores the low bucketBits bits of w as bucket i of a fast table.
// A bucket's size is a multiple of 4 bits, so it starts at bit 0 or 4 of a
// byte, and 4 + bucketBits <= 64 unless bucketBits is 64, whose buckets are
// byte-aligned: one 8-byte read-modify-write covers it.
func (t *Table) setWord(i, w uint64) {
	p := i * uint64(t.BucketBits)
	off, sh := p>>3, p&7
	mask := (uint64(1)<<t.BucketBits - 1) << sh // all ones when bucketBits is 64
	binary.LittleEndian.PutUint64(t.Data[off:], t.load(off)&^mask|w<<sh&mask)
}

// bucketFast is bucket for a fast table: one load.
func (t *Table) bucketFast(i uint64) [4]uint32 { return t.unpack(t.Word(i)) }

// unpack returns the fingerprints of a fast table's bucket as word returns
// it.
func (t *Table) unpack(w uint64) (s [4]uint32) {
	if !t.Semi {
		f := t.F & 31
		mask := uint64(1)<<f - 1
		for j := range s {
			s[j] = uint32(w >> (uint(j) * f) & mask)
		}
		return s
	}
	nibs := DecodeTable[w&0xfff]
	r := (t.F - 4) & 15
	mask := uint64(1)<<r - 1
	for j := range s {
		s[j] = uint32(w>>(12+uint(j)*r)&mask)<<4 | uint32(nibs>>(4*j)&15)
	}
	return s
}

// setBucketFast is setBucket for a fast table: one read-modify-write.
func (t *Table) setBucketFast(i uint64, s [4]uint32) {
	if t.Semi {
		t.setWord(i, SemiWord(s, t.F))
		return
	}
	t.setWord(i, PlainWord(s, t.F))
}

// PlainWord returns the word of a plain fast table's bucket holding s: the
// four f-bit slots in order (4f <= 64).
func PlainWord(s [4]uint32, f uint) uint64 {
	f &= 31
	return uint64(s[0]) | uint64(s[1])<<f | uint64(s[2])<<(2*f) | uint64(s[3])<<(3*f)
}

// Put stores fp in a free slot of bucket i, if it has one: the first free
// slot.
func (t *Table) Put(i uint64, fp uint32) bool {
	if t.Fast {
		return t.PutWord(i, t.Word(i), fp)
	}
	b := t.Bucket(i)
	for j := range b {
		if b[j] == 0 {
			b[j] = fp
			t.SetBucket(i, b)
			return true
		}
	}
	return false
}

// PutWord stores fp in a free slot of bucket i of a fast table, whose word
// (from word) is w, if it has one: the first free slot, as put would.
func (t *Table) PutWord(i, w uint64, fp uint32) bool {
	if t.Semi {
		// A semi-sorted bucket is stored sorted with its empty slots first
		// (fingerprint 0 sorts lowest; setBucket writes no other order and
		// UnmarshalBinary accepts none), so it has room if and only if its
		// first slot is empty: low nibble 0 and remainder 0.
		r := (t.F - 4) & 15
		if DecodeTable[w&0xfff]&15 != 0 || w>>12&(1<<r-1) != 0 {
			return false
		}
		s := t.unpack(w)
		s[0] = fp
		t.setBucketFast(i, s)
		return true
	}
	// Mark the top bit of every empty lane, without a branch per slot: a
	// lane is empty if neither its top bit nor, after adding all ones
	// below it, its other bits carry into the top. The lowest mark is the
	// first free slot, whose lane starts f-1 bits below it.
	f := t.F & 31
	ones := uint64(1) | 1<<f | 1<<(2*f) | 1<<(3*f)
	highs := ones << (f - 1)
	lows := ones * (1<<f - 1) &^ highs
	x := w & (lows | highs)
	free := ^((x&lows + lows) | x) & highs
	if free == 0 {
		return false
	}
	t.setWord(i, w|uint64(fp)<<(uint(bits.TrailingZeros64(free))-(f-1)))
	return true
}

// Contains reports whether bucket i1 or i2 holds fp. Both buckets are loaded
// before either is compared, so their cache misses overlap.
func (t *Table) Contains(i1, i2 uint64, fp uint32) bool {
	if t.Fast {
		return probe(t.Word(i1), t.Word(i2), fp, t.F, t.Semi)
	}
	return t.ContainsSlow(i1, i2, fp)
}

// ContainsSlow is contains for any width, one slot at a time.
func (t *Table) ContainsSlow(i1, i2 uint64, fp uint32) bool {
	b1, b2 := t.Bucket(i1), t.Bucket(i2)
	for j := 0; j < Slots; j++ {
		if b1[j] == fp || b2[j] == fp {
			return true
		}
	}
	return false
}
