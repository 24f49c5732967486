package cuckoopolicy

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// Plan gives each LSM level, L0 to L6, its filter policy; a nil entry means
// no filter. The zero Plan writes no filters. A Plan is a value: ApplyPlan
// copies what it needs.
//
// A plan may mix this package's policies, Pebble's bloom filter and any
// other pebble.FilterPolicy. Pebble stores each level's policy name, not its
// budget, in the OPTIONS file: parsed back with ParseHooks, every cuckoo level
// comes back as FilterPolicy(10), every bloom level as bloom.FilterPolicy(10)
// and every level without a filter as pebble.NoFilterPolicy. Those read the
// tables' filters whatever their budgets, but write new tables at 10 bits per
// key: a program keeps its plan in code and applies it at every open.
type Plan [7]pebble.FilterPolicy

// String returns the plan level by level, runs of equal policies merged, as
// in "L0-L3 cuckoo(20) L4 cuckoo(16) L5 cuckoo(12) L6 none". FilterPolicy(b)
// reads cuckoo(b), bloom.FilterPolicy(b) bloom(b), a nil entry or
// pebble.NoFilterPolicy none, a Policy cuckoo{f=F semi load=L}; any other
// policy its Name.
func (p Plan) String() string {
	var b strings.Builder
	for l := 0; l < len(p); {
		e := l
		s := policyLabel(p[l])
		for e+1 < len(p) && policyLabel(p[e+1]) == s {
			e++
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if e > l {
			fmt.Fprintf(&b, "L%d-L%d %s", l, e, s)
		} else {
			fmt.Fprintf(&b, "L%d %s", l, s)
		}
		l = e + 1
	}
	return b.String()
}

func policyLabel(p pebble.FilterPolicy) string {
	switch v := p.(type) {
	case nil:
		return "none"
	case FilterPolicy:
		return fmt.Sprintf("cuckoo(%d)", int(v))
	case bloom.FilterPolicy:
		return fmt.Sprintf("bloom(%d)", int(v))
	case Policy:
		c := v.config()
		layout := "plain"
		if c.semi {
			layout = "semi"
		}
		if c.bitsPerKey > 0 {
			return fmt.Sprintf("cuckoo{f=%d %s %d bits}", c.f, layout, c.bitsPerKey)
		}
		return fmt.Sprintf("cuckoo{f=%d %s load=%g}", c.f, layout, c.load)
	}
	if p == pebble.NoFilterPolicy {
		return "none"
	}
	return p.Name()
}

// ApplyPlan configures opts to write each level's filters with that level's
// policy of p and to keep reading the filters tables already carry. It sets
// every level's FilterPolicy (a nil entry becomes pebble.NoFilterPolicy: in
// Pebble a nil level policy copies the level above's, which is not "no
// filter") and pebble.TableFilter as its FilterType, and registers in
// opts.Filters, creating the map if it is nil and keeping every entry already
// there, each policy of the plan, Pebble's bloom filter (bloom.FilterPolicy(10),
// which reads bloom blocks of every budget) and this package's reader
// (FilterPolicy(10), which reads every block this package writes). Why the
// readers matter is said at Apply.
//
// ApplyPlan is idempotent. It panics if opts is nil, as a programming error.
func ApplyPlan(opts *pebble.Options, p Plan) {
	if opts == nil {
		panic("cuckoopolicy: ApplyPlan with nil *pebble.Options")
	}
	for i := range opts.Levels {
		fp := p[i]
		if fp == nil {
			fp = pebble.NoFilterPolicy
		}
		opts.Levels[i].FilterPolicy = fp
		opts.Levels[i].FilterType = pebble.TableFilter
	}
	if opts.Filters == nil {
		opts.Filters = make(map[string]pebble.FilterPolicy)
	}
	readers := append(p[:len(p):len(p)], bloom.FilterPolicy(10), FilterPolicy(10))
	for _, r := range readers {
		if r == nil || r == pebble.NoFilterPolicy {
			continue
		}
		if _, ok := opts.Filters[r.Name()]; !ok {
			opts.Filters[r.Name()] = r
		}
	}
}

// Progressive returns the preset plan for an LSM of the usual shape (each
// level about ten times the one above it, L6 holding about nine keys in ten):
//
//	L0-L4 cuckoo(16) L5 cuckoo(13) L6 cuckoo{f=8 semi load=0.97}
//
// It is the counterpart of the "progressive" bloom plan of Pebble's
// development branch (bloom at 16 bits per key on L0 to L3, 14 on L4, 10 on
// L5, 8 on L6). On an LSM of that shape it takes no more filter bytes, and an
// absent Get, which never reads L6 filters, meets about a tenth of the false
// positives or fewer: the levels Get probes hold few keys, and a cuckoo
// filter halves its rate with every bit where Pebble's bloom filter stalls
// near 0.3%. L6 pays for the upper levels' bits with 7.2 bits per key and a
// rate of about 3.0% against bloom(8)'s 2.2-2.6%: absent lookups that read L6
// filters (IterOptions.UseL6Filters) come out ahead where they also probe the
// upper levels, and meet up to about 1.15x bloom's false positives where
// nearly all they meet is L6 and its tables are small (bloom rounds a small
// filter up to whole cache lines). On an LSM whose L6 holds fewer than about
// nine keys in ten, such as CockroachDB's MVCC keys, where each L6 key has
// several versions, it takes a few percent more filter bytes than the bloom
// plan.
//
// For a database whose shape or memory differs, PlanFor fits a plan to it.
func Progressive() Plan {
	return Plan{
		FilterPolicy(16), FilterPolicy(16), FilterPolicy(16), FilterPolicy(16), FilterPolicy(16),
		FilterPolicy(13),
		Policy{FingerprintBits: 8, SemiSort: true, LoadFactor: 0.97},
	}
}

// ErrNilDB is PlanFor's error for a nil database.
var ErrNilDB = errors.New("cuckoopolicy: PlanFor with nil *pebble.DB")

// PlanFor returns the plan that minimises the expected false-positive
// data-block reads of an absent point lookup on db's current LSM, with at
// most maxFilterBytes of filters on its current tables. useL6 says whether
// the lookups read L6 filters (iterators with IterOptions.UseL6Filters);
// db.Get does not, and with useL6 false the plan has no filter on L6.
//
// The model: an absent lookup probes, in each level, the tables whose key
// range holds it (in L0 they overlap; L6 only with useL6), and a table's
// filter admits it with the rate its policy shows on random keys (curves
// measured for bloom.FilterPolicy(b), b = 1 to 32, and FilterPolicy(b), b = 4
// to 32, embedded in the package). How many tables of each level a lookup
// probes is estimated from a sample of the database's keys (a few thousand,
// read through an iterator from positions spread over the key space; absent
// keys are taken to fall where present ones do; table bounds are compared
// bytewise). A level with k probes and n keys given b bits per key costs
// n*b/8 bytes and contributes k times the rate. Each level takes, at each b,
// the family with the lower rate (bloom below 9 bits per key, cuckoo from 9
// up); the plan is found greedily, one step of a level's lower convex hull
// at a time, largest drop in expected false positives per byte first, while
// the bytes fit. When the best step does not fit, what is left buys part of
// it: a Policy between the two budgets (the next budget's fingerprint width
// at a higher load), where the builder reaches that load. That is optimal for
// the convex hulls; a step bloom takes whole (below 9 bits per key) may leave
// budget unspent, and so does the cap of 32 bits per key.
//
// A level's keys are its entries, except on the bottom level, whose entries
// are scaled by the sample's share of distinct key prefixes (a filter holds
// each prefix once, whatever its versions; the comparer's Split decides what
// a prefix is). Upper levels hold few keys, so counting their versions costs
// little and keeps the plan within maxFilterBytes. Empty levels above the
// first populated one get that level's policy, as tables flushed or
// compacted into them move down unchanged and keep their filters; an empty
// level below a populated one gets the policy of the nearest populated level
// above it. maxFilterBytes 0 gives a plan without filters.
//
// The plan fits the LSM as it is: recompute it as the database grows. It
// returns ErrNilDB for a nil db and the error db.SSTables returns.
func PlanFor(db *pebble.DB, maxFilterBytes uint64, useL6 bool) (Plan, error) {
	if db == nil {
		return Plan{}, ErrNilDB
	}
	s, err := readShape(db)
	if err != nil {
		return Plan{}, err
	}
	return s.plan(maxFilterBytes, useL6), nil
}

// shape is what a plan needs to know of an LSM, per level.
type shape struct {
	keys   [7]uint64 // the keys the level's filters hold
	tables [7]int
	probes [7]float64 // tables an absent lookup probes, on average
}

// The key sample readShape takes: runs of sampleRun keys from up to
// sampleSeeks positions spread over the bottom level's tables, at most
// sampleVersions keys of one prefix counted.
const (
	sampleSeeks    = 64
	sampleRun      = 32
	sampleVersions = 1024
)

// span is a table's user-key bounds.
type span struct{ lo, hi []byte }

func readShape(db *pebble.DB) (shape, error) {
	var s shape
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		return s, err
	}
	var spans [7][]span
	bottom := -1
	for l, tables := range levels {
		for _, t := range tables {
			s.tables[l]++
			if t.Properties != nil {
				s.keys[l] += t.Properties.NumEntries
			}
			spans[l] = append(spans[l], span{t.Smallest.UserKey, t.Largest.UserKey})
		}
		if len(tables) > 0 {
			bottom = l
		}
	}
	if bottom < 0 {
		return s, nil
	}
	sample, prefixShare, err := sampleKeys(db, spans[bottom])
	if err != nil {
		return s, err
	}
	if len(sample) == 0 {
		// Nothing to sample (every key deleted): one probe a populated level,
		// one an L0 sublevel.
		for l := range s.probes {
			if s.tables[l] > 0 {
				s.probes[l] = 1
			}
		}
		if s.tables[0] > 0 {
			s.probes[0] = float64(max(db.Metrics().Levels[0].Sublevels, 1))
		}
		return s, nil
	}
	for l := range spans {
		if s.tables[l] == 0 {
			continue
		}
		n := 0
		for _, k := range sample {
			n += covering(spans[l], k, l == 0)
		}
		// A level the sample missed still holds keys some lookup may meet.
		s.probes[l] = max(float64(n), 0.5) / float64(len(sample))
	}
	s.keys[bottom] = uint64(math.Ceil(float64(s.keys[bottom]) * prefixShare))
	return s, nil
}

