package cuckoopolicy

import (
	"fmt"
	"math"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/family"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/static"
)

// PolicyName is the policy's on-disk name, which every FilterPolicy and
// Policy returns from Name: sstables name their filter blocks
// "fullfilter.pebble_cuckoo.v1", OPTIONS files name the levels' policy by it,
// and FilterUsage's rows carry it. It never changes.
const PolicyName = "pebble_cuckoo.v1"

// Budget and load limits.
const (
	// MinBitsPerKey and MaxBitsPerKey bound FilterPolicy's budget: a smaller
	// budget is raised to MinBitsPerKey, a larger one lowered to
	// MaxBitsPerKey.
	MinBitsPerKey = 4
	MaxBitsPerKey = 32

	// maxLoad is the highest load the budget rule plans for: the static
	// builder reaches it at every size, with room to spare below the (2,4)
	// cuckoo threshold of about 0.977.
	maxLoad = family.MaxLoad

	// DefaultLoadFactor is Policy's load when it names a fingerprint width
	// and no load.
	DefaultLoadFactor = 0.95
	// MinLoadFactor and MaxLoadFactor bound Policy.LoadFactor.
	MinLoadFactor = 0.25
	MaxLoadFactor = 0.98
)

// FilterPolicy is a cuckoo-filter policy with a budget of bits per key: the
// drop-in replacement for bloom.FilterPolicy of the same value. Each table's
// block takes at most the bytes bloom.FilterPolicy of the same budget would
// take on it, in semi-sorted buckets of the fingerprint width that gives the
// fewest false positives in those bytes at a load the builder always
// reaches, or, on a table of at most 64 keys where bloom's table has fewer
// false positives in those bytes, bloom's table itself (FORMAT.md gives the
// rule and its false-positive rates). A budget below MinBitsPerKey or above
// MaxBitsPerKey is clamped to that range: FilterPolicy(0) and negative
// budgets write filters of 4 bits per key, the fewest it writes; for
// no filter, use pebble.NoFilterPolicy.
//
// Every FilterPolicy, whatever its budget, reads every block this package
// writes.
type FilterPolicy int

// Policy is an explicit cuckoo-filter configuration, for experiments and for
// the plain bucket layout. Policy is comparable, as Pebble requires.
//
// The zero Policy writes the same filters as FilterPolicy(10) would in its
// layout: FingerprintBits 0 takes the width the budget rule gives a 10-bit
// budget (10 semi-sorted, 9 plain), and LoadFactor 0 then sizes the table as
// that rule does. A LoadFactor that is not above 0 (negative, or NaN) counts
// as 0. A width outside [4, 32] is clamped; LoadFactor 0 with an explicit
// width means DefaultLoadFactor, and a positive load is clamped to
// [MinLoadFactor, MaxLoadFactor]. Above about 0.975 the builder must grow the
// table to place every key, so the load reached may be lower than asked.
type Policy struct {
	FingerprintBits int     // bits per fingerprint; 0 = from the budget rule
	SemiSort        bool    // semi-sorted buckets: one bit per key less
	LoadFactor      float64 // target load of the table; 0 = default
}

var (
	_ pebble.FilterPolicy = FilterPolicy(0)
	_ pebble.FilterPolicy = Policy{}
)

// Name implements the pebble.FilterPolicy interface. It returns
// "pebble_cuckoo.v1" for every budget: Pebble writes it into each sstable's
// metaindex ("fullfilter.pebble_cuckoo.v1") and into OPTIONS files, and
// readers find the policy by it, so it never changes. Each block carries its
// own parameters, and a new block format gets a new version in the block's
// trailer, not a new name.
func (p FilterPolicy) Name() string { return PolicyName }

