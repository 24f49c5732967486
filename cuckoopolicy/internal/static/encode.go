package static

import (
	"encoding/binary"
	"unsafe"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
)

// encode appends the packed table of the placed keys to dst.
func (b *Builder) encode(dst []byte, keys *HashList, p Params) []byte {
	f := uint(p.FingerprintBits)
	size, _ := cuckoohash.TableBytes(p.Buckets, f, p.SemiSort)
	start := len(dst)
	dst = grow(dst, size)
	t, err := cuckoohash.TableOn(dst[start:], p.Buckets, f, p.SemiSort)
	if err != nil {
		panic(err) // unreachable: Build validated f and sized the table
	}
	if f <= 16 {
		encodeSlots(&t, b.small, p.SemiSort)
	} else {
		encodeSlots(&t, b.wide, p.SemiSort)
	}
	return dst
}

func encodeSlots[F uint16 | uint32](t *cuckoohash.Table, bs []slotSet[F], semi bool) {
	if semi && unsafe.Sizeof(bs[0].fp[0]) == 2 {
		encodeSemi16(t, *(*[]slotSet[uint16])(unsafe.Pointer(&bs)))
		return
	}
	if t.Fast {
		encodeStream(t, bs, semi)
		return
	}
	for i := range bs {
		s := &bs[i]
		fps := [cuckoohash.Slots]uint32{uint32(s.fp[0]), uint32(s.fp[1]), uint32(s.fp[2]), uint32(s.fp[3])}
		if fps != [cuckoohash.Slots]uint32{} || semi {
			t.SetBucket(uint64(i), fps)
		}
	}
}

// encodeStream is encodeSlots for buckets of at most 64 bits: it packs them
// in order into a 64-bit accumulator and stores each word once it is full,
// rather than read-modify-write each bucket into the table (the bytes are
// the same).
func encodeStream[F uint16 | uint32](t *cuckoohash.Table, bs []slotSet[F], semi bool) {
	f, bb := t.F, t.BucketBits
	data := t.Data
	var acc uint64
	var have, pos uint // bits in acc; bytes stored
	for i := range bs {
		s := &bs[i]
		fps := [cuckoohash.Slots]uint32{uint32(s.fp[0]), uint32(s.fp[1]), uint32(s.fp[2]), uint32(s.fp[3])}
		var w uint64
		if semi {
			w = cuckoohash.SemiWord(fps, f)
		} else {
			w = cuckoohash.PlainWord(fps, f)
		}
		acc |= w << (have & 63)
		if have += bb; have >= 64 {
			binary.LittleEndian.PutUint64(data[pos:], acc)
			pos += 8
			have -= 64
			// The bits of w that did not fit; none when have is 0 (a
			// shift by 64 or more gives 0).
			acc = w >> (bb - have)
		}
	}
	for ; have > 0; have -= min(have, 8) {
		data[pos] = byte(acc)
		acc >>= 8
		pos++
	}
}

// encodeSemi16 is encodeStream for semi-sorted buckets of 16-bit slots, the
// layout of every FilterPolicy up to 16 bits a key, in fewer instructions a
// bucket (the loop is bound by them): it reads a bucket's four slots as one
// word; rather than sort them (cuckoohash.SemiWord), it counts for each
// slot the slots that go before it, which six comparisons give, and puts
// the slot's high part there and adds its nibble's share of the code there
// (semiRank, 128 bytes, where SemiWord looks the code up in a 128 KiB
// table). The bytes are the same (TestEncodeSemi16).
func encodeSemi16(t *cuckoohash.Table, bs []slotSet[uint16]) {
	bb := t.BucketBits
	r := t.F - 4
	// The high parts go to their places by multiplies, which take one
	// instruction where a shift by a variable count takes three on amd64.
	place := [4]uint64{1 << 12, 1 << ((12 + r) & 63), 1 << ((12 + 2*r) & 63), 1 << ((12 + 3*r) & 63)}
	data := t.Data
	var acc uint64
	var have, pos uint // bits in acc; bytes stored
	for i := range bs {
		// Each slot's sort key, low nibble first, then the f-4 high bits,
		// and its place in the sorted bucket: the number of slots whose key
		// is lower, or equal in a slot before it (an empty slot's key is
		// 0). hij is 1 where slot j goes before slot i (i < j).
		w := cuckoohash.SlotWord(&bs[i].fp)
		k := (w&0x000f_000f_000f_000f)<<12 | (w>>4)&0x0fff_0fff_0fff_0fff
		k0, k1, k2, k3 := k&0xffff, k>>16&0xffff, k>>32&0xffff, k>>48
		h01, h02, h03 := (k1-k0)>>63, (k2-k0)>>63, (k3-k0)>>63
		h12, h13, h23 := (k2-k1)>>63, (k3-k1)>>63, (k3-k2)>>63
		r0 := h01 + h02 + h03
		r1 := 1 - h01 + h12 + h13
		r2 := 2 - h02 - h12 + h23
		r3 := 3 - h03 - h13 - h23
		code := semiRank[r0&3][k0>>12] + semiRank[r1&3][k1>>12] + semiRank[r2&3][k2>>12] + semiRank[r3&3][k3>>12]
		x := uint64(code) | k0&0xfff*place[r0&3] | k1&0xfff*place[r1&3] | k2&0xfff*place[r2&3] | k3&0xfff*place[r3&3]
		acc |= x << (have & 63)
		if have += bb; have >= 64 {
			binary.LittleEndian.PutUint64(data[pos:], acc)
			pos += 8
			have -= 64
			acc = x >> ((bb - have) & 63) // as in encodeStream
		}
	}
	for ; have > 0; have -= min(have, 8) {
		data[pos] = byte(acc)
		acc >>= 8
		pos++
	}
}

// semiRank ranks a sorted tuple of four nibbles a <= b <= c <= d: its
// semi-sort code (its index in lexicographic order) is semiRank[0][a] +
// semiRank[1][b] + semiRank[2][c] + semiRank[3][d], modulo 2^16. The
// tuples before it are those with a smaller first nibble, S3(a), then those
// with first nibble a and a smaller second, S2(b) - S2(a), then S1(c) -
// S1(b), then d - c, where Sk(x) counts the sorted tuples of k+1 nibbles
// whose first is below x.
var semiRank = func() (t [4][16]uint16) {
	var s [4]int // s[k] = Sk(x) as x steps up; s[0] = x
	for x := range 16 {
		t[0][x] = uint16(s[3] - s[2])
		t[1][x] = uint16(s[2] - s[1])
		t[2][x] = uint16(s[1] - s[0])
		t[3][x] = uint16(s[0])
		// Sk(x+1) - Sk(x): the tuples that start with x, as many as the
		// sorted k-tuples of the 16-x nibbles from x up, C(16-x+k-1, k).
		n := 16 - x
		s[3] += n * (n + 1) * (n + 2) / 6
		s[2] += n * (n + 1) / 2
		s[1] += n
		s[0]++
	}
	return t
}()

// grow appends n zero bytes to b, leaving room for a trailer after them.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		b = b[:len(b)+n]
		clear(b[len(b)-n:])
		return b
	}
	nb := make([]byte, len(b)+n, len(b)+n+64)
	copy(nb, b)
	return nb
}
