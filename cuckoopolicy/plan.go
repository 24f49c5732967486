package cuckoopolicy

import (
	"errors"
	"fmt"
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
//	L0-L3 cuckoo(20) L4 cuckoo(16) L5 cuckoo(12) L6 cuckoo{f=8 semi load=0.95}
//
// It is the counterpart of the "progressive" bloom plan of Pebble's
// development branch (bloom at 16 bits per key on L0 to L3, 14 on L4, 10 on
// L5, 8 on L6). On an LSM of that shape it takes no more filter bytes, and an
// absent Get, which never reads L6 filters, meets about a tenth of the false
// positives: the levels Get probes hold few keys, and a cuckoo filter halves
// its rate with every bit where Pebble's bloom filter stalls near 0.3%. L6
// trades a slightly higher rate for 7.4 bits per key, which pays for the
// upper levels' bits; absent lookups that do read L6 filters
// (IterOptions.UseL6Filters) still meet fewer false positives in all.
//
// For a database whose shape or memory differs, PlanFor fits a plan to it.
func Progressive() Plan {
	return Plan{
		FilterPolicy(20), FilterPolicy(20), FilterPolicy(20), FilterPolicy(20),
		FilterPolicy(16), FilterPolicy(12),
		Policy{FingerprintBits: 8, SemiSort: true, LoadFactor: 0.95},
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
// The model: an absent lookup probes one table in each populated level from
// L1 to L6 (L6 only with useL6) and one in each L0 sublevel, and a table's
// filter admits it with the rate its policy shows on random keys (curves
// measured for bloom.FilterPolicy(b), b = 1 to 32, and FilterPolicy(b), b = 4
// to 32, embedded in the package). A level with k probes and n entries given
// b bits per key costs n*b/8 bytes and contributes k times the rate. Each
// level takes, at each b, the family with the lower rate (bloom below 9 bits
// per key, cuckoo from 9 up); the plan is found greedily, one step of a
// level's lower convex hull at a time, largest drop in expected false
// positives per byte first, while the bytes fit. That is optimal for the
// convex hulls; the integer steps may leave a little budget unspent.
//
// Entries count as keys, so with many versions of each key (which a filter
// holds once) the plan's filters take less than maxFilterBytes. Empty levels
// above the first populated one get that level's policy, as tables flushed
// or compacted into them move down unchanged and keep their filters; an
// empty level below a populated one gets the policy of the nearest populated
// level above it. maxFilterBytes 0 gives a plan without filters.
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
	keys   [7]uint64 // entries
	tables [7]int
	probes [7]float64 // tables an absent lookup probes (L0: sublevels)
}

func readShape(db *pebble.DB) (shape, error) {
	var s shape
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		return s, err
	}
	for l, tables := range levels {
		for _, t := range tables {
			s.tables[l]++
			if t.Properties != nil {
				s.keys[l] += t.Properties.NumEntries
			}
		}
		if len(tables) > 0 {
			s.probes[l] = 1
		}
	}
	if sub := db.Metrics().Levels[0].Sublevels; sub > 0 && s.tables[0] > 0 {
		s.probes[0] = float64(sub)
	}
	return s, nil
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

// plan is PlanFor on a known shape.
func (s shape) plan(maxBytes uint64, useL6 bool) Plan {
	if !useL6 {
		s.probes[6] = 0
	}
	var hulls [7][]step
	var at [7]int
	for l := range hulls {
		if s.probes[l] > 0 && s.keys[l] > 0 {
			hulls[l] = s.hull(l)
		}
	}
	left := float64(maxBytes)
	for {
		best, bestGain := -1, 0.0
		for l, h := range hulls {
			if at[l]+1 >= len(h) {
				continue
			}
			cur, next := h[at[l]], h[at[l]+1]
			cost := next.bytes - cur.bytes
			if cost > left {
				continue
			}
			if gain := (cur.fp - next.fp) / cost; gain > bestGain {
				best, bestGain = l, gain
			}
		}
		if best < 0 {
			break
		}
		h := hulls[best]
		left -= h[at[best]+1].bytes - h[at[best]].bytes
		at[best]++
	}
	var p Plan
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
