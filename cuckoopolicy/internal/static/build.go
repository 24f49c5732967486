package static

import (
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
)

// Params are the parameters of a static filter: everything, besides
// the packed table, that a reader needs to answer lookups.
type Params struct {
	FingerprintBits int
	SemiSort        bool
	Buckets         uint64
	Seed            uint64
	Keys            uint64 // distinct hashes placed
}

// Builder builds static filters: tables where every key is known before the
// first is placed, as in an sstable's filter block. Each key's two buckets
// are drawn independently from its hash, which lets the table fill to the
// (2,4) cuckoo load threshold of about 98%.
//
// The zero Builder is ready to use and may be reused; its scratch memory is
// kept between builds. A Builder is not safe for concurrent use.
type Builder struct {
	small   []slotSet[uint16] // f <= 16
	wide    []slotSet[uint32] // f > 16
	todo    []stray           // entries for the eviction walks of one round
	left    []stray           // strays the walks of this round leave
	rng     uint64
	touched uint64  // keeps the touching loads of place alive (no prefetch)
	labels  []uint8 // per bucket, a lower bound on its distance to room
	far     bool    // the table is too large for the cache: prefetch (batchBuckets)
}

// slotSet is one bucket during a build: per slot, the fingerprint (0 =
// empty; slots fill from the front) and the other bucket its key may live
// in, as an offset from this one (see offset), so that evictions never go
// back to the keys' hashes. 16 bytes a bucket for f <= 16, 24 beyond; with
// the walks' label byte, 4.4 to 4.7 bytes a key for f <= 16.
type slotSet[F uint16 | uint32] struct {
	fp  [cuckoohash.Slots]F
	alt [cuckoohash.Slots]int16
}

// offset encodes bucket a, the other bucket of an entry in bucket i, in 16
// bits. A key's two buckets are less than window apart (modulo m when the
// table is larger than the window; anywhere in a table of at most window
// buckets), so the signed distance from i fits.
func offset(i, a, m uint64) int16 {
	d := int64(a) - int64(i)
	if m > window {
		if d >= window {
			d -= int64(m)
		} else if d <= -window {
			d += int64(m)
		}
	}
	return int16(d)
}

// other decodes offset d of an entry in bucket i.
func other(i uint64, d int16, m uint64) uint64 {
	a := int64(i) + int64(d)
	if a < 0 {
		a += int64(m)
	} else if a >= int64(m) {
		a -= int64(m)
	}
	return uint64(a)
}

// maxStaticBuckets bounds a static table so that bucket indexes fit the
// 32-bit entries of the eviction lists: far more than 2^32 keys would need.
const maxStaticBuckets = 1 << 32