// MayContain implements the pebble.FilterPolicy interface. It answers true
// for anything it cannot vouch for: another filter type, a block too short,
// a wrong magic, version or check, unknown flags, a width it does not
// support, a length that does not match the bucket count. Every instance
// reads every block of this policy, whatever its budget.
func (p FilterPolicy) MayContain(ftype pebble.FilterType, filter, key []byte) bool {
	if ftype != pebble.TableFilter {
		return true
	}
	n := len(filter)
	if n < shortTrailerLen {
		return true
	}
	// Hash first: only the filter is live across the call, so little is
	// spilled around it.
	h := cuckoohash.Hash(key)
	a, w := shortWords(filter)
	if !shortOK(a, w) {
		return mayContainLong(filter, key, h)
	}
	// A version 3 block: the table, then the short trailer, whose first 8
	// bytes are the table's padding. static.Lookup checks the width and the
	// table length itself (no buckets is not a table: it answers true). The
	// table's cap is its length, so that cap(filter) need not be kept across
	// the hash call.
	if tooManyKeys(uint32(a>>32), a&0xffffffff) {
		return true
	}
	return static.Lookup(filter[:n-8:n-8], a&0xffffffff, w&0xffff, uint(w>>32&0xff), w&(flagSemiSort<<40) != 0, h)
}

// mayContainLong is MayContain for a raw bloom block and for a block with
// the 32-byte trailer of versions 1 and 2: the tables earlier releases
// wrote, empty tables, unfiltered and bloom blocks.
func mayContainLong(filter, key []byte, h uint64) bool {
	if isRawBloom(filter) {
		return bloomMayContain(filter, key)
	}
	n := len(filter)
	if n < trailerLen {
		return true
	}
	m, seed, kc, w := trailerWords(filter)
	if !trailerOK(m, seed, kc, w) && trailerReason(m, seed, kc, w) != okBlock {
		return true
	}
	if tooManyKeys(uint32(kc), m) {
		// Keys without buckets: an unfiltered block, a bloom block, or a
		// table too large to filter.
		if w>>8&0xff == flagBloom && m == 0 {
			return bloomMayContain(filter[:n-trailerLen], key)
		}
		return true
	}
	return static.Lookup(filter[:n-trailerLen:n-trailerLen], m, seed, uint(w&0xff), w&(flagSemiSort<<8) != 0, h)
}

// NewWriter implements the pebble.FilterPolicy interface. It writes table
// filters whatever ftype says: pebble.TableFilter is the only filter type
// Pebble has, and MayContain answers true for any other.
func (p FilterPolicy) NewWriter(ftype pebble.FilterType) pebble.FilterWriter {
	return newWriter(p.config())
}

// Name implements the pebble.FilterPolicy interface. It returns
// "pebble_cuckoo.v1", as FilterPolicy.Name does: blocks of every Policy and
// every FilterPolicy are one family.
func (p Policy) Name() string { return PolicyName }

// MayContain implements the pebble.FilterPolicy interface, as
// FilterPolicy.MayContain does.
func (p Policy) MayContain(ftype pebble.FilterType, filter, key []byte) bool {
	return FilterPolicy(0).MayContain(ftype, filter, key)
}

// NewWriter implements the pebble.FilterPolicy interface, as
// FilterPolicy.NewWriter does.
func (p Policy) NewWriter(ftype pebble.FilterType) pebble.FilterWriter {
	return newWriter(p.config())
}

// String returns the policy as Go source, for logs and test names. A budget
// outside [MinBitsPerKey, MaxBitsPerKey] is followed by the budget used, as
// in "cuckoopolicy.FilterPolicy(40) (32 bits per key)".
func (p FilterPolicy) String() string {
	s := fmt.Sprintf("cuckoopolicy.FilterPolicy(%d)", int(p))
	if b := clampBudget(int(p)); b != int(p) {
		s += fmt.Sprintf(" (%d bits per key)", b)
	}
	return s
}

// String returns the policy as Go source, for logs and test names, followed
// by what it builds where that differs from the fields: the fingerprint width
// and load after defaults and clamping, or the bits per key of the budget
// rule.
func (p Policy) String() string {
	s := fmt.Sprintf("cuckoopolicy.Policy{FingerprintBits: %d, SemiSort: %v, LoadFactor: %v}", p.FingerprintBits, p.SemiSort, p.LoadFactor)
	c := p.config()
	switch {
	case c.bitsPerKey > 0:
		s += fmt.Sprintf(" (f=%d, %d bits per key)", c.f, c.bitsPerKey)
	case c.f != p.FingerprintBits || c.load != p.LoadFactor:
		s += fmt.Sprintf(" (f=%d, load %v)", c.f, c.load)
	}
	return s
}

