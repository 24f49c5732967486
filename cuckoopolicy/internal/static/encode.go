package static

import (
	"encoding/binary"

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
