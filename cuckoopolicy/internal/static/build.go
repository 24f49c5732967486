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
	var placed int
	switch {
	case !b.far && unsafe.Sizeof(bs[0].fp[0]) == 2:
		placed = greedy16(b, *(*[]slotSet[uint16])(unsafe.Pointer(&bs)), keys, m, seed, f)
	case !b.far:
		placed = greedyInCache(b, bs, keys, m, seed, f)
	default:
		placed = greedy(b, bs, keys, m, seed, f)
	}
	if len(b.todo) == 0 {
		return placed, 0
	}
	setLabels(b, bs)
	walked, strays := walkRounds(b, bs, m, keys.Len())
	return placed + walked, strays
}

// batchBuckets is the table size from which the greedy pass works in
// batches with prefetches (greedy), and the walks prefetch: 512 KiB of
// 16-byte buckets. In smaller tables, which stay in a core's L2 cache, the
// batches' bookkeeping costs as much as the cache misses it overlaps or more
// (greedy16, greedyInCache).
const batchBuckets = 1 << 15

// greedy16 is greedyInCache for 16-bit slots, the pass of every
// FilterPolicy up to 16 bits a key, written for fewer instructions a key
// (the loop is bound by them, not by the cache): fewer values live in the
// loop, so that none is kept on the stack; the test for an entry already
// placed in two steps, first whether a slot of either bucket holds fp, four
// slots at once, then (about once in 2^f/8 keys) holds16 with the offsets;
// one branch for both rare cases, that and a stray; buckets addressed
// without bounds checks. It places the same entries in the same slots and
// lists the same strays.
func greedy16(b *Builder, bs []slotSet[uint16], keys *HashList, m, seed uint64, f uint) int {
	fmul := uint64(1)<<(f&63) - 1 // cuckoohash.Fingerprint, spelled out
	if room := greedyRoom(keys.Len(), m); cap(b.todo) < room {
		b.todo = make([]stray, 0, room)
	}
	start, dups := len(b.todo), 0
	sc := seed * 0x9e3779b97f4a7c15 // cuckoohash.Mix, spelled out with its seed term hoisted
	base := unsafe.Pointer(unsafe.SliceData(bs))
	const size = unsafe.Sizeof(bs[0])
	for c := range len(keys.chunks) {
		for _, h := range keys.part(c) {
			x := (h ^ sc) * 0xff51afd7ed558ccd
			x ^= x >> 32
			y := cuckoohash.Remix(x)
			i1 := cuckoohash.Reduce(x, m)
			i2 := second(i1, y, m)
			// Reduce and second return indexes below m = len(bs).
			b1 := (*slotSet[uint16])(unsafe.Add(base, uintptr(i1)*size))
			b2 := (*slotSet[uint16])(unsafe.Add(base, uintptr(i2)*size))
			w1, w2 := cuckoohash.SlotWord(&b1.fp), cuckoohash.SlotWord(&b2.fp)
			fp := uint16(((y>>32)*fmul)>>32) + 1
			fl := uint64(fp) * lanes16
			x1, x2 := w1^fl, w2^fl
			held := ((x1-lanes16)&^x1 | (x2-lanes16)&^x2) & (lanes16 << 15) // a slot holds fp
			c1, c2 := (bits.Len64(w1)+15)>>4, (bits.Len64(w2)+15)>>4        // fill16
			o1 := offset(i1, i2, m)
			s, c, o := b1, c1, o1
			if c2 < c1 {
				s, c, o = b2, c2, -o1 // offset(i2, i1, m)
			}
			if held|uint64(c>>2) != 0 { // c>>2 is 1 for a full bucket
				if holds16(b1, fp, o1)|holds16(b2, fp, -o1) != 0 {
					dups++
					continue
				}
				if c == cuckoohash.Slots {
					b.todo = append(b.todo, stray{uint32(fp), uint32(i1), uint32(i2)})
					continue
				}
			}
			s.fp[c&(cuckoohash.Slots-1)], s.alt[c&(cuckoohash.Slots-1)] = fp, o
		}
	}
	return keys.Len() - (len(b.todo) - start) - dups
}