// config is what a writer needs: the layout and how many buckets n keys get.
type config struct {
	f    int
	semi bool
	// bitsPerKey > 0: size the table so the whole block takes at most
	// bitsPerKey*n bits, but never load it past maxLoad.
	bitsPerKey int
	// load > 0: size the table for this load.
	load float64
	// unfiltered: write an unfiltered block, the trailer alone.
	unfiltered bool
	// bloom > 0: write a bloom block, bloom.FilterPolicy(bloom)'s table
	// in this package's trailer.
	bloom int
}

// budgetWidth is the budget rule: the widest f whose table, at bitsPerKey
// bits a key, is loaded no more than maxLoad. A bucket entry costs f bits,
// f-1 when semi-sorted, so the load is (f-s)/bitsPerKey.
func budgetWidth(bitsPerKey int, semi bool) int {
	s := 0
	if semi {
		s = 1
	}
	f := int(math.Floor(maxLoad*float64(bitsPerKey))) + s
	return min(max(f, cuckoohash.MinFingerprintBits), cuckoohash.MaxFingerprintBits)
}

func clampBudget(b int) int { return min(max(b, MinBitsPerKey), MaxBitsPerKey) }

func (p FilterPolicy) config() config {
	b := clampBudget(int(p))
	return config{f: budgetWidth(b, true), semi: true, bitsPerKey: b}
}

func (p Policy) config() config {
	c := config{f: p.FingerprintBits, semi: p.SemiSort}
	lf := p.LoadFactor
	if c.f == 0 {
		c.f = budgetWidth(10, p.SemiSort)
		if !(lf > 0) { // also NaN
			c.bitsPerKey = 10
		}
	}
	c.f = min(max(c.f, cuckoohash.MinFingerprintBits), cuckoohash.MaxFingerprintBits)
	if c.bitsPerKey == 0 {
		if !(lf > 0) {
			lf = DefaultLoadFactor
		}
		c.load = min(max(lf, MinLoadFactor), MaxLoadFactor)
	}
	return c
}

// width returns the fingerprint width of the table for n hashes: c.f for an
// explicit layout; for a budget of bits per key, the width whose table,
// the largest that fits the budget's bytes (blockBudget) at a load of at
// most maxLoad, has the fewest false positives, or c.f where none fits.
// Widths past maxNarrowWidth are taken only by budgets whose own width is.
func (c config) width(n int) int {
	if c.bitsPerKey == 0 || n <= 0 {
		return c.f
	}
	best, bestRate := c.f, math.Inf(1)
	for f := cuckoohash.MinFingerprintBits; f <= max(c.f, maxNarrowWidth); f++ {
		m, ok := c.fits(f, n)
		if !ok {
			break // wider buckets fit even fewer
		}
		// cuckooRate is 1-exp(-8*load*rateExp[f]): the fewest false
		// positives have the least load*rateExp[f], compared without a
		// transcendental call a width.
		if r := float64(n) / float64(m) * rateExp[f]; r < bestRate {
			best, bestRate = f, r
		}
	}
	return best
}

// maxNarrowWidth is the widest fingerprint of 16-bit slots: tables up to it
// build in half the scratch memory and are read by lookups generated for
// their width. A small table whose bloom bytes would pay for a wider one
// spends them on a lower load instead, already far below bloom's rate.
const maxNarrowWidth = 16

// buckets returns the table size for n hashes at width f: for an explicit
// layout, the size for its load; for a budget, the largest table of f-bit
// fingerprints that fits its bytes, raised to load maxLoad where it does
// not.
func (c config) buckets(f, n int) uint64 {
	if c.bitsPerKey == 0 {
		return max(uint64(math.Ceil(float64(n)/(4*c.load))), 1)
	}
	m, _ := c.fits(f, n)
	return max(m, uint64(math.Ceil(float64(n)/(4*maxLoad))), 1)
}

