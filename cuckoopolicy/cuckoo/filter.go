package cuckoo

import (
	"errors"
	"fmt"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
)

// Defaults for a zero Config.
const (
	DefaultFingerprintBits = 12
	DefaultMaxKicks        = 500
)

// Limits on Config.
const (
	// MinPlainFingerprintBits is the narrowest fingerprint of the plain
	// dynamic layout. Widths 2 and 3 are stored in 4-bit slots: they save no
	// space over 4 bits and exist to study load against width (Fan et al.,
	// Table 2). The semi-sorted layout needs MinFingerprintBits.
	MinPlainFingerprintBits = 2
	// MaxKicksLimit is the largest Config.MaxKicks: an insert records its
	// evictions so that a failed one can be undone.
	MaxKicksLimit = 1 << 16
)

// Fingerprint widths Config.FingerprintBits takes (and, for the plain
// layout, down to MinPlainFingerprintBits).
const (
	MinFingerprintBits = 4
	MaxFingerprintBits = 32
)

// MaxBuckets bounds a filter's bucket count (2^48 buckets, far beyond any
// memory), so that sizes never overflow.
const MaxBuckets = 1 << 48

// stashSize is the number of victim slots: fingerprints whose eviction walk
// ran out of kicks. Contains checks them only while any is used.
const stashSize = 4

var (
	// ErrFull is returned by Insert when the key cannot be placed: its
	// eviction walk ran out of kicks while the victim stash was full, or its
	// two buckets already hold eight copies of its fingerprint. The filter is
	// unchanged.
	ErrFull = errors.New("cuckoo: filter is full")
	// ErrConfig is wrapped by the errors of New and NewGrowing for a bad
	// Config, capacity or bound.
	ErrConfig = errors.New("cuckoo: invalid configuration")
)

// Config sets up a Filter. The zero Config is the default: 12-bit plain
// fingerprints, 500 kicks, seed 0.
type Config struct {
	// FingerprintBits is the fingerprint width f: 4 to 32, or 2 to 32 for
	// the plain layout; 0 means DefaultFingerprintBits. The false-positive
	// rate is about 8*load/2^f. Narrow fingerprints also limit how full
	// the table gets (Fan et al., Table 2): at most eight keys share a
	// fingerprint and a pair of buckets, so for f <= 6 New sizes for a lower
	// load, the lower the larger the table (for f = 4, 0.64 at 10^3 buckets
	// and 0.29 at 10^6).
	FingerprintBits int
	// SemiSort stores buckets semi-sorted (Fan et al., section 5.2): one bit
	// less per fingerprint for the same false-positive rate, slower inserts.
	SemiSort bool
	// MaxKicks bounds the evictions of one insert: 1 to MaxKicksLimit, or 0
	// for DefaultMaxKicks. Fewer kicks make a failing insert cheaper but
	// fill the table less far, and less so the larger the table. Below 200
	// kicks New sizes the table for a lower load, so that its capacity still
	// holds: 0.53 at 1 kick, 0.87 at 32, 0.92 at 100.
	MaxKicks int
	// Seed is mixed into every key's hash; filters with different seeds
	// place keys independently. It also seeds the eviction walk, so a filter
	// is deterministic: the same operations give the same bytes.
	Seed uint64
}

// normalize fills in the defaults and validates c.
func (c Config) normalize() (Config, error) {
	if c.FingerprintBits == 0 {
		c.FingerprintBits = DefaultFingerprintBits
	}
	if c.MaxKicks == 0 {
		c.MaxKicks = DefaultMaxKicks
	}
	lo := MinPlainFingerprintBits
	if c.SemiSort {
		lo = MinFingerprintBits
	}
	if c.FingerprintBits < lo || c.FingerprintBits > MaxFingerprintBits {
		return c, fmt.Errorf("%w: FingerprintBits %d outside [%d, %d] (SemiSort %v)",
			ErrConfig, c.FingerprintBits, lo, MaxFingerprintBits, c.SemiSort)
	}
	if c.MaxKicks < 0 || c.MaxKicks > MaxKicksLimit {
		return c, fmt.Errorf("%w: MaxKicks %d outside [0, %d]", ErrConfig, c.MaxKicks, MaxKicksLimit)
	}
	return c, nil
}

