package cuckoo

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unsafe"
)

// StaticParams are the parameters of a static filter: everything, besides
// the packed table, that a reader needs to answer lookups.
type StaticParams struct {
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
	pending []uint32
	todo    []stray // entries for the eviction walks of one round
	left    []stray // entries a walk of this round left without a slot
	rng     uint64
	touched uint64   // keeps the touching loads of place alive (no prefetch)
	queue   []node   // search's tree
	idx     []uint32 // search's buckets to prefetch
}

// slotSet is one bucket during a build: per slot, the fingerprint (0 =
// empty; slots fill from the front) and the other bucket its key may live
// in, as an offset from this one (see offset), so that evictions never go
// back to the keys' hashes. 16 bytes a bucket for f <= 16 (4.1 to 4.4 bytes a
// key), 24 beyond.
type slotSet[F uint16 | uint32] struct {
	fp  [slots]F
	alt [slots]int16
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
func (b *Builder) Build(dst []byte, keys *HashList, f int, semi bool, buckets func(n int) uint64) ([]byte, StaticParams) {
	if !validWidth(f) {
		panic("cuckoo: fingerprint width out of range")
	}
	n := keys.Len()
	if uint64(n) >= math.MaxUint32 {
		panic("cuckoo: too many keys for one static filter")
	}
	p := StaticParams{FingerprintBits: f, SemiSort: semi}
	if n == 0 {
		return dst, p
	}
	size := func(n int) uint64 { return min(max(buckets(n), (uint64(n)+slots-1)/slots, 1), maxStaticBuckets) }
	m := size(n)
	resized := false
	for attempt, reseeds := uint64(0), 0; ; attempt++ {
		var placed, homeless int
		if f <= 16 {
			placed, homeless = place(b, &b.small, keys, m, attempt, uint(f))
		} else {
			placed, homeless = place(b, &b.wide, keys, m, attempt, uint(f))
		}
		if homeless > 0 {
			// A few entries left over is bad luck in a few crowded
			// buckets, which another seed at the same size usually avoids;
			// many mean the table is past its load threshold.
			if homeless <= nearMiss && reseeds < maxReseeds {
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
// fewest entries it had left without a slot (0: every hash is in).
func place[F uint16 | uint32](b *Builder, buf *[]slotSet[F], keys *HashList, m, seed uint64, f uint) (int, int) {
	n := keys.Len()
	if uint64(cap(*buf)) < m {
		// Room for a few growth steps, so that a rebuild does not allocate.
		*buf = make([]slotSet[F], m, m+m/32+4)
	} else {
		*buf = (*buf)[:m]
		clear(*buf)
	}
	bs := *buf
	b.pending = b.pending[:0]
	b.rng = seed*0x9e3779b97f4a7c15 + 1
	placed := 0
	// The greedy pass works in batches: it computes the addresses of a batch
	// and prefetches (or, without prefetch, touches) both buckets of each key
	// before placing any, so that the cache misses of a batch overlap instead
	// of coming one after another. Batches of 64 keys measured the same as
	// 16 at 1M keys, where the table fits the L3, and 16% and 10% faster at
	// 4M and 16M keys, where it does not (medians of six interleaved runs).
	// The placements do not depend on the batch: keys are placed in order.
	const batch = 64
	var ii [batch][2]uint32
	var fps [batch]F
	var touch F
	for k0 := 0; k0 < n; k0 += batch {
		nb := min(batch, n-k0)
		for j := 0; j < nb; j++ {
			x := mix(keys.At(k0+j), seed)
			y := remix(x)
			i1 := reduce(x, m)
			i2 := second(i1, y, m)
			ii[j] = [2]uint32{uint32(i1), uint32(i2)}
			fps[j] = F(fingerprint(y, f))
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
			// fill and clash: with it they no longer inline, and a call per
			// bucket cost more than the words save (0.60-0.64x bloom's build
			// throughput against 0.69-0.70x). walk, run for few keys, keeps
			// the slot-by-slot reads; TestSlotWords holds the two equal.
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
			if c == slots {
				b.pending = append(b.pending, uint32(k0+j))
				continue
			}
			s.fp[c&(slots-1)], s.alt[c&(slots-1)] = fp, o
			placed++
		}
	}
	b.touched += uint64(touch)
	// Evictions for the keys the greedy pass could not place. A walk that
	// runs out of kicks leaves some entry homeless; it is retried in the next
	// round, so nothing is dropped before the attempt is given up.
	// A build that succeeds at load 0.975 uses about 2.2 kicks a key (1M to
	// 16M keys); one asked for more than the table's threshold holds can
	// use 15 and still fail, so its budget is better spent on a larger table.
	budget := 8*n + 4096
	b.left = b.left[:0]
	// Each round retries what the last left homeless, a third as many or
	// fewer while the table is below its threshold: a build of millions of
	// keys near it needs a dozen rounds, so the attempt is given up only
	// when rounds stop making progress (or the budget runs out).
	best, stalled := math.MaxInt, 0
	for len(b.pending) > 0 || len(b.left) > 0 {
		homeless := len(b.pending) + len(b.left)
		if homeless < best {
			best, stalled = homeless, 0
		} else if stalled++; stalled == maxStalls {
			return placed, best
		}
		if cap(b.todo) < homeless {
			b.todo = make([]stray, 0, homeless)
		}
		todo := append(b.todo[:0], b.left...)
		b.left = b.left[:0]
		for _, k := range b.pending {
			x := mix(keys.At(int(k)), seed)
			y := remix(x)
			i1 := reduce(x, m)
			todo = append(todo, stray{fingerprint(y, f), uint32(i1), uint32(second(i1, y, m))})
		}
		b.todo = todo
		b.pending = b.pending[:0]
		for k, e := range todo {
			if hasPrefetch && k+walkAhead < len(todo) {
				prefetch(unsafe.Pointer(&bs[0]), &todo[k+walkAhead].home, 2, int(unsafe.Sizeof(bs[0])))
			}
			res, left, used := walk(b, bs, m, F(e.fp), e.home, e.to)
			budget -= used
			switch res {
			case walkPlaced:
				placed++
			case walkFailed:
				b.left = append(b.left, left)
			}
			if budget < 0 {
				return placed, best
			}
		}
	}
	return placed, 0
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
	return (bits.Len64(slotWord(&s.fp)) + 15) >> 4
}

// holds16 is nonzero if and only if clash is zero, for 16-bit fingerprints:
// it compares the four slots at once, and a lane of x is zero where both
// the fingerprint and the offset match.
func holds16(s *slotSet[uint16], fp uint16, alt int16) uint64 {
	x := (slotWord(&s.fp) ^ uint64(fp)*lanes16) | (slotWord((*[slots]uint16)(unsafe.Pointer(&s.alt))) ^ uint64(uint16(alt))*lanes16)
	return (x - lanes16) &^ x & (lanes16 << 15)
}

// used is 1 for a nonzero x, else 0.
func used[F uint16 | uint32](x F) int { return int((uint64(x) + math.MaxUint32) >> 32) }

const walkKicks = 500

// walkAhead is how many entries ahead of its walk the walk phase prefetches
// an entry's two buckets: in a table beyond the cache the first two reads
// of every walk are misses. Medians of five interleaved scratch runs (fresh
// hash list each build): 1M keys 18.7 against 19.6 ns/key, 4M 24.4 against
// 26.4, 16M 41.2 against 47.3. Prefetching the eight buckets of the
// one-step lookahead as well measured no better, and was left out.
const walkAhead = 4

// A failed attempt that left at most nearMiss entries homeless is retried
// with another seed at the same size, up to maxReseeds times in a row; one
// that left more, or the last of those, grows the table.
const (
	nearMiss   = 8
	maxReseeds = 2
)

// maxStalls is how many rounds of walks in a row may fail to leave fewer
// entries homeless before a build attempt is given up.
const maxStalls = 3

func (b *Builder) next() uint64 {
	b.rng ^= b.rng << 13
	b.rng ^= b.rng >> 7
	b.rng ^= b.rng << 17
	return b.rng
}

const (
	walkPlaced = iota
	walkDup
	walkFailed
)

// stray is an entry without a slot: its fingerprint, the bucket it is to go
// in and its other bucket.
type stray struct {
	fp       uint32
	home, to uint32
}

// walk places fingerprint fp, whose buckets are i1 and i2. When both are
// full it first looks one step ahead for a resident whose other bucket has
// room, then walks at random, evicting, and every few kicks searches for a
// short path of evictions from where it stands (search). It returns what
// happened, the entry left without a slot when the walk failed, and the
// kicks used.
func walk[F uint16 | uint32](b *Builder, bs []slotSet[F], m uint64, fp F, i1, i2 uint32) (int, stray, int) {
	o1, o2 := offset(uint64(i1), uint64(i2), m), offset(uint64(i2), uint64(i1), m)
	c1, c2 := fill(&bs[i1]), fill(&bs[i2])
	switch {
	case min(clash(&bs[i1], fp, o1), clash(&bs[i2], fp, o2)) == 0:
		return walkDup, stray{}, 0
	case c1 < slots:
		bs[i1].fp[c1], bs[i1].alt[c1] = fp, o1
		return walkPlaced, stray{}, 0
	case c2 < slots:
		bs[i2].fp[c2], bs[i2].alt[c2] = fp, o2
		return walkPlaced, stray{}, 0
	}
	// One step ahead: move a resident of either bucket to its other bucket.
	if search(b, bs, m, fp, i1, i2, o1, o2, 1) > 0 {
		return walkPlaced, stray{}, 1
	}
	// Random walk: fp evicts a random resident of bucket bi and takes its
	// place; the evicted entry goes to its other bucket.
	bi, oth := uint64(i1), uint64(i2)
	if b.next()&1 == 0 {
		bi, oth = uint64(i2), uint64(i1)
	}
	for used := 1; used <= walkKicks; used++ {
		j := b.next() % slots
		s := &bs[bi]
		vfp, valt := s.fp[j], other(bi, s.alt[j], m)
		s.fp[j], s.alt[j] = fp, offset(bi, oth, m)
		fp, oth, bi = vfp, bi, valt
		t := &bs[bi]
		for j := 0; j < slots; j++ {
			if t.fp[j] == 0 {
				t.fp[j], t.alt[j] = fp, offset(bi, oth, m)
				return walkPlaced, stray{}, used
			}
		}
		if used%searchEvery == 0 {
			if n := search(b, bs, m, fp, uint32(bi), uint32(oth), offset(bi, oth, m), offset(oth, bi, m), searchDepth); n > 0 {
				return walkPlaced, stray{}, used + n
			}
		}
	}
	return walkFailed, stray{uint32(fp), uint32(bi), uint32(oth)}, walkKicks
}

// searchDepth bounds the moves of search's paths. Near the load threshold
// a random walk takes tens of kicks, each a read that waits for the one
// before it; search reads up to 168 buckets, a level at a time, each level
// after the first prefetched at once. Four or five levels measured slower
// than three (with one search before the walk): the deep searches cost more
// than the kicks they save.
const searchDepth = 3

// A random walk searches from its homeless entry's buckets every
// searchEvery kicks. At load 0.975 (Policy{13, semi, 0.975}, 1M keys) a
// build took 43-46 ns a key against 63-66 with walks that only kicked (six
// interleaved runs); FilterPolicy(10) and (16) and plain Policy{f=12},
// whose walks are short, measured the same. Searching after every 2, 8 or
// 16 kicks, or once before the walk, measured no better.
const searchEvery = 4

// Capacities of search's tree and of its list of one level's other buckets
// (the widest, level 3's).
const (
	searchNodes    = 2 + 2*slots + 2*slots*slots // levels 0, 1 and 2
	searchPrefetch = 2 * slots * slots * slots   // level 3
)

// node is a bucket of search's tree: the parent whose resident in slot
// moves into it (-1 for the two buckets of the entry).
type node struct {
	bucket uint32
	parent int32
	slot   int32
}

// search looks breadth first, up to depth (at most searchDepth) moves, for
// a path of evictions from bucket i1 or i2 (both full) to a bucket with
// room, and carries it out: each resident on the path moves to its other
// bucket, and fp takes the slot freed in i1 or i2 (o1 and o2 are its offsets
// there). It returns the number of moves, or 0 when there is no such path.
// Paths are tried in a fixed order (i1's slots before i2's, level by level),
// so the result is deterministic.
func search[F uint16 | uint32](b *Builder, bs []slotSet[F], m uint64, fp F, i1, i2 uint32, o1, o2 int16, depth int) int {
	if cap(b.queue) < searchNodes {
		b.queue = make([]node, 0, searchNodes)
		b.idx = make([]uint32, 0, searchPrefetch)
	}
	q := append(b.queue[:0], node{i1, -1, -1}, node{i2, -1, -1})
	start := 0
	for d := 1; d <= depth && start < len(q); d++ {
		end := len(q)
		// The other buckets of every resident of this level (a resident
		// whose other bucket is its own has alt 0 and maps to itself).
		idx := b.idx[:0]
		for e := start; e < end; e++ {
			bi := q[e].bucket
			for j := range slots {
				idx = append(idx, uint32(other(uint64(bi), bs[bi].alt[j], m)))
			}
		}
		b.idx = idx
		if hasPrefetch && d > 1 {
			// Every bucket of this level has been read: fetch their
			// residents' other buckets at once.
			prefetch(unsafe.Pointer(&bs[0]), &idx[0], len(idx), int(unsafe.Sizeof(bs[0])))
		}
		for e := start; e < end; e++ {
			bi := q[e].bucket
			for j, a := range idx[(e-start)*slots : (e-start+1)*slots] {
				switch {
				case a == bi: // both its buckets are this one
				case bs[a].fp[slots-1] == 0:
					if moveAlong(bs, m, q, e, j, a, fp, o1, o2) {
						return d
					}
				case d < depth:
					q = append(q, node{a, int32(e), int32(j)})
				}
			}
		}
		start = end
	}
	return 0
}

// moveAlong carries out the path that search found: the resident in slot j
// of q[e]'s bucket moves to bucket a, which has room, then each ancestor's
// resident moves into the slot freed below it, and fp takes the slot freed
// in the root (i1 or i2). It reports false, changing nothing, if the path
// visits a bucket twice (the tree does not rule that out).
func moveAlong[F uint16 | uint32](bs []slotSet[F], m uint64, q []node, e, j int, a uint32, fp F, o1, o2 int16) bool {
	var path [searchDepth + 1]uint32
	path[0] = a
	n := 1
	for k := e; k >= 0; k = int(q[k].parent) {
		for _, p := range path[:n] {
			if p == q[k].bucket {
				return false
			}
		}
		path[n] = q[k].bucket
		n++
	}
	bi := q[e].bucket
	t := &bs[a]
	c := fill(t)
	t.fp[c], t.alt[c] = bs[bi].fp[j], offset(uint64(a), uint64(bi), m)
	for q[e].parent >= 0 {
		p := int(q[e].parent)
		pb, ps := q[p].bucket, int(q[e].slot)
		bs[bi].fp[j], bs[bi].alt[j] = bs[pb].fp[ps], offset(uint64(bi), uint64(pb), m)
		e, bi, j = p, pb, ps
	}
	o := o1
	if e == 1 {
		o = o2
	}
	bs[bi].fp[j], bs[bi].alt[j] = fp, o
	return true
}

// encode appends the packed table of the placed keys to dst.
func (b *Builder) encode(dst []byte, keys *HashList, p StaticParams) []byte {
	f := uint(p.FingerprintBits)
	size, _ := tableBytes(p.Buckets, f, p.SemiSort)
	start := len(dst)
	dst = grow(dst, size)
	t, err := tableOn(dst[start:], p.Buckets, f, p.SemiSort)
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

func encodeSlots[F uint16 | uint32](t *table, bs []slotSet[F], semi bool) {
	if t.fast {
		// Buckets of at most 64 bits go in with one OR each into the zeroed
		// table, in order.
		f, bb := t.f, uint64(t.bucketBits)
		for i := range bs {
			s := &bs[i]
			if s.fp[0] == 0 && !semi {
				continue
			}
			fps := [slots]uint32{uint32(s.fp[0]), uint32(s.fp[1]), uint32(s.fp[2]), uint32(s.fp[3])}
			var w uint64
			if semi {
				w = semiWord(fps, f)
			} else {
				w = plainWord(fps, f)
			}
			pos := uint64(i) * bb
			off := pos >> 3
			v := binary.LittleEndian.Uint64(t.data[off:]) | w<<(pos&7)
			binary.LittleEndian.PutUint64(t.data[off:], v)
		}
		return
	}
	for i := range bs {
		s := &bs[i]
		fps := [slots]uint32{uint32(s.fp[0]), uint32(s.fp[1]), uint32(s.fp[2]), uint32(s.fp[3])}
		if fps != [slots]uint32{} || semi {
			t.setBucket(uint64(i), fps)
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

func rot32(y uint64) uint64 { return y<<32 | y>>32 }