// fits returns the most buckets of f-bit fingerprints the block for n
// hashes can take within blockBudget (the packed buckets and the short
// trailer), and whether that loads them no more than maxLoad.
func (c config) fits(f, n int) (uint64, bool) {
	bb := uint64(4 * f)
	if c.semi {
		bb -= 4
	}
	var m uint64
	if b := c.blockBudget(n); b > shortTrailerLen {
		m = 8 * (b - shortTrailerLen) / bb
	}
	return m, m > 0 && float64(n) <= 4*maxLoad*float64(m)
}

// blockBudget is the bytes a budget of bits per key gives a block of n
// hashes: what bloom.FilterPolicy(c.bitsPerKey) spends on them, its
// rounding up to an odd number of 64-byte lines included, which is never
// less than c.bitsPerKey bits a key. FilterPolicy(B) spends what bloom's
// rounding adds to small tables on a wider fingerprint or a lower load.
func (c config) blockBudget(n int) uint64 {
	return uint64(bloomBlockBytes(c.bitsPerKey, uint64(n)))
}

// blockLen is the length of the block the writer writes around a packed
// table of tb bytes, its padding included: the table and the short trailer,
// whose first 8 bytes are the padding, or the long trailer alone for a table
// without buckets.
func blockLen(tb int) int {
	if tb == 0 {
		return trailerLen
	}
	return tb - cuckoohash.PadBytes + shortTrailerLen
}

// writer is the FilterWriter: it collects the 64-bit hash of each key,
// skipping consecutive duplicates (Pebble adds every version of a key), and
// builds the table in Finish. It is reusable after Finish.
type writer struct {
	cfg   config
	keys  static.HashList
	last  uint64
	small *smallKeys // a table's first keys, for a raw bloom block (keepsKeys)
}

// newWriter returns the writer of c's blocks.
func newWriter(c config) pebble.FilterWriter {
	switch {
	case c.unfiltered:
		return new(unfilteredWriter)
	case c.bloom > 0:
		return &bloomWriter{bits: c.bloom, table: bloom.FilterPolicy(c.bloom).NewWriter(pebble.TableFilter)}
	}
	return &writer{cfg: c}
}

// unfilteredWriter writes unfiltered blocks: the trailer alone, with the
// number of keys added.
type unfilteredWriter struct{ n uint64 }

// AddKey implements the pebble.FilterWriter interface.
func (w *unfilteredWriter) AddKey([]byte) { w.n++ }

// Finish implements the pebble.FilterWriter interface. It appends the block
// to dst and resets the writer.
func (w *unfilteredWriter) Finish(dst []byte) []byte {
	t := trailer{version: formatVersion, f: cuckoohash.MinFingerprintBits, flags: flagUnfiltered, keys: uint32(min(w.n, math.MaxUint32-1))}
	w.n = 0
	start := len(dst)
	dst = append(dst, make([]byte, trailerLen)...)
	t.put(dst[start:])
	return dst
}

// AddKey implements the pebble.FilterWriter interface.
func (w *writer) AddKey(key []byte) {
	h := cuckoohash.Hash(key)
	if w.keys.Len() > 0 && h == w.last {
		return
	}
	w.keys.Add(h)
	w.last = h
	if w.keys.Len() <= rawBloomMaxKeys && w.cfg.keepsKeys() {
		if w.small == nil {
			w.small = smallPool.Get().(*smallKeys)
		}
		w.small.add(key)
	}
}

var builders = sync.Pool{New: func() any { return new(static.Builder) }}

