package static

import (
	"math"
	"unsafe"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
)

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
	var ws walks[F]
	next, live, placed := 0, 0, 0
	for l := range lanes {
		if next < len(todo) {
			ws.start(l, bs, todo[next], b.far)
			next++
			live++
		}
	}
	for live > 0 {
		for l := range lanes {
			if ws.fp[l] == 0 {
				continue
			}
			res := ws.step(l, b, bs, m)
			if res == walkGoing {
				continue
			}
			*budget -= ws.kicks[l]
			switch res {
			case walkPlaced:
				placed++
			case walkFailed:
				b.left = append(b.left, stray{uint32(ws.fp[l]), ws.bi[l], ws.oth[l]})
			}
			if next < len(todo) {
				ws.start(l, bs, todo[next], b.far)
				next++
			} else {
				ws.fp[l] = 0
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

// evictKey ranks the resident in slot j of bucket bi, whose other bucket is
// a, for eviction (the lowest key goes): the label of a, then j rotated by r,
// the last two bits j itself; a resident whose two buckets are both bi
// ranks after every other.
func evictKey(L []uint8, a, bi uint64, r, j uint) uint {
	k := uint(L[a])<<4 | (j-r)&(cuckoohash.Slots-1)<<2 | j
	if a == bi {
		k |= 1 << 12
	}
	return k
}

// walkKicks bounds the evictions of one walk; a stray still without a slot
// after them waits for the next round.
const walkKicks = 500

// lanes is how many walks run side by side.
const lanes = 8

// maxStalls is how many rounds of walks in a row may fail to leave fewer
// strays before a build attempt is given up.
const maxStalls = 3

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

// walks are the walks of a round that run side by side, one a lane: per
// lane, the entry in hand (its fingerprint fp, 0 in a lane without a walk)
// is to go in bucket bi, whose other bucket is oth (before its first step,
// bi and oth are the entry's two buckets), after kicks evictions. The lanes'
// fields are arrays, so that the test of one lane's entry against the
// others' (held) reads a few words.
type walks[F uint16 | uint32] struct {
	fp      [lanes]F
	bi, oth [lanes]uint32
	kicks   [lanes]int
}

// start starts the walk of e in lane l and, if far, prefetches its two
// buckets.
func (ws *walks[F]) start(l int, bs []slotSet[F], e stray, far bool) {
	if hasPrefetch && far {
		prefetch(unsafe.Pointer(&bs[0]), &e.home, 2, int(unsafe.Sizeof(bs[0])))
	}
	ws.fp[l], ws.bi[l], ws.oth[l], ws.kicks[l] = F(e.fp), e.home, e.to, 0
}

// held reports whether another lane than l has in hand the entry that lane
// l has yet to take its first step with. Copies of one key all wait for the
// walks when the greedy pass found both its buckets full; a copy checked
// only against the buckets would miss one that another walk holds, and the
// entry would be placed twice. (A copy that is a stray after a failed walk
// is checked when it is retried.)
func (ws *walks[F]) held(l int) bool {
	fp, bi, oth := ws.fp[l], ws.bi[l], ws.oth[l]
	for k, v := range ws.fp {
		if v == fp && k != l && // the rare match first
			(ws.bi[k] == bi && ws.oth[k] == oth || ws.bi[k] == oth && ws.oth[k] == bi) {
			return true
		}
	}
	return false
}

// step takes the walk of lane l one kick further. Its first step places the
// entry in either of its buckets if one has room (or finds it there
// already, or in another lane's hand); later steps place it in bi if that
// has room. Else it evicts a resident of bi, chosen by the buckets' labels,
// as in local search allocation (Khosla, "Balls into bins made faster", ESA
// 2013): a bucket's label is an estimate, from below, of the evictions from
// it to a bucket with room; the walk evicts the resident whose other bucket
// has the lowest label and sets bi's label to one more than that. Walks so
// led turn away from the buckets that earlier walks found crowded. step
// returns walkGoing while the walk goes on. (These walks replaced random
// breadth-first walks, which built slower and needed more seeds near the
// threshold: see bench/NOTES.md.)
func (ws *walks[F]) step(l int, b *Builder, bs []slotSet[F], m uint64) int {
	L := b.labels
	fp, bi, oth := ws.fp[l], uint64(ws.bi[l]), uint64(ws.oth[l])
	if ws.kicks[l] == 0 {
		o1, o2 := offset(bi, oth, m), offset(oth, bi, m)
		s1, s2 := &bs[bi], &bs[oth]
		var c1, c2 int
		var dup bool
		if unsafe.Sizeof(fp) == 2 { // as in greedy
			t1, t2 := (*slotSet[uint16])(unsafe.Pointer(s1)), (*slotSet[uint16])(unsafe.Pointer(s2))
			c1, c2 = fill16(t1), fill16(t2)
			dup = holds16(t1, uint16(fp), o1)|holds16(t2, uint16(fp), o2) != 0
		} else {
			c1, c2 = fill(s1), fill(s2)
			dup = min(clash(s1, fp, o1), clash(s2, fp, o2)) == 0
		}
		switch {
		case dup || ws.held(l):
			return walkDup
		case c1 < cuckoohash.Slots:
			s1.fp[c1], s1.alt[c1] = fp, o1
			L[bi] = max(L[bi], uint8(c1+1)/cuckoohash.Slots)
			return walkPlaced
		case c2 < cuckoohash.Slots:
			s2.fp[c2], s2.alt[c2] = fp, o2
			L[oth] = max(L[oth], uint8(c2+1)/cuckoohash.Slots)
			return walkPlaced
		}
		if L[oth] < L[bi] || L[oth] == L[bi] && b.next()&1 == 0 {
			bi, oth = oth, bi
		}
	} else {
		t := &bs[bi]
		var c int
		if unsafe.Sizeof(fp) == 2 {
			c = fill16((*slotSet[uint16])(unsafe.Pointer(t)))
		} else {
			c = fill(t)
		}
		if c < cuckoohash.Slots {
			t.fp[c], t.alt[c] = fp, offset(bi, oth, m)
			L[bi] = max(L[bi], uint8(c+1)/cuckoohash.Slots)
			return walkPlaced
		}
		if ws.kicks[l] == walkKicks {
			return walkFailed
		}
	}
	// The resident to evict: the lowest label of its other bucket, ties
	// broken at random (the rotation r), a resident whose two buckets are
	// both bi last. The choice has no branch: it cannot be predicted.
	s := &bs[bi]
	r := uint(b.next())
	a0, a1, a2, a3 := other(bi, s.alt[0], m), other(bi, s.alt[1], m), other(bi, s.alt[2], m), other(bi, s.alt[3], m)
	best := min(evictKey(L, a0, bi, r, 0), evictKey(L, a1, bi, r, 1), evictKey(L, a2, bi, r, 2), evictKey(L, a3, bi, r, 3))
	j := best & (cuckoohash.Slots - 1)
	a := [cuckoohash.Slots]uint64{a0, a1, a2, a3}[j]
	L[bi] = uint8(min(best>>4&math.MaxUint8+1, math.MaxUint8)) // L[a]+1: bits 4 to 11 of a's key
	ws.fp[l] = s.fp[j]
	s.fp[j], s.alt[j] = fp, offset(bi, oth, m)
	ws.bi[l], ws.oth[l] = uint32(a), uint32(bi)
	ws.kicks[l]++
	if hasPrefetch && b.far {
		prefetch(unsafe.Pointer(&bs[0]), &ws.bi[l], 1, int(unsafe.Sizeof(bs[0])))
	}
	return walkGoing
}