// Build appends to dst a table holding every hash in keys and returns it
// with its parameters. Duplicate hashes, in any order, are placed once, and
// so are distinct hashes that map to the same two buckets and fingerprint:
// the filter cannot tell them apart, and one entry answers for both.
//
// buckets gives the table size for a number of keys; Build asks it first for
// keys.Len() and, when placement finds duplicates, again for the number of
// distinct hashes, and rebuilds at that size if it is smaller. A size below
// one bucket per four keys is raised to that. When placement fails Build
// retries with the next seed: at the same size when only a few entries were
// left without a slot (bad luck), else on a table about 0.4% larger (the
// table is past its load threshold). It never fails and never drops a key.
// For the same keys in the same order the output is the same.
//
// Build panics if f is outside [MinFingerprintBits, MaxFingerprintBits] or if
// keys holds 2^32-1 hashes or more.
func (b *Builder) Build(dst []byte, keys *HashList, f int, semi bool, buckets func(n int) uint64) ([]byte, Params) {
	if !cuckoohash.ValidWidth(f) {
		panic("static: fingerprint width out of range")
	}
	n := keys.Len()
	if uint64(n) >= math.MaxUint32 {
		panic("static: too many keys for one static filter")
	}
	p := Params{FingerprintBits: f, SemiSort: semi}
	if n == 0 {
		return dst, p
	}
	size := func(n int) uint64 {
		return min(max(buckets(n), (uint64(n)+cuckoohash.Slots-1)/cuckoohash.Slots, 1), maxStaticBuckets)
	}
	m := size(n)
	resized := false
	for attempt, reseeds := uint64(0), 0; ; attempt++ {
		var placed, strays int
		if f <= 16 {
			placed, strays = place(b, &b.small, keys, m, attempt, uint(f))
		} else {
			placed, strays = place(b, &b.wide, keys, m, attempt, uint(f))
		}
		if strays > 0 {
			// A few entries left over is bad luck in a few crowded
			// buckets, which another seed at the same size usually avoids;
			// many mean the table is past its load threshold.
			if strays <= nearMiss && reseeds < maxReseeds {
				reseeds++
			} else {
				m, reseeds = m+m/256+1, 0
			}
			continue
		}
		if placed < n && !resized {
			resized = true
			if md := size(placed); md < m {
				m, reseeds = md, 0
				continue
			}
		}
		p.Buckets, p.Seed, p.Keys = m, attempt, uint64(placed)
		break
	}
	return b.encode(dst, keys, p), p
}

// place tries to put every hash in a table of m buckets with the given seed.
// It returns the number of distinct entries placed and, when it gives up, the
// fewest strays (entries without a slot) a round of walks left; 0 when every
// hash is in.
func place[F uint16 | uint32](b *Builder, buf *[]slotSet[F], keys *HashList, m, seed uint64, f uint) (int, int) {
	bs := resetTable(b, buf, m, seed)
	b.far = m >= batchBuckets
	placed := greedy(b, bs, keys, m, seed, f)
	if len(b.todo) == 0 {
		return placed, 0
	}
	setLabels(b, bs)
	walked, strays := walkRounds(b, bs, m, keys.Len())
	return placed + walked, strays
}

// batchBuckets is the table size from which the greedy pass prefetches the
// buckets of a batch, and the walks prefetch: 512 KiB of 16-byte buckets. In
// smaller tables, which stay in a core's L2 cache, the prefetches cost as
// much as the cache misses they overlap or more.
const batchBuckets = 1 << 15

// resetTable readies b for an attempt with seed: an empty table of m buckets
// in *buf, which it returns, an empty todo list and the walks' random
// sequence.
func resetTable[F uint16 | uint32](b *Builder, buf *[]slotSet[F], m, seed uint64) []slotSet[F] {
	if uint64(cap(*buf)) < m {
		// Room for three growth steps (of m/256+1 buckets each,
		// compounding), so that a rebuild near the highest load
		// cuckoopolicy asks for does not allocate (see bench/NOTES.md).
		*buf = make([]slotSet[F], m, m+m/64+4)
	} else {
		*buf = (*buf)[:m]
		clear(*buf)
	}
	// The greedy pass lists its strays in todo, for the first round of
	// walks; left, which the walks fill, is the other list. The larger of
	// the two becomes todo.
	if cap(b.left) > cap(b.todo) {
		b.todo, b.left = b.left, b.todo
	}
	b.todo = b.todo[:0]
	b.rng = seed*0x9e3779b97f4a7c15 + 1
	return *buf
}