// Finish implements the pebble.FilterWriter interface. It appends the block
// to dst and resets the writer.
func (w *writer) Finish(dst []byte) []byte {
	defer w.keys.Reset()
	small := w.small
	w.small = nil
	defer small.release()
	n := w.keys.Len()
	if w.cfg.rawBloom(uint64(n)) {
		return small.appendBloom(dst, w.cfg.bitsPerKey)
	}
	var t trailer
	t.version = formatVersion
	t.f = uint8(w.cfg.f)
	if w.cfg.semi {
		t.flags = flagSemiSort
	}
	if uint64(n) >= math.MaxUint32 {
		// Unreachable for a real sstable. Keys without buckets is an invalid
		// block, so readers answer "may contain" for every key.
		t.keys = math.MaxUint32
	} else if n > 0 {
		f := w.cfg.width(n)
		b := builders.Get().(*static.Builder)
		var p static.Params
		for start := len(dst); ; dst = dst[:start] {
			dst, p = b.Build(dst, &w.keys, f, w.cfg.semi, func(n int) uint64 { return w.cfg.buckets(f, n) })
			// The builder grows a table where placement fails at the
			// planned load (rarely, in small tables): rather than take
			// more than the budget's bytes, take a narrower width, whose
			// table at those bytes is less loaded.
			if w.cfg.bitsPerKey == 0 || f == cuckoohash.MinFingerprintBits ||
				uint64(blockLen(len(dst)-start)) <= w.cfg.blockBudget(n) {
				break
			}
			if _, ok := w.cfg.fits(f-1, n); !ok {
				break
			}
			f--
		}
		builders.Put(b)
		t.f, t.buckets, t.seed, t.keys = uint8(f), p.Buckets, p.Seed, uint32(p.Keys)
		if p.Buckets <= math.MaxUint32 && p.Seed <= maxShortSeed {
			// The short trailer's first word takes the padding's place.
			dst = dst[:len(dst)-cuckoohash.PadBytes]
			start := len(dst)
			dst = append(dst, make([]byte, shortTrailerLen)...)
			t.putShort(dst[start:])
			return dst
		}
	}
	start := len(dst)
	dst = append(dst, make([]byte, trailerLen)...)
	t.put(dst[start:])
	return dst
}

// ParseFilterPolicy returns the filter policy an OPTIONS file names, for
// pebble.ParseHooks.NewFilterPolicy. It knows this package's name (it returns
// FilterPolicy(10): every instance reads every block, and the budget is not
// recorded), Pebble's bloom filter (bloom.FilterPolicy(10), as Pebble does)
// and "none". Any other name is an error.
func ParseFilterPolicy(n string) (pebble.FilterPolicy, error) {
	switch n {
	case PolicyName:
		return FilterPolicy(10), nil
	case bloom.FilterPolicy(10).Name():
		return bloom.FilterPolicy(10), nil
	case pebble.NoFilterPolicy.Name():
		return pebble.NoFilterPolicy, nil
	}
	return nil, fmt.Errorf("cuckoopolicy: unknown filter policy %q", n)
}

// bloomMayContain answers for a raw bloom block, or for the bloom table of
// a flagBloom block, b without the trailer: true unless b is a sound bloom
// table (bloomTableOK) that rules key out.
func bloomMayContain(b, key []byte) bool {
	if !bloomTableOK(b) {
		return true
	}
	return bloom.FilterPolicy(0).MayContain(pebble.TableFilter, b, key)
}

// bloomWriter writes flagBloom blocks: bloom.FilterPolicy(bits)'s table,
// then the trailer with the number of keys added. Without keys it writes an
// empty block, as the cuckoo writer does.
type bloomWriter struct {
	bits  int
	table pebble.FilterWriter
	n     uint64
}

// AddKey implements the pebble.FilterWriter interface.
func (w *bloomWriter) AddKey(key []byte) {
	w.table.AddKey(key)
	w.n++
}

// Finish implements the pebble.FilterWriter interface. It appends the block
// to dst and resets the writer.
func (w *bloomWriter) Finish(dst []byte) []byte {
	t := trailer{version: formatVersion, f: cuckoohash.MinFingerprintBits}
	if w.n > 0 {
		dst = w.table.Finish(dst)
		t.flags, t.keys = flagBloom, uint32(min(w.n, math.MaxUint32-1))
	}
	w.n = 0
	start := len(dst)
	dst = append(dst, make([]byte, trailerLen)...)
	t.put(dst[start:])
	return dst
}