// sampleKeys returns the first key of each of a few hundred key prefixes
// spread over the key space (runs from the starts of up to sampleSeeks of
// the bottom level's tables), and the share of the keys it visited that begin
// a new prefix. The filters hold prefixes (the whole key unless the comparer
// splits off a version), and the bottom level holds its keys once, so that
// share turns its entries into the keys its filters hold.
func sampleKeys(db *pebble.DB, bottom []span) (sample [][]byte, prefixShare float64, err error) {
	it, err := db.NewIter(nil)
	if err != nil {
		return nil, 0, err
	}
	defer it.Close()
	seeks := min(len(bottom), sampleSeeks)
	var prefixes, keys int
	var last []byte
	for i := range seeks {
		valid := it.SeekGE(bottom[i*len(bottom)/seeks].lo)
		for j := 0; valid && j < sampleRun; j++ {
			first := slices.Clone(it.Key())
			sample = append(sample, first)
			prefixes++
			last = append(last[:0], first...)
			// SeekPrefixGE stops at the end of the prefix, found by the
			// database's own comparer.
			for ok, v := it.SeekPrefixGE(first), 0; ok && v < sampleVersions; ok, v = it.Next(), v+1 {
				keys++
				last = append(last[:0], it.Key()...)
			}
			valid = it.SeekGE(last) && it.Next()
		}
	}
	if keys == 0 {
		return sample, 1, it.Error()
	}
	return sample, float64(prefixes) / float64(keys), it.Error()
}