// greedy is the first pass: it puts each key's entry in the emptier of its
// two buckets, lists in b.todo the strays that find both full, and returns
// the number of entries placed. It works in batches: it computes the
// buckets, fingerprints and offsets of a batch (addrs), then places them
// (place). Each loop is bound by its instructions and, apart, keeps its
// values in registers, and the placing loop keeps more keys' bucket loads in
// flight: the pass took 0.8 of the time of one without batches on tables of
// 64k keys (in the L2 cache), and no more on any. In a table too large for
// the cache (b.far) it also prefetches (or, without prefetch, touches) both
// buckets of each key of a batch before placing them. The placements do not
// depend on the batch: keys are placed in order.
func greedy[F uint16 | uint32](b *Builder, bs []slotSet[F], keys *HashList, m, seed uint64, f uint) int {
	var bt batch[F]
	var touch F
	room := greedyRoom(keys.Len(), m)
	start, dups := len(b.todo), 0
	for c := range len(keys.chunks) {
		for hs := keys.part(c); len(hs) > 0; {
			n := min(len(hs), greedyBatch)
			bt.addrs(hs[:n], m, seed, f)
			hs = hs[n:]
			if b.far {
				if hasPrefetch {
					prefetch(unsafe.Pointer(&bs[0]), &bt.ii[0][0], 2*n, int(unsafe.Sizeof(bs[0])))
				} else {
					for _, i := range bt.ii[:n] {
						touch += bs[i[0]].fp[3] + bs[i[1]].fp[3]
					}
				}
			}
			strays, d := bt.place(bs, n)
			dups += d
			for _, j := range bt.strays[:strays] {
				b.addStray(stray{uint32(bt.fps[j]), bt.ii[j][0], bt.ii[j][1]}, room)
			}
		}
	}
	b.touched += uint64(touch)
	return keys.Len() - (len(b.todo) - start) - dups
}

// greedyBatch is the number of keys in a batch of the greedy pass: as fast
// as 16 in the L3 cache, faster beyond it (bench/NOTES.md).
const greedyBatch = 64

// batch is a batch of keys of the greedy pass: per key, its two buckets, its
// fingerprint and the offset of its second bucket from its first (offset);
// then the keys that found both buckets full.
type batch[F uint16 | uint32] struct {
	ii     [greedyBatch][2]uint32
	fps    [greedyBatch]F
	offs   [greedyBatch]int16
	strays [greedyBatch]uint8
}

// addrs fills the batch with the addresses of hs, as addr computes them. It
// spells out cuckoohash.Mix (its seed term hoisted), Fingerprint and second,
// and tests the table size against the window once for the batch: the loop
// is bound by its instructions.
func (bt *batch[F]) addrs(hs []uint64, m, seed uint64, f uint) {
	fmul := uint64(1)<<(f&63) - 1 // cuckoohash.Fingerprint
	sc := seed * 0x9e3779b97f4a7c15
	if m <= window {
		// second draws from the whole table, and offset is the plain
		// difference.
		for j, h := range hs[:min(len(hs), greedyBatch)] {
			x := (h ^ sc) * 0xff51afd7ed558ccd
			x ^= x >> 32
			y := cuckoohash.Remix(x)
			i1, i2 := cuckoohash.Reduce(x, m), cuckoohash.Reduce(rot32(y), m)
			bt.ii[j], bt.fps[j], bt.offs[j] = [2]uint32{uint32(i1), uint32(i2)}, F(((y>>32)*fmul)>>32)+1, int16(i2-i1)
		}
		return
	}
	for j, h := range hs[:min(len(hs), greedyBatch)] {
		x := (h ^ sc) * 0xff51afd7ed558ccd
		x ^= x >> 32
		y := cuckoohash.Remix(x)
		i1 := cuckoohash.Reduce(x, m)
		// second: i2 is d buckets after i1, wrapping around. The offset is
		// d, or d-m where it wraps in a table of less than two windows
		// and d-m is above -window (offset). No branch: the wrap is taken
		// at random.
		d := 1 + (uint64(uint32(y))*(window-1))>>32
		i2 := i1 + d
		wrap := m & uint64(int64(m-1-i2)>>63)
		near := uint64(int64(m-d-window) >> 63)
		bt.ii[j], bt.fps[j], bt.offs[j] = [2]uint32{uint32(i1), uint32(i2 - wrap)}, F(((y>>32)*fmul)>>32)+1, int16(d-wrap&near)
	}
}