// greedyInCache is the greedy pass for tables that fit in the cache: greedy
// without batches or prefetches, its strays listed as they come. It places
// the same entries in the same slots and lists the same strays.
func greedyInCache[F uint16 | uint32](b *Builder, bs []slotSet[F], keys *HashList, m, seed uint64, f uint) int {
	todo := b.todo
	if room := greedyRoom(keys.Len(), m); cap(todo) < room {
		todo = make([]stray, 0, room)
	}
	placed := 0
	for c := range len(keys.chunks) {
		for _, h := range keys.part(c) {
			x := cuckoohash.Mix(h, seed)
			y := cuckoohash.Remix(x)
			i1 := cuckoohash.Reduce(x, m)
			i2 := second(i1, y, m)
			fp := F(cuckoohash.Fingerprint(y, f))
			o1 := offset(i1, i2, m)
			o2 := -o1 // offset(i2, i1, m)
			b1, b2 := &bs[i1], &bs[i2]
			var c1, c2 int
			if unsafe.Sizeof(fp) == 2 {
				s1, s2 := (*slotSet[uint16])(unsafe.Pointer(b1)), (*slotSet[uint16])(unsafe.Pointer(b2))
				c1, c2 = fill16(s1), fill16(s2)
				if holds16(s1, uint16(fp), o1)|holds16(s2, uint16(fp), o2) != 0 {
					continue // a duplicate entry
				}
			} else {
				c1, c2 = fill(b1), fill(b2)
				if min(clash(b1, fp, o1), clash(b2, fp, o2)) == 0 {
					continue // a duplicate entry
				}
			}
			s, c, o := b1, c1, o1
			if c2 < c1 {
				s, c, o = b2, c2, o2
			}
			if c == cuckoohash.Slots {
				todo = append(todo, stray{uint32(fp), uint32(i1), uint32(i2)})
				continue
			}
			s.fp[c&(cuckoohash.Slots-1)], s.alt[c&(cuckoohash.Slots-1)] = fp, o
			placed++
		}
	}
	b.todo = todo
	return placed
}

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
// addresses of a batch and prefetches (or, without prefetch, touches) both
// buckets of each key before placing any, so that the cache misses of a
// batch overlap instead of coming one after another. The placements do not
// depend on the batch: keys are placed in order.
func greedy[F uint16 | uint32](b *Builder, bs []slotSet[F], keys *HashList, m, seed uint64, f uint) int {
	const batch = 64 // as fast as 16 in the L3, faster beyond it (bench/NOTES.md)
	n := keys.Len()
	var ii [batch][2]uint32
	var fps [batch]F
	var touch F
	// The batch's strays, listed for the walks after the batch: appending
	// to b.todo inside the placing loop made the whole build slower.
	var strays [batch]uint8
	room := greedyRoom(n, m)
	placed := 0
	for k0 := 0; k0 < n; k0 += batch {
		nb, ns := min(batch, n-k0), 0
		hs := keys.part(k0 / chunkLen)[k0%chunkLen:]
		for j := 0; j < nb; j++ {
			x := cuckoohash.Mix(hs[j], seed)
			y := cuckoohash.Remix(x)
			i1 := cuckoohash.Reduce(x, m)
			i2 := second(i1, y, m)
			ii[j] = [2]uint32{uint32(i1), uint32(i2)}
			fps[j] = F(cuckoohash.Fingerprint(y, f))
			if !hasPrefetch {
				touch += bs[i1].fp[3] + bs[i2].fp[3]
			}
		}
		if hasPrefetch {
			prefetch(unsafe.Pointer(&bs[0]), &ii[0][0], 2*nb, int(unsafe.Sizeof(bs[0])))
		}
		for j := 0; j < nb; j++ {
			i1, i2, fp := uint64(ii[j][0]), uint64(ii[j][1]), fps[j]
			o1 := offset(i1, i2, m)
			o2 := -o1 // offset(i2, i1, m)
			b1, b2 := &bs[i1], &bs[i2]
			// With 16-bit fingerprints (every FilterPolicy up to 16 bits a
			// key) a bucket's slots are read as words, four at a time; the
			// test is a constant in each instantiation. It sits here, not in
			// fill and clash, which then would no longer inline.
			// TestSlotWords holds the two equal. The test for an entry
			// already placed asks first, as greedy16 does, whether a slot
			// of either bucket holds fp at all.
			var c1, c2 int
			if unsafe.Sizeof(fp) == 2 {
				s1, s2 := (*slotSet[uint16])(unsafe.Pointer(b1)), (*slotSet[uint16])(unsafe.Pointer(b2))
				w1, w2 := cuckoohash.SlotWord(&s1.fp), cuckoohash.SlotWord(&s2.fp)
				c1, c2 = (bits.Len64(w1)+15)>>4, (bits.Len64(w2)+15)>>4 // fill16
				fl := uint64(fp) * lanes16
				x1, x2 := w1^fl, w2^fl
				if ((x1-lanes16)&^x1|(x2-lanes16)&^x2)&(lanes16<<15) != 0 &&
					holds16(s1, uint16(fp), o1)|holds16(s2, uint16(fp), o2) != 0 {
					continue // a duplicate entry
				}
			} else {
				c1, c2 = fill(b1), fill(b2)
				if min(clash(b1, fp, o1), clash(b2, fp, o2)) == 0 {
					continue // a duplicate entry
				}
			}
			// The emptier bucket, the first on a tie, selected without a
			// branch: which one it is, is a coin toss.
			s, c, o := b1, c1, o1
			if c2 < c1 {
				s, c, o = b2, c2, o2
			}
			if c == cuckoohash.Slots {
				strays[ns] = uint8(j)
				ns++
				continue
			}
			s.fp[c&(cuckoohash.Slots-1)], s.alt[c&(cuckoohash.Slots-1)] = fp, o
			placed++
		}
		for _, j := range strays[:ns] {
			b.addStray(stray{uint32(fps[j]), ii[j][0], ii[j][1]}, room)
		}
	}
	b.touched += uint64(touch)
	return placed
}

// setLabels starts the walks' labels at the lower bounds the greedy pass
// leaves: a full bucket (its last slot used) is at least one eviction from
// room. (Setting them as the greedy pass filled buckets made it slower.)
func setLabels[F uint16 | uint32](b *Builder, bs []slotSet[F]) {
	m := len(bs)
	if cap(b.labels) < m {
		b.labels = make([]uint8, m, cap(bs))
	}
	b.labels = b.labels[:m]
	for i := range bs {
		b.labels[i] = uint8(used(bs[i].fp[cuckoohash.Slots-1]))
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