// Filter is a dynamic cuckoo filter (Fan et al., CoNEXT 2014): a set of keys
// with insert, delete and a false-positive rate of about 8*load/2^f.
//
// Each key has a fingerprint and two buckets of four slots; the second bucket
// is derived from the first and the fingerprint alone (partial-key cuckoo
// hashing), so fingerprints can move without their keys. An insert that finds
// both buckets full evicts residents along a random walk of at most MaxKicks
// steps; the fingerprint left without a slot goes to a small victim stash, and
// when that is full the walk is undone and Insert returns ErrFull: a failed
// insert never loses a resident. Once the stash is full (the table is then at
// its limit, near 97% load) an insert tries a single eviction step and fails
// fast instead of walking; but while the filter holds fewer keys than the load
// New sizes its table for (deletes have emptied it since), it first walks
// stashed entries back into the table, so that a filter filled past its
// capacity and emptied below it takes keys again up to capacity. (With 2- and
// 3-bit fingerprints a few crowded pairs of buckets can outlast the deletes and
// keep an insert or two from going in: such narrow fingerprints crowd a table
// far more than wider ones.)
//
// A Filter is a multiset of fingerprints: inserting a key twice stores two
// copies, and eight copies of one key fit (two buckets of four; more only
// while some of them sit in the victim stash). Eight copies fill both of the
// key's buckets for good, and a later key whose two buckets are both filled
// that way has only the stash left: a filter that holds many keys eight
// times each may report ErrFull well below the capacity New guarantees for
// distinct keys. Delete removes one copy. Deleting a key that was never
// inserted may remove the fingerprint of another key that shares its
// fingerprint and buckets, which then becomes a false negative: delete only
// keys you inserted.
//
// The zero Filter has no room: Contains reports false and Insert returns
// ErrFull. It is ready for UnmarshalBinary. Use New to make one.
//
// A Filter is not safe for concurrent use when any goroutine mutates it
// (Insert, Delete, Reset, UnmarshalBinary); concurrent Contains, Count,
// LoadFactor and MarshalBinary with no writer are safe. Concurrent wraps a
// Filter with a lock.
type Filter struct {
	t        cuckoohash.Table // storage; t.f is max(fbits, MinFingerprintBits)
	fbits    uint             // fingerprint width
	half     uint64           // t.m / 2; t.m is even
	seed     uint64
	maxKicks int
	count    int
	nstash   int
	stash    [stashSize]stashEntry
	rng      uint64
	path     []move  // scratch: the evictions of the current insert
	sized    float64 // sizedLoad, once computed (0 before)
}

// stashEntry is a fingerprint without a slot and the lower bucket of its pair.
type stashEntry struct {
	b  uint64
	fp uint32
}

// move records one eviction: bucket b held old before it.
type move struct {
	b   uint64
	old [cuckoohash.Slots]uint32
}

// New returns an empty filter sized so that capacity distinct keys can be
// inserted: about capacity/0.95 slots for fingerprints of 8 bits or more
// (narrower ones get more room; see Config), plus a margin of two standard
// deviations that matters only for small filters; below 200 Config.MaxKicks
// it sizes for the lower load such short walks reach (see Config). Past
// capacity, inserts go on succeeding until the table is about 97% full for
// f >= 7 (at least 95%; a point less in tables of a few dozen buckets, and
// less again in tables of eight or fewer, where one bucket is a large share)
// with the default MaxKicks, less far with fewer kicks or narrower
// fingerprints (see Config). New returns an error
// wrapping ErrConfig for capacity < 1, a table beyond MaxBuckets or 64 TiB,
// or a bad cfg. It does not ask how much memory the machine has: a table
// within those limits but larger than that ends the process, as make does.
func New(capacity int, cfg Config) (*Filter, error) {
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	m, ok := bucketsFor(capacity, c.FingerprintBits, c.MaxKicks)
	if !ok {
		return nil, fmt.Errorf("%w: capacity %d", ErrConfig, capacity)
	}
	f := new(Filter)
	if err := f.init(m, c); err != nil {
		return nil, err
	}
	return f, nil
}

