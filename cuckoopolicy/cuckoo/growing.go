package cuckoo

import (
	"fmt"
	"math"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
)

// Growing is a cuckoo filter without a fixed capacity: a chain of Filters
// (stages), each new one twice as large as the one before and with
// fingerprints wide enough for half the false-positive budget that is left,
// so that the false-positive rate of the whole chain stays below the bound
// given to NewGrowing however far it grows (Fan et al. note that a full cuckoo
// filter must expand; a fingerprint cannot be rehashed into a larger table,
// so the old stages stay and new keys go to the newest).
//
// Delete is exact for keys that were inserted. Deleting from the first stage
// that matches the key would remove another key's fingerprint when the match
// is a false positive of that stage, so Insert keeps every copy of a key in
// the first stage that matches it: a key that already matches some stage
// (inserted before, or a false positive there) is added to that stage, and
// when that stage is full, counted against its matching fingerprint in a
// small side table instead. A key that matches no stage goes to the newest
// one. This is sound because only the newest stage ever gains a fingerprint
// that matches keys it did not match before, so the first stage a held key
// matches never changes while the key is held, and Delete takes a copy from
// there (from the side table first). The side table holds about
// (false-positive rate) x (inserts into full stages) entries, plus copies of
// one key beyond the eight a stage holds.
//
// The zero Growing has no stages: Contains reports false and Insert returns
// ErrFull. Use NewGrowing.
//
// A Growing is not safe for concurrent use when any goroutine mutates it
// (Insert, Delete, Reset, UnmarshalBinary); concurrent Contains, Count,
// Stages, FalsePositiveBound and MarshalBinary with no writer are safe.
type Growing struct {
	stages   []growStage
	capacity int     // the first stage's
	maxFPR   float64 // the bound for the whole chain
	cfg      Config  // normalized; FingerprintBits and Seed vary by stage
	extra    map[classKey]int
	count    int
}

type growStage struct {
	f *Filter
	// full is set when an insert into the stage failed for want of room
	// (not because the key's two buckets hold eight copies of it already)
	// and cleared when a delete frees a slot in it: inserts skip a full
	// stage's eviction walk.
	full bool
}

// classKey names a fingerprint class of one stage: the fingerprint and the
// lower of its two buckets, which keys of one class share.
type classKey struct {
	stage int
	lo    uint64
	fp    uint32
}

// NewGrowing returns an empty growing filter whose first stage holds
// capacity keys and whose expected false-positive rate stays below maxFPR,
// which must be in (0, 0.5]; below about 4e-9 (6e-9 for a first stage of a
// few keys) even the first stage would need fingerprints wider than 32 bits,
// and NewGrowing returns an error. cfg.FingerprintBits must be 0 (each
// stage's width follows from maxFPR); stage k uses seed cfg.Seed+k. Errors
// wrap ErrConfig.
func NewGrowing(capacity int, maxFPR float64, cfg Config) (*Growing, error) {
	if cfg.FingerprintBits != 0 {
		return nil, fmt.Errorf("%w: Growing chooses FingerprintBits from the bound; set 0", ErrConfig)
	}
	if !(maxFPR > 0 && maxFPR <= 0.5) {
		return nil, fmt.Errorf("%w: false-positive bound %v outside (0, 0.5]", ErrConfig, maxFPR)
	}
	if capacity < 1 {
		return nil, fmt.Errorf("%w: capacity %d", ErrConfig, capacity)
	}
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	g := &Growing{capacity: capacity, maxFPR: maxFPR, cfg: c, extra: map[classKey]int{}}
	if err := g.grow(); err != nil {
		return nil, fmt.Errorf("%w: first stage: %v", ErrConfig, err)
	}
	return g, nil
}

// stageBound is a stage's worst false-positive rate: a query matches each
// stored fingerprint with probability 2/(m(2^f-1)) (its fingerprint and one
// of its buckets), and the stage stores at most 4m + stash fingerprints.
func stageBound(m uint64, f int) float64 {
	return 2 * float64(cuckoohash.Slots*m+stashSize) / (float64(m) * float64(uint64(1)<<f-1))
}

// maxStages bounds a Growing's stages: the first stage's capacity doubles
// with each, and stays an int.
const maxStages = 62

// grow appends stage k: stageCapacity(k) keys, the narrowest fingerprint
// whose stageBound fits maxFPR/2^(k+1).
func (g *Growing) grow() error {
	k := len(g.stages)
	capacity, ok := g.stageCapacity(k)
	if !ok {
		return fmt.Errorf("%w: growing filter cannot add stage %d", ErrFull, k)
	}
	budget := math.Ldexp(g.maxFPR, -(k + 1))
	for fb := MinFingerprintBits; fb <= MaxFingerprintBits; fb++ {
		m, ok := bucketsFor(capacity, fb, g.cfg.MaxKicks)
		if !ok {
			return fmt.Errorf("%w: growing filter cannot add stage %d of %d keys", ErrFull, k, capacity)
		}
		if stageBound(m, fb) > budget {
			continue
		}
		c := g.cfg
		c.FingerprintBits, c.Seed = fb, g.cfg.Seed+uint64(k)
		f := new(Filter)
		if err := f.init(m, c); err != nil {
			return fmt.Errorf("%w: growing filter cannot add stage %d: %v", ErrFull, k, err)
		}
		g.stages = append(g.stages, growStage{f: f})
		return nil
	}
	return fmt.Errorf("%w: stage %d would need fingerprints wider than %d bits to stay within %v",
		ErrFull, k, MaxFingerprintBits, g.maxFPR)
}