// place puts the entries of the batch's first n keys in bs, in order, each
// in the emptier of its buckets, the first on a tie, unless either holds it
// already (a duplicate). It lists in bt.strays the keys that find both
// buckets full, and returns their number and that of the duplicates.
func (bt *batch[F]) place(bs []slotSet[F], n int) (strays, dups int) {
	base, size := unsafe.Pointer(unsafe.SliceData(bs)), unsafe.Sizeof(bs[0])
	for j := range n {
		i1, i2, fp, o1 := bt.ii[j][0], bt.ii[j][1], bt.fps[j], bt.offs[j]
		// addrs returns indexes below m = len(bs).
		b1 := (*slotSet[F])(unsafe.Add(base, uintptr(i1)*size))
		b2 := (*slotSet[F])(unsafe.Add(base, uintptr(i2)*size))
		// With 16-bit fingerprints (every FilterPolicy up to 16 bits a key)
		// a bucket's slots are read as words, four at a time; the test is a
		// constant in each instantiation. It sits here, not in fill and
		// clash, which then would no longer inline. TestSlotWords holds the
		// two equal.
		var c1, c2 int
		if unsafe.Sizeof(fp) == 2 {
			s1, s2 := (*slotSet[uint16])(unsafe.Pointer(b1)), (*slotSet[uint16])(unsafe.Pointer(b2))
			w1, w2 := cuckoohash.SlotWord(&s1.fp), cuckoohash.SlotWord(&s2.fp)
			// Whether a slot of either bucket holds fp at all, which about
			// one key in 2^f/8 passes; then whether one holds the entry.
			fl := uint64(fp) * lanes16
			x1, x2 := w1^fl, w2^fl
			if ((x1-lanes16)&^x1|(x2-lanes16)&^x2)&(lanes16<<15) != 0 && placed16(s1, s2, uint16(fp), o1) {
				dups++
				continue
			}
			c1, c2 = (bits.Len64(w1)+15)>>4, (bits.Len64(w2)+15)>>4 // fill16
		} else {
			if min(clash(b1, fp, o1), clash(b2, fp, -o1)) == 0 {
				dups++
				continue
			}
			c1, c2 = fill(b1), fill(b2)
		}
		// The emptier bucket, the first on a tie, selected without a branch:
		// which one it is, is a coin toss.
		s, c, o := b1, c1, o1
		if c2 < c1 {
			s, c, o = b2, c2, -o1 // offset(i2, i1, m)
		}
		if c == cuckoohash.Slots {
			bt.strays[strays] = uint8(j)
			strays++
			continue
		}
		s.fp[c&(cuckoohash.Slots-1)], s.alt[c&(cuckoohash.Slots-1)] = fp, o
	}
	return strays, dups
}

// setLabels starts the walks' labels at the lower bounds the greedy pass
// leaves: a full bucket (its last slot used) is at least one eviction from
// room. (Setting them as the greedy pass filled buckets made it slower.)
func setLabels[F uint16 | uint32](b *Builder, bs []slotSet[F]) {
	m := len(bs)
	if cap(b.labels) < m {
		b.labels = make([]uint8, m, cap(bs))
	}
	L := b.labels[:m]
	b.labels = L
	for i := range bs {
		L[i] = uint8(used(bs[i].fp[cuckoohash.Slots-1]))
	}
}

// addStray lists a stray of the greedy pass for the walks. When the list
// first fills it is given room for all that the greedy pass is expected to
// leave (greedyRoom): growing it by append instead allocated several times
// what it ends with, and took the writer past its memory bound for
// fingerprints of more than 16 bits.
func (b *Builder) addStray(s stray, room int) {
	if len(b.todo) == cap(b.todo) {
		b.todo = slices.Grow(b.todo, max(room-len(b.todo), len(b.todo)/4))
	}
	b.todo = append(b.todo, s)
}