// covering returns how many of the spans hold k, compared bytewise. L0's
// tables overlap and are counted one by one; a lower level's are sorted and
// disjoint, so at most one holds k.
func covering(spans []span, k []byte, overlapping bool) int {
	if overlapping {
		n := 0
		for _, sp := range spans {
			if bytes.Compare(sp.lo, k) <= 0 && bytes.Compare(k, sp.hi) <= 0 {
				n++
			}
		}
		return n
	}
	i := sort.Search(len(spans), func(i int) bool { return bytes.Compare(spans[i].hi, k) >= 0 })
	if i < len(spans) && bytes.Compare(spans[i].lo, k) <= 0 {
		return 1
	}
	return 0
}

// bloomTableBytes is a bloom filter block's cost beyond b bits a key, on
// average: Pebble's bloom filter rounds up to whole 64-byte cache lines (half
// a line), then to an odd number of lines (half a line), and ends in a 5-byte
// trailer.
const bloomTableBytes = 69

// step is one point of a level's choices: a policy, its bytes on the level
// and the expected false positives it leaves.
type step struct {
	policy pebble.FilterPolicy
	bytes  float64
	fp     float64
}

// hull returns the level's choices from no filter up, on their lower convex
// hull: each step buys fewer false positives per byte than the one before.
func (s shape) hull(l int) []step {
	pts := []step{{bytes: 0, fp: s.probes[l]}}
	for b := 1; b <= MaxBitsPerKey; b++ {
		cb := float64(s.keys[l]) * float64(b) / 8
		var st step
		if b >= MinBitsPerKey && cuckooFPR[b] <= bloomFPR[b] {
			st = step{FilterPolicy(b), cb, s.probes[l] * cuckooFPR[b]}
		} else {
			st = step{bloom.FilterPolicy(b), cb + float64(s.tables[l]*bloomTableBytes), s.probes[l] * bloomFPR[b]}
		}
		if last := pts[len(pts)-1]; st.fp >= last.fp || st.bytes <= last.bytes {
			continue // no better than a cheaper choice
		}
		// Keep the hull convex: drop points the new one makes redundant.
		for len(pts) >= 2 {
			a, m := pts[len(pts)-2], pts[len(pts)-1]
			// m lies on or above the segment a-st: remove it.
			if (m.fp-a.fp)*(st.bytes-a.bytes) >= (st.fp-a.fp)*(m.bytes-a.bytes) {
				pts = pts[:len(pts)-1]
				continue
			}
			break
		}
		pts = append(pts, st)
	}
	return pts
}

