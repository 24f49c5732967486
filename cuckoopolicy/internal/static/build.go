package static

import (
	"encoding/binary"
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
	placed := greedy(b, bs, keys, m, seed, f)
	if len(b.todo) == 0 {
		return placed, 0
	}
	setLabels(b, bs)
	walked, strays := walkRounds(b, bs, m, keys.Len())
	return placed + walked, strays
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
		for j := 0; j < nb; j++ {
			x := cuckoohash.Mix(keys.At(k0+j), seed)
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
			o1, o2 := offset(i1, i2, m), offset(i2, i1, m)
			b1, b2 := &bs[i1], &bs[i2]
			// With 16-bit fingerprints (every FilterPolicy up to 16 bits a
			// key) a bucket's slots are read as words, four at a time; the
			// test is a constant in each instantiation. It sits here, not in
			// fill and clash, which then would no longer inline.
			// TestSlotWords holds the two equal.
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

// walkRounds places the strays in b.todo by eviction walks, for a build of n
// keys. A walk that runs out of kicks leaves some entry a stray; it is
// retried in the next round, so nothing is dropped before the attempt is
// given up. Each round retries what the last left, a third as many or fewer
// while the table is below its threshold: a build of millions of keys near
// it needs a dozen rounds, so the attempt is given up only when rounds stop
// making progress (maxStalls), or when the kicks of all walks together pass
// about two a key: a table asked for more than its threshold holds fails
// after a few, and its budget is better spent on a larger table (see
// bench/NOTES.md). walkRounds returns the number of entries placed and the
// fewest strays a round left, 0 when none is left.
func walkRounds[F uint16 | uint32](b *Builder, bs []slotSet[F], m uint64, n int) (int, int) {
	budget := 2*n + 4096
	placed, best, stalled := 0, math.MaxInt, 0
	for len(b.todo) > 0 {
		if strays := len(b.todo); strays < best {
			best, stalled = strays, 0
		} else if stalled++; stalled == maxStalls {
			return placed, best
		}
		p, ok := walkRound(b, bs, m, &budget)
		placed += p
		if !ok {
			return placed, best
		}
	}
	return placed, 0
}

// walkRound runs a walk for each stray in b.todo, lanes of them side by
// side, a kick of each in turn, so that the cache misses of different walks
// overlap (each kick prefetches the bucket its walk goes to next). The
// strays the walks leave become the next round's b.todo. walkRound returns
// the number of entries placed, and false when the kicks ran past budget.
func walkRound[F uint16 | uint32](b *Builder, bs []slotSet[F], m uint64, budget *int) (int, bool) {
	todo := b.todo
	b.left = b.left[:0]
	var ws [lanes]walker[F]
	next, live, placed := 0, 0, 0
	for l := range ws {
		if next < len(todo) {
			ws[l] = newWalker[F](bs, todo[next])
			next++
			live++
		} else {
			ws[l].done = true
		}
	}
	for live > 0 {
		for l := range ws {
			w := &ws[l]
			if w.done {
				continue
			}
			res := walkDup
			if w.kicks > 0 || !held(&ws, l) {
				res = w.step(b, bs, m)
			}
			if res == walkGoing {
				continue
			}
			*budget -= w.kicks
			switch res {
			case walkPlaced:
				placed++
			case walkFailed:
				b.left = append(b.left, stray{uint32(w.fp), w.bi, w.oth})
			}
			if next < len(todo) {
				*w = newWalker[F](bs, todo[next])
				next++
			} else {
				w.done = true
				live--
			}
		}
		if *budget < 0 {
			return placed, false
		}
	}
	b.todo, b.left = b.left, todo
	return placed, true
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

// walkKicks bounds the evictions of one walk; a stray still without a slot
// after them waits for the next round.
const walkKicks = 500

// lanes is how many walks run side by side.
const lanes = 8

// A failed attempt that left at most nearMiss strays is retried
// with another seed at the same size, up to maxReseeds times in a row; one
// that left more, or the last of those, grows the table.
const (
	nearMiss   = 8
	maxReseeds = 2
)

// maxStalls is how many rounds of walks in a row may fail to leave fewer
// strays before a build attempt is given up.
const maxStalls = 3

func (b *Builder) next() uint64 {
	b.rng ^= b.rng << 13
	b.rng ^= b.rng >> 7
	b.rng ^= b.rng << 17
	return b.rng
}

const (
	walkGoing = iota
	walkPlaced
	walkDup
	walkFailed
)

// stray is an entry without a slot: its fingerprint, the bucket it is to go
// in and its other bucket.
type stray struct {
	fp       uint32
	home, to uint32
}

// walker is one stray's walk in progress: fp is to go in bucket
// bi, whose other bucket is oth. Before its first step bi and oth are the
// entry's two buckets.
type walker[F uint16 | uint32] struct {
	fp      F
	bi, oth uint32
	kicks   int
	done    bool
}

// held reports whether another walk than ws[l] has in hand the entry that
// ws[l] has yet to take its first step with. Copies of one key all wait for
// the walks when the greedy pass found both its buckets full; a copy checked
// only against the buckets would miss one that another walk holds, and the
// entry would be placed twice. (A copy that is a stray after a failed walk
// is checked when it is retried.)
func held[F uint16 | uint32](ws *[lanes]walker[F], l int) bool {
	w := &ws[l]
	for k := range ws {
		v := &ws[k]
		if k != l && !v.done && v.fp == w.fp &&
			(v.bi == w.bi && v.oth == w.oth || v.bi == w.oth && v.oth == w.bi) {
			return true
		}
	}
	return false
}

// newWalker starts the walk of e and prefetches its two buckets.
func newWalker[F uint16 | uint32](bs []slotSet[F], e stray) walker[F] {
	if hasPrefetch {
		prefetch(unsafe.Pointer(&bs[0]), &e.home, 2, int(unsafe.Sizeof(bs[0])))
	}
	return walker[F]{fp: F(e.fp), bi: e.home, oth: e.to}
}

// step takes the walk one kick further. Its first step places fp in either
// of its buckets if one has room (or finds it there already); later steps
// place it in bi if that has room. Else fp evicts a resident of bi, chosen
// by the buckets' labels, as in local search allocation (Khosla, "Balls
// into bins made faster", ESA 2013): a bucket's label is an estimate, from
// below, of the evictions from it to a bucket with room; the walk evicts
// the resident whose other bucket has the lowest label and sets bi's label
// to one more than that. Walks so led turn away from the buckets that
// earlier walks found crowded. step returns walkGoing while the walk goes
// on. (These walks replaced random breadth-first walks, which built slower
// and needed more seeds near the threshold: see bench/NOTES.md.)
func (w *walker[F]) step(b *Builder, bs []slotSet[F], m uint64) int {
	L := b.labels
	bi, oth := uint64(w.bi), uint64(w.oth)
	if w.kicks == 0 {
		o1, o2 := offset(bi, oth, m), offset(oth, bi, m)
		s1, s2 := &bs[bi], &bs[oth]
		c1, c2 := fill(s1), fill(s2)
		switch {
		case min(clash(s1, w.fp, o1), clash(s2, w.fp, o2)) == 0:
			return walkDup
		case c1 < cuckoohash.Slots:
			s1.fp[c1], s1.alt[c1] = w.fp, o1
			L[bi] = max(L[bi], uint8(c1+1)/cuckoohash.Slots)
			return walkPlaced
		case c2 < cuckoohash.Slots:
			s2.fp[c2], s2.alt[c2] = w.fp, o2
			L[oth] = max(L[oth], uint8(c2+1)/cuckoohash.Slots)
			return walkPlaced
		}
		if L[oth] < L[bi] || L[oth] == L[bi] && b.next()&1 == 0 {
			bi, oth = oth, bi
		}
	} else {
		t := &bs[bi]
		if c := fill(t); c < cuckoohash.Slots {
			t.fp[c], t.alt[c] = w.fp, offset(bi, oth, m)
			L[bi] = max(L[bi], uint8(c+1)/cuckoohash.Slots)
			return walkPlaced
		}
		if w.kicks == walkKicks {
			return walkFailed
		}
	}
	// The resident to evict: the lowest label of its other bucket, ties
	// broken at random (the rotation r), a resident whose two buckets are
	// both bi last. The choice has no branch: it cannot be predicted.
	s := &bs[bi]
	r := uint(b.next())
	best := uint(math.MaxUint)
	for j := range uint(cuckoohash.Slots) {
		a := other(bi, s.alt[j], m)
		k := uint(L[a])<<4 | (j-r)&(cuckoohash.Slots-1)<<2 | j
		if a == bi {
			k |= 1 << 12
		}
		best = min(best, k)
	}
	j := best & (cuckoohash.Slots - 1)
	a := other(bi, s.alt[j], m)
	L[bi] = uint8(min(uint(L[a])+1, math.MaxUint8))
	fp := s.fp[j]
	s.fp[j], s.alt[j] = w.fp, offset(bi, oth, m)
	w.fp, w.bi, w.oth = fp, uint32(a), uint32(bi)
	w.kicks++
	if hasPrefetch {
		prefetch(unsafe.Pointer(&bs[0]), &w.bi, 1, int(unsafe.Sizeof(bs[0])))
	}
	return walkGoing
}

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