// stageCapacity returns the number of keys stage k is sized for: the first
// stage's capacity doubled k times, but at most twice the slots of stage k-1.
// In a chain NewGrowing made the cap never binds (each stage has more slots
// than keys it was sized for); in one UnmarshalBinary made, it keeps a new
// stage within a small multiple of the last one, whose table the encoding
// paid for, whatever capacity it records.
func (g *Growing) stageCapacity(k int) (int, bool) {
	if k >= maxStages || g.capacity > math.MaxInt>>k {
		return 0, false
	}
	capacity := g.capacity << k
	if k > 0 {
		capacity = int(min(uint64(capacity), 2*cuckoohash.Slots*g.stages[k-1].f.t.M))
	}
	return capacity, true
}

// Insert adds one copy of key, adding a stage when the newest is full. It
// returns an error wrapping ErrFull only when no stage can be added: the
// 63rd, a stage beyond MaxBuckets or the 64 TiB table limit, or one that
// would need fingerprints wider than 32 bits (after 28 - log2(1/maxFPR)
// stages, rounded up: 9 at maxFPR = 1e-6, 8 at 2^-20); the filter is then
// unchanged, and a later key whose buckets have room still goes in. A stage
// that is within those limits but larger than the memory the machine has
// fails as any Go allocation does: the runtime ends the process.
func (g *Growing) Insert(key []byte) error { return g.InsertHash(Hash(key)) }

// InsertHash is Insert for a key whose Hash is h.
func (g *Growing) InsertHash(h uint64) error {
	if len(g.stages) == 0 {
		return ErrFull
	}
	for k := range g.stages {
		s := &g.stages[k]
		i1, i2, fp := s.f.addr(h)
		if !s.f.holds(i1, i2, fp) {
			continue
		}
		if !s.full {
			if s.f.insert(i1, i2, fp) == nil {
				g.count++
				return nil
			}
			// A ninth copy of one key fails because the key's two buckets
			// hold eight copies already, not because the stage is full:
			// newer keys must still go to it.
			s.full = !s.f.saturated(i1, i2, fp)
		}
		g.extra[classKey{k, min(i1, i2), fp}]++
		g.count++
		return nil
	}
	n := len(g.stages)
	if !g.stages[n-1].full && g.stages[n-1].f.InsertHash(h) == nil {
		g.count++
		return nil
	}
	// The newest stage is marked full only once a stage is added after it:
	// an insert that fails changes nothing.
	if err := g.grow(); err != nil {
		return err
	}
	g.stages[n-1].full = true
	if err := g.stages[n].f.InsertHash(h); err != nil {
		return err // unreachable: the stage is empty
	}
	g.count++
	return nil
}

// Contains reports whether key may be in the filter: always true for a key
// inserted and not deleted, and true for others with a probability below
// FalsePositiveBound.
func (g *Growing) Contains(key []byte) bool { return g.ContainsHash(Hash(key)) }

// ContainsHash is Contains for a key whose Hash is h.
func (g *Growing) ContainsHash(h uint64) bool {
	for k := len(g.stages) - 1; k >= 0; k-- {
		if g.stages[k].f.ContainsHash(h) {
			return true
		}
	}
	return false
}

// Delete removes one copy of key and reports whether it found one. As with
// Filter, delete only keys that were inserted.
func (g *Growing) Delete(key []byte) bool { return g.DeleteHash(Hash(key)) }

// DeleteHash is Delete for a key whose Hash is h.
func (g *Growing) DeleteHash(h uint64) bool {
	for k := range g.stages {
		s := &g.stages[k]
		i1, i2, fp := s.f.addr(h)
		if !s.f.holds(i1, i2, fp) {
			continue
		}
		// Copies counted in the side table go first, so that the class
		// keeps a stored fingerprint while any copy is live.
		ck := classKey{k, min(i1, i2), fp}
		if n := g.extra[ck]; n > 0 {
			if n == 1 {
				delete(g.extra, ck)
			} else {
				g.extra[ck] = n - 1
			}
			g.count--
			return true
		}
		if s.f.delete(i1, i2, fp) {
			s.full = false
			g.count--
			return true
		}
		return false // unreachable: the stage matched h
	}
	return false
}

// Count returns the number of keys held: successful inserts minus successful
// deletes.
func (g *Growing) Count() int { return g.count }

// Stages returns the number of stages.
func (g *Growing) Stages() int { return len(g.stages) }

// FalsePositiveBound returns the false-positive rate expected at the current
// loads, rounded up: the sum over stages of 2*count/(buckets*(2^f-1)), the
// chance that a key matches one of the fingerprints stored. It is at most the
// bound given to NewGrowing.
func (g *Growing) FalsePositiveBound() float64 {
	var p float64
	for _, s := range g.stages {
		f := s.f
		p += 2 * float64(f.count) / (float64(f.t.M) * float64(uint64(1)<<f.fbits-1))
	}
	return p
}

// Reset empties the filter and drops every stage but the first.
func (g *Growing) Reset() {
	if len(g.stages) == 0 {
		return
	}
	clear(g.stages[1:])
	g.stages = g.stages[:1]
	g.stages[0].f.Reset()
	g.stages[0].full = false
	clear(g.extra)
	g.count = 0
}