// cuckooRate is the false-positive rate of a cuckoo table of f-bit
// fingerprints at the given load: a lookup meets the 8*load fingerprints of
// its two buckets.
func cuckooRate(f int, load float64) float64 {
	return -math.Expm1(8 * load * math.Log1p(-1/(math.Exp2(float64(f))-1)))
}

// tableOverhead is a cuckoo block's fixed bytes: padding and trailer.
const tableOverhead = 8 + trailerLen

// partial returns the cuckoo policy between level l's step cur and the
// cuckoo step next that takes cur's bytes and extra more: next's fingerprint
// width at the load those bytes give, if that load is one the builder
// reaches and the rate is below cur's.
func (s shape) partial(l int, cur, next step, extra float64) (pebble.FilterPolicy, bool) {
	b, ok := next.policy.(FilterPolicy)
	if !ok || s.keys[l] == 0 {
		return nil, false
	}
	f := budgetWidth(int(b), true)
	bits := (cur.bytes + extra - float64(s.tables[l]*tableOverhead)) * 8 / float64(s.keys[l])
	// A higher load takes fewer bytes: round it up.
	load := math.Ceil(1000*float64(f-1)/bits) / 1000
	if !(load >= MinLoadFactor && load <= maxLoad) || s.probes[l]*cuckooRate(f, load) >= cur.fp {
		return nil, false
	}
	return Policy{FingerprintBits: f, SemiSort: true, LoadFactor: load}, true
}

// plan is PlanFor on a known shape.
func (s shape) plan(maxBytes uint64, useL6 bool) Plan {
	if !useL6 {
		s.probes[6] = 0
	}
	var hulls [7][]step // nil: the level's policy is settled (or it has none)
	var at [7]int
	for l := range hulls {
		if s.probes[l] > 0 && s.keys[l] > 0 {
			hulls[l] = s.hull(l)
		}
	}
	left := float64(maxBytes)
	var p Plan
	for {
		best, bestGain := -1, 0.0
		for l, h := range hulls {
			if at[l]+1 >= len(h) {
				continue
			}
			cur, next := h[at[l]], h[at[l]+1]
			if gain := (cur.fp - next.fp) / (next.bytes - cur.bytes); gain > bestGain {
				best, bestGain = l, gain
			}
		}
		if best < 0 {
			break
		}
		h := hulls[best]
		if cost := h[at[best]+1].bytes - h[at[best]].bytes; cost <= left {
			left -= cost
			at[best]++
			continue
		}
		// The best step does not fit: what is left buys part of it, a
		// cuckoo table between the two budgets, and nothing else can buy
		// as much. Where no such table fits, the level stays as it is and
		// the others go on.
		if fp, ok := s.partial(best, h[at[best]], h[at[best]+1], left); ok {
			p[best] = fp
			hulls[best] = nil
			break
		}
		hulls[best] = h[:at[best]+1]
	}
	for l, h := range hulls {
		if h != nil {
			p[l] = h[at[l]].policy
		}
	}
	// Empty levels take the policy of the nearest populated level above
	// them, or, above the first populated level, of that level.
	populated := func(l int) bool { return s.tables[l] > 0 }
	first := -1
	for l := range p {
		if populated(l) {
			first = l
			break
		}
	}
	if first < 0 {
		return Plan{}
	}
	for l := range p {
		switch {
		case l < first:
			p[l] = p[first]
		case !populated(l):
			p[l] = p[l-1]
		}
	}
	if !useL6 {
		p[6] = nil
	}
	return p
}