// greedyLeft bounds the share of entries the greedy pass leaves as strays at
// a load up to the given one: each bound is at least a tenth above the share
// measured at 1M keys (see bench/NOTES.md).
var greedyLeft = [...]struct{ load, share float64 }{
	{0.6, 0.001}, {0.7, 0.004}, {0.75, 0.008}, {0.8, 0.015}, {0.85, 0.027},
	{0.9, 0.043}, {0.92, 0.051}, {0.95, 0.064},
}

// greedyRoom returns the room to make for the entries the greedy pass
// leaves as strays when it places n entries in m buckets: greedyLeft's bound,
// n/13 above its loads, and 64 more for the chance in small tables.
func greedyRoom(n int, m uint64) int {
	load := float64(n) / float64(cuckoohash.Slots*m)
	share := 1.0 / 13
	for _, e := range greedyLeft {
		if load <= e.load {
			share = e.share
			break
		}
	}
	return int(share*float64(n)) + 64
}

// fill returns the number of occupied slots of a bucket (they fill from the
// front). Like clash it has no branch: how full a bucket is, and whether a
// fingerprint is in it, cannot be predicted.
func fill[F uint16 | uint32](s *slotSet[F]) int {
	return used(s.fp[0]) + used(s.fp[1]) + used(s.fp[2]) + used(s.fp[3])
}

// clash returns zero if and only if a slot of the bucket holds fp with other
// bucket alt: the entry is already placed.
func clash[F uint16 | uint32](s *slotSet[F], fp F, alt int16) F {
	a := F(uint16(alt))
	return min(s.fp[0]^fp|(F(uint16(s.alt[0]))^a), s.fp[1]^fp|(F(uint16(s.alt[1]))^a),
		s.fp[2]^fp|(F(uint16(s.alt[2]))^a), s.fp[3]^fp|(F(uint16(s.alt[3]))^a))
}

// lanes16 has the low bit of each 16-bit lane of a word set.
const lanes16 = 0x0001_0001_0001_0001

// fill16 is fill for 16-bit fingerprints, the four slots read as one word:
// fingerprints are never 0, so the count is one past the highest nonzero
// lane.
func fill16(s *slotSet[uint16]) int {
	return (bits.Len64(cuckoohash.SlotWord(&s.fp)) + 15) >> 4
}

// holds16 is nonzero if and only if clash is zero, for 16-bit fingerprints:
// it compares the four slots at once, and a lane of x is zero where both
// the fingerprint and the offset match.
func holds16(s *slotSet[uint16], fp uint16, alt int16) uint64 {
	x := (cuckoohash.SlotWord(&s.fp) ^ uint64(fp)*lanes16) | (cuckoohash.SlotWord((*[cuckoohash.Slots]uint16)(unsafe.Pointer(&s.alt))) ^ uint64(uint16(alt))*lanes16)
	return (x - lanes16) &^ x & (lanes16 << 15)
}

// placed16 reports whether bucket s1 or s2 holds fp with the other as its
// other bucket (o is the offset of s2 from s1): the entry is placed already.
// It is the greedy pass's rare path, kept out of line so that its loop
// keeps its values in registers.
//
//go:noinline
func placed16(s1, s2 *slotSet[uint16], fp uint16, o int16) bool {
	return holds16(s1, fp, o)|holds16(s2, fp, -o) != 0
}

// used is 1 for a nonzero x, else 0.
func used[F uint16 | uint32](x F) int { return int((uint64(x) + math.MaxUint32) >> 32) }

// A failed attempt that left at most nearMiss strays is retried
// with another seed at the same size, up to maxReseeds times in a row; one
// that left more, or the last of those, grows the table.
const (
	nearMiss   = 8
	maxReseeds = 2
)

func (b *Builder) next() uint64 {
	b.rng ^= b.rng << 13
	b.rng ^= b.rng >> 7
	b.rng ^= b.rng << 17
	return b.rng
}