// NewBuckets returns an empty filter of exactly buckets buckets (an odd count
// is rounded up: the alternate bucket needs an even one), with no promise of
// a capacity: for experiments at a fixed table size, such as the load a
// table reaches by fingerprint width. It returns an error wrapping ErrConfig
// for buckets < 1 or beyond MaxBuckets, a table beyond 64 TiB, or a bad
// cfg; like New, it does not check the machine's memory.
func NewBuckets(buckets uint64, cfg Config) (*Filter, error) {
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	if buckets < 1 || buckets > MaxBuckets-1 {
		return nil, fmt.Errorf("%w: %d buckets", ErrConfig, buckets)
	}
	f := new(Filter)
	if err := f.init(buckets+buckets&1, c); err != nil {
		return nil, err
	}
	return f, nil
}

// init gives f an empty table of m buckets; c is normalized.
func (f *Filter) init(m uint64, c Config) error {
	sf := uint(max(c.FingerprintBits, MinFingerprintBits))
	if n, ok := cuckoohash.TableBytes(m, sf, c.SemiSort); !ok || uint64(n) > maxTableBytes {
		return fmt.Errorf("%w: %d buckets of %d-bit fingerprints is too large", ErrConfig, m, c.FingerprintBits)
	}
	t, err := cuckoohash.NewTable(m, sf, c.SemiSort)
	if err != nil {
		return fmt.Errorf("%w: %d buckets of %d-bit fingerprints", ErrConfig, m, c.FingerprintBits)
	}
	*f = Filter{
		t:        t,
		fbits:    uint(c.FingerprintBits),
		half:     m / 2,
		seed:     c.Seed,
		maxKicks: c.MaxKicks,
	}
	f.resetRNG()
	return nil
}

func (f *Filter) resetRNG() { f.rng = fmix64(f.seed^0x2545f4914f6cdd1d) | 1 }

// next is xorshift64: the eviction walk's choices.
func (f *Filter) next() uint64 {
	f.rng ^= f.rng << 13
	f.rng ^= f.rng >> 7
	f.rng ^= f.rng << 17
	return f.rng
}

// addr returns the buckets and fingerprint of the key with hash h; t.m > 0.
// The first bucket and the fingerprint come from independent mixes of h, as
// in the static filter.
func (f *Filter) addr(h uint64) (i1, i2 uint64, fp uint32) {
	x := cuckoohash.Mix(h, f.seed)
	i1 = cuckoohash.Reduce(x, f.t.M)
	fp = cuckoohash.Fingerprint(cuckoohash.Remix(x), f.fbits)
	return i1, f.alt(i1, fp), fp
}

// alt returns the other bucket of fingerprint fp in bucket i:
// (m - i - r) mod m with r = 2*reduce(H(fp), m/2) + 1 odd, an involution
// that never maps i to itself because m is even.
func (f *Filter) alt(i uint64, fp uint32) uint64 {
	m := f.t.M
	s := i + 2*cuckoohash.Reduce(fpHash(fp), f.half) + 1 // in [1, 2m-2]
	// m - s, plus m if that is negative: without a branch, which random
	// fingerprints would mispredict half the time (m <= MaxBuckets = 2^48,
	// so m - s is far inside int64 and its sign bit tells).
	d := m - s
	return d + m&uint64(int64(d)>>63)
}

// fpHash hashes a fingerprint for alt. A single multiply, as in remix,
// would leave small integers on a lattice: for some m (52, 78, 104, ...) every
// fingerprint's offset r had the same residue, which halved the buckets a
// walk could reach and cut the load those tables reached.
func fpHash(fp uint32) uint64 { return fmix64(uint64(fp)) }

// fmix64 is the MurmurHash3 finalizer: every input bit reaches every output
// bit, small inputs included. The dynamic filter's own derivations use it so
// that they do not depend on how mix and remix trade quality for speed.
func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// Contains reports whether key may be in the filter: always true for a key
// inserted and not deleted, and true for other keys with a probability of
// about 8*LoadFactor()/2^f.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(Hash(key)) }

