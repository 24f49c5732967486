package cuckoo

import "github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"

// Insert adds one copy of key. It returns ErrFull, and leaves the filter
// unchanged, when the key cannot be placed.
func (f *Filter) Insert(key []byte) error { return f.InsertHash(Hash(key)) }

// InsertHash is Insert for a key whose Hash is h.
func (f *Filter) InsertHash(h uint64) error {
	if f.t.M == 0 {
		return ErrFull
	}
	i1, i2, fp := f.addr(h)
	return f.insert(i1, i2, fp)
}

// stepAside moves a resident of the full bucket i to its other bucket, if
// that has room, and puts fp in its place. It does not change the count.
func (f *Filter) stepAside(i uint64, fp uint32) bool {
	b := f.t.Bucket(i)
	for j := range b {
		if f.t.Put(f.alt(i, b[j]), b[j]) {
			b[j] = fp
			f.t.SetBucket(i, b)
			return true
		}
	}
	return false
}

func (f *Filter) insert(i1, i2 uint64, fp uint32) error {
	if f.t.Fast {
		// Both buckets are loaded before either is used, so that their
		// misses overlap. (Not a table method: it would not inline.)
		w1, w2 := f.t.Word(i1), f.t.Word(i2)
		if f.t.PutWord(i1, w1, fp) || f.t.PutWord(i2, w2, fp) {
			f.count++
			return nil
		}
	} else if f.t.Put(i1, fp) || f.t.Put(i2, fp) {
		f.count++
		return nil
	}
	if f.saturated(i1, i2, fp) {
		return ErrFull
	}
	if f.nstash == len(f.stash) && !f.drainStash() {
		// The stash fills when the table is at its limit (about 97% load):
		// a walk would almost surely be undone. Try one eviction step from
		// each bucket and fail fast, so that a full filter rejects an
		// insert in about a microsecond.
		if f.stepAside(i1, fp) || f.stepAside(i2, fp) {
			f.count++
			return nil
		}
		return ErrFull
	}
	if f.walk(i1, i2, fp, true) {
		f.count++
		return nil
	}
	return ErrFull
}

// drainStash makes room in a full stash when the filter holds fewer keys
// than the load New sizes its table for: the table filled to its limit and
// deletes have emptied it since, but a stashed entry leaves the stash only
// when a delete frees a slot in its own pair of buckets. It walks stashed
// entries back into the table, one after another until one goes, and reports
// whether one did; when none did, the filter is as it was (the walks' random
// state included), so that an insert that then fails changes nothing.
func (f *Filter) drainStash() bool {
	if f.sized == 0 {
		f.sized = sizedLoad(int(f.fbits), f.maxKicks, f.t.M)
	}
	if float64(f.count) >= f.sized*float64(cuckoohash.Slots*f.t.M) {
		return false
	}
	rng := f.rng
	for k := f.nstash - 1; k >= 0; k-- {
		e := f.stash[k]
		i1, i2 := e.b, f.alt(e.b, e.fp)
		if f.t.Put(i1, e.fp) || f.t.Put(i2, e.fp) || f.walk(i1, i2, e.fp, false) {
			f.unstash(k)
			return true
		}
	}
	f.rng = rng
	return false
}

// walk places fp, both of whose buckets i1 and i2 are full, by evicting
// residents along a random walk of at most maxKicks steps. The entry left
// without a slot when the kicks run out goes to the stash if stash is set and
// the stash has room; else the walk is undone and walk reports false. It does
// not change the count.
func (f *Filter) walk(i1, i2 uint64, fp uint32, stash bool) bool {
	if f.path == nil {
		f.path = make([]move, 0, f.maxKicks)
	}
	path := f.path[:0]
	i, cur := i1, fp
	if f.next()&4 != 0 {
		i = i2
	}
	for range f.maxKicks {
		// Look one step ahead: a resident whose other bucket has room
		// moves there and ends the walk. This lifts the load at the first
		// failure by about one point over a blind walk.
		if f.stepAside(i, cur) {
			return true
		}
		b := f.t.Bucket(i)
		path = append(path, move{b: i, old: b})
		j := f.next() & (cuckoohash.Slots - 1)
		out := b[j]
		b[j] = cur
		f.t.SetBucket(i, b)
		cur = out
		i = f.alt(i, cur)
		if f.t.Put(i, cur) {
			return true
		}
	}
	if stash && f.nstash < len(f.stash) {
		f.stash[f.nstash] = stashEntry{b: min(i, f.alt(i, cur)), fp: cur}
		f.nstash++
		return true
	}
	// Undo the walk, last eviction first: every bucket gets back the exact
	// bytes it had (a semi-sorted bucket read in stored order encodes to
	// the same bytes).
	for k := len(path) - 1; k >= 0; k-- {
		f.t.SetBucket(path[k].b, path[k].old)
	}
	return false
}

// saturated reports whether all eight slots of the pair hold fp: no walk
// can make room, since every copy can only move within the pair.
func (f *Filter) saturated(i1, i2 uint64, fp uint32) bool {
	b1, b2 := f.t.Bucket(i1), f.t.Bucket(i2)
	for j := range b1 {
		if b1[j] != fp || b2[j] != fp {
			return false
		}
	}
	return true
}
