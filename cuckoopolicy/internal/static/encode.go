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
		// Buckets of at most 64 bits go in with one OR each into the zeroed
		// table, in order.
		f, bb := t.F, uint64(t.BucketBits)
		for i := range bs {
			s := &bs[i]
			if s.fp[0] == 0 && !semi {
				continue
			}
			fps := [cuckoohash.Slots]uint32{uint32(s.fp[0]), uint32(s.fp[1]), uint32(s.fp[2]), uint32(s.fp[3])}
			var w uint64
			if semi {
				w = cuckoohash.SemiWord(fps, f)
			} else {
				w = cuckoohash.PlainWord(fps, f)
			}
			pos := uint64(i) * bb
			off := pos >> 3
			v := binary.LittleEndian.Uint64(t.Data[off:]) | w<<(pos&7)
			binary.LittleEndian.PutUint64(t.Data[off:], v)
		}
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