// ContainsHash is Contains for a key whose Hash is h.
func (f *Filter) ContainsHash(h uint64) bool {
	if f.t.M == 0 {
		return false
	}
	i1, i2, fp := f.addr(h)
	return f.t.Contains(i1, i2, fp) || f.stashed(min(i1, i2), fp)
}

// holds reports whether buckets i1 and i2 or the stash hold fp: ContainsHash
// once the key is addressed. ContainsHash spells it out, since holds does
// not inline.
func (f *Filter) holds(i1, i2 uint64, fp uint32) bool {
	return f.t.Contains(i1, i2, fp) || f.stashed(min(i1, i2), fp)
}

// stashed reports whether the stash holds fp for the pair whose lower bucket
// is lo.
func (f *Filter) stashed(lo uint64, fp uint32) bool {
	return f.nstash > 0 && f.stashIndex(lo, fp) >= 0
}

func (f *Filter) stashIndex(lo uint64, fp uint32) int {
	for k := range f.nstash {
		if e := f.stash[k]; e.fp == fp && e.b == lo {
			return k
		}
	}
	return -1
}

// Delete removes one copy of key and reports whether it found one. Delete
// only keys that were inserted: a key never inserted may match, and remove,
// the fingerprint of another key (see Filter).
func (f *Filter) Delete(key []byte) bool { return f.DeleteHash(Hash(key)) }

// DeleteHash is Delete for a key whose Hash is h.
func (f *Filter) DeleteHash(h uint64) bool {
	if f.t.M == 0 {
		return false
	}
	i1, i2, fp := f.addr(h)
	return f.delete(i1, i2, fp)
}

// delete removes one copy of fingerprint fp from buckets i1 and i2 or the
// stash, and reports whether it found one.
func (f *Filter) delete(i1, i2 uint64, fp uint32) bool {
	if f.nstash > 0 {
		if k := f.stashIndex(min(i1, i2), fp); k >= 0 {
			f.unstash(k)
			f.count--
			return true
		}
	}
	for _, i := range [2]uint64{i1, i2} {
		if f.remove(i, fp) {
			f.count--
			f.rehome(i)
			return true
		}
	}
	return false
}

func (f *Filter) unstash(k int) {
	f.nstash--
	f.stash[k] = f.stash[f.nstash]
	f.stash[f.nstash] = stashEntry{}
}

// remove clears one slot of bucket i that holds fp.
func (f *Filter) remove(i uint64, fp uint32) bool {
	b := f.t.Bucket(i)
	for j := range b {
		if b[j] == fp {
			b[j] = 0
			f.t.SetBucket(i, b)
			return true
		}
	}
	return false
}

// rehome moves a stashed fingerprint whose pair includes bucket i into the
// slot just freed there.
func (f *Filter) rehome(i uint64) {
	for k := range f.nstash {
		e := f.stash[k]
		if e.b == i || f.alt(e.b, e.fp) == i {
			f.t.Put(i, e.fp)
			f.unstash(k)
			return
		}
	}
}

// Count returns the number of fingerprints stored: successful inserts minus
// successful deletes.
func (f *Filter) Count() int { return f.count }

// LoadFactor returns Count divided by the number of slots (4 per bucket).
// Stashed fingerprints count, so a tiny filter can exceed 1.
func (f *Filter) LoadFactor() float64 {
	if f.t.M == 0 {
		return 0
	}
	return float64(f.count) / float64(cuckoohash.Slots*f.t.M)
}

// Buckets returns the number of buckets: the table has 4*Buckets() slots.
func (f *Filter) Buckets() uint64 { return f.t.M }

// Config returns the filter's configuration, defaults filled in. For a zero
// Filter it is the zero Config.
func (f *Filter) Config() Config {
	if f.t.M == 0 {
		return Config{}
	}
	return Config{FingerprintBits: int(f.fbits), SemiSort: f.t.Semi, MaxKicks: f.maxKicks, Seed: f.seed}
}

// Reset empties the filter and restarts its eviction walk's random
// sequence; the size and configuration stay.
func (f *Filter) Reset() {
	clear(f.t.Data)
	f.count = 0
	f.nstash = 0
	f.stash = [stashSize]stashEntry{}
	f.resetRNG()
}
