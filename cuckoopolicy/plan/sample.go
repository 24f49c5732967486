package plan

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// The sample readShape takes: samplePositions positions spread over every
// level's tables in proportion to their entries, for the probes; at every
// sampleEvery-th, the versions of one key prefix (at most sampleVersions),
// for the keys per prefix of each level.
const (
	samplePositions = 4096
	sampleEvery     = 8
	sampleVersions  = 1024
)

// span is a table's user-key bounds and entries.
type span struct {
	lo, hi  []byte
	entries uint64
}

// readShape reads db's LSM: its shape, and the plan its tables' filters
// follow. It turns the panic of a closed database into ErrClosed; a
// database closed while it runs may still panic inside Pebble.
func readShape(db *pebble.DB) (s shape, cur Plan, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok && errors.Is(e, pebble.ErrClosed) {
				s, cur, err = shape{}, Plan{}, fmt.Errorf("%w: %v", ErrClosed, e)
				return
			}
			panic(r)
		}
	}()
	// Pebble's SSTables on a closed database panics deep inside (and leaves
	// the database unusable); NewIter panics with ErrClosed first thing.
	it, err := db.NewIter(nil)
	if err != nil {
		return s, cur, err
	}
	if err := it.Close(); err != nil {
		return s, cur, err
	}
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		return s, cur, err
	}
	for l, lm := range db.Metrics().Levels {
		s.fill[l] = lm.FillFactor
	}
	spans := s.readTables(levels)
	positions, seeks := samplePositionsOf(&spans)
	s.sampleProbes(&spans, positions)
	share, tabs, err := prefixShares(db, seeks, &spans)
	if err != nil {
		return s, cur, err
	}
	s.sizeLevels(levels, &spans, share, tabs, &cur)
	return s, cur, nil
}

// readTables records each level's tables, bytes and filter bytes in s, and
// returns their spans: sorted by smallest key below L0, for covering; L0's
// overlap and stay as read.
func (s *shape) readTables(levels [][]pebble.SSTableInfo) (spans [7][]span) {
	indexed := make(map[uint64]bool)
	for l, tables := range levels {
		for _, t := range tables {
			if b := uint64(t.BackingSSTNum); t.Properties != nil && !indexed[b] {
				indexed[b] = true
				s.index += t.Properties.IndexSize
			}
			var n uint64
			if t.Properties != nil {
				n = t.Properties.NumEntries
			}
			spans[l] = append(spans[l], span{t.Smallest.UserKey, t.Largest.UserKey, n})
			s.size += t.Size
			if t.Properties != nil {
				s.filterBytes[l] += t.Properties.FilterSize
			}
		}
		s.tables[l] = len(tables)
	}
	for l := 1; l < 7; l++ {
		slices.SortFunc(spans[l], func(a, b span) int { return bytes.Compare(a.lo, b.lo) })
	}
	return spans
}

// sampleProbes sets s.probes: the share of the sample positions each
// populated level's tables cover.
func (s *shape) sampleProbes(spans *[7][]span, positions [][]byte) {
	if len(positions) == 0 {
		// No entries to weigh by: one probe a populated level.
		for l := range s.probes {
			if s.tables[l] > 0 {
				s.probes[l] = 1
			}
		}
		return
	}
	for l := range spans {
		if s.tables[l] == 0 {
			continue
		}
		n := 0
		for _, k := range positions {
			n += covering(spans[l], k, l == 0)
		}
		// A level the sample missed still holds keys some lookup may meet.
		s.probes[l] = max(float64(n), 0.5) / float64(len(positions))
	}
}

// sizeLevels sets each level's table sizes and keys in s, each table's
// entries scaled by its share of keys per prefix (below L0: the sample's
// in that table, shrunk toward the level's; L0: the level's), and the
// policy its filters follow in cur.
func (s *shape) sizeLevels(levels [][]pebble.SSTableInfo, spans *[7][]span, share [7]float64, tabs [7][]tally, cur *Plan) {
	for l, tables := range levels {
		var sizes []uint64
		for i, sp := range spans[l] {
			sh := share[l]
			if l > 0 && tabs[l] != nil {
				t := tabs[l][i]
				sh = (t.prefixes + shrink*share[l]) / (t.entries + shrink)
			}
			sizes = append(sizes, uint64(math.Ceil(float64(sp.entries)*sh)))
		}
		s.sizes[l] = groupSizes(sizes)
		for _, g := range s.sizes[l] {
			s.keys[l] += g.keys * uint64(g.count)
		}
		cur[l] = tablePolicy(tables, s.sizes[l])
	}
}

// samplePositionsOf returns positions spread over the tables of every level
// in proportion to their entries (within a table, keys interpolated between
// its bounds at evenly spaced fractions, compared bytewise only: they need
// not be keys the comparer accepts), and, for every sampleEvery-th, the
// smallest key of its table, a real key to seek to.
func samplePositionsOf(spans *[7][]span) (pos, seeks [][]byte) {
	var all []span
	var total uint64
	for _, ss := range spans {
		for _, sp := range ss {
			if sp.entries > 0 {
				all = append(all, sp)
				total += sp.entries
			}
		}
	}
	if total == 0 {
		return nil, nil
	}
	cum := make([]uint64, len(all)) // entries before each table
	var c uint64
	for i, sp := range all {
		cum[i] = c
		c += sp.entries
	}
	pos = make([][]byte, 0, samplePositions)
	for i := range samplePositions {
		u := (float64(i) + 0.5) / samplePositions * float64(total)
		t := max(sort.Search(len(cum), func(j int) bool { return float64(cum[j]) > u })-1, 0)
		sp := all[t]
		pos = append(pos, interpolate(sp.lo, sp.hi, (u-float64(cum[t]))/float64(sp.entries)))
		if i%sampleEvery == 0 {
			seeks = append(seeks, sp.lo)
		}
	}
	return pos, seeks
}

// interpolate returns a key about fraction v of the way from lo to hi,
// reading the 8 bytes after their common prefix as a number, within
// [lo, hi] bytewise.
func interpolate(lo, hi []byte, v float64) []byte {
	if bytes.Compare(lo, hi) >= 0 {
		return slices.Clone(lo)
	}
	p := 0
	for p < len(lo) && p < len(hi) && lo[p] == hi[p] {
		p++
	}
	word := func(b []byte) uint64 {
		var w [8]byte
		copy(w[:], b[min(p, len(b)):])
		return binary.BigEndian.Uint64(w[:])
	}
	a, b := word(lo), word(hi)
	x := a + uint64(v*float64(b-a))
	k := make([]byte, p+8)
	copy(k, lo[:p])
	binary.BigEndian.PutUint64(k[p:], x)
	k = bytes.TrimRight(k, "\x00")
	if bytes.Compare(k, lo) < 0 {
		return slices.Clone(lo)
	}
	if bytes.Compare(k, hi) > 0 {
		return slices.Clone(hi)
	}
	return k
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
	if holder(spans, k) >= 0 {
		return 1
	}
	return 0
}

// holder returns the index of the span of sorted, disjoint spans that holds
// k, compared bytewise, or -1 if none does.
func holder(spans []span, k []byte) int {
	i := sort.Search(len(spans), func(i int) bool { return bytes.Compare(spans[i].hi, k) >= 0 })
	if i < len(spans) && bytes.Compare(spans[i].lo, k) <= 0 {
		return i
	}
	return -1
}

// tally is the entries and key prefixes the sample met in one table.
type tally struct{ entries, prefixes float64 }

// shrink is the weight, in sampled entries, of the level's share in each
// table's: a table the sample met a few times keeps near the level's share.
const shrink = 3

// prefixShares returns, per level, the share of its entries that begin a
// new key prefix: the keys its filters hold per entry. At each seek key (a
// key repeated continues where the last left off) it takes the versions of
// the key's prefix (SeekPrefixGE stops at the prefix's end, by the database's own
// comparer), and where each of those versions lives (db.ScanInternal names
// the level of each key it visits). A level the sample never meets counts
// one key per entry. It also returns, for each table below L0 (spans sorted
// by smallest key), the entries and prefixes the sample met in it.
func prefixShares(db *pebble.DB, seeks [][]byte, spans *[7][]span) (share [7]float64, tabs [7][]tally, err error) {
	for l := range share {
		share[l] = 1
	}
	for l := 1; l < 7; l++ {
		tabs[l] = make([]tally, len(spans[l]))
	}
	it, err := db.NewIter(nil)
	if err != nil {
		return share, tabs, err
	}
	defer it.Close()
	var entries, prefixes [7]float64
	var versions [][]byte
	var last []byte // the last key of the previous prefix read
	for i, seek := range seeks {
		// A table sampled again continues after the prefix read last.
		var ok bool
		if i > 0 && bytes.Equal(seek, seeks[i-1]) && last != nil {
			ok = seekGE(it, last) && it.Next()
		} else {
			ok = seekGE(it, seek)
		}
		if !ok {
			last = nil
			continue
		}
		first := slices.Clone(it.Key())
		versions = append(versions[:0], first)
		if len(first) > 0 { // an empty prefix would match every key
			for ok, v := it.SeekPrefixGE(first), 0; ok && v < sampleVersions; ok, v = it.Next(), v+1 {
				if !bytes.Equal(it.Key(), first) {
					versions = append(versions, slices.Clone(it.Key()))
				}
			}
		}
		last = versions[len(versions)-1]
		// The upper bound is the next key in the database, a real key: a
		// key made up past the last version may not parse under the
		// database's comparer.
		var upper []byte
		if seekGE(it, last) && it.Next() {
			upper = slices.Clone(it.Key())
		}
		lower := first
		if len(lower) == 0 {
			// nil, not empty: Pebble's invariants builds (race, the
			// invariants tag) read key[0] of any non-nil seek key.
			lower = nil
		}
		// ScanStatistics counts every internal key per level, obsolete
		// versions included as table properties count them; ScanInternal
		// panics on merge and single-delete keys.
		stats, err := db.ScanStatistics(context.Background(), lower, upper, pebble.ScanStatisticsOptions{})
		if err != nil {
			return share, tabs, err
		}
		for l, ls := range stats.Levels {
			var n int
			for _, c := range ls.KindsCount {
				n += c
			}
			if n > 0 {
				entries[l] += float64(n)
				prefixes[l]++
				if l == 0 {
					continue // L0's tables overlap: its own share sizes them
				}
				if i := holder(spans[l], first); i >= 0 {
					tabs[l][i].entries += float64(n)
					tabs[l][i].prefixes++
				}
			}
		}
	}
	for l := range share {
		if entries[l] > 0 {
			share[l] = prefixes[l] / entries[l]
		}
	}
	return share, tabs, it.Error()
}

// groupSizes buckets table sizes within about 2% of each other.
func groupSizes(sizes []uint64) []group {
	if len(sizes) == 0 {
		return nil
	}
	byBucket := map[int]*[2]uint64{} // bucket -> {sum, count}
	for _, n := range sizes {
		if n == 0 {
			continue
		}
		b := int(math.Round(math.Log(float64(n)) / math.Log(1.02)))
		e := byBucket[b]
		if e == nil {
			e = new([2]uint64)
			byBucket[b] = e
		}
		e[0] += n
		e[1]++
	}
	g := make([]group, 0, len(byBucket))
	for _, e := range byBucket {
		g = append(g, group{keys: (e[0] + e[1]/2) / e[1], count: int(e[1])})
	}
	slices.SortFunc(g, func(a, b group) int { return cmp.Compare(a.keys, b.keys) })
	return g
}

// tablePolicy returns the policy the level's filters were written with, as
// the model can cost it: the family of most of its entries, at the budget
// whose bytes on the level's tables come nearest theirs.
func tablePolicy(tables []pebble.SSTableInfo, sizes []group) pebble.FilterPolicy {
	byName := map[string][2]uint64{} // name -> {entries, filter bytes}
	for _, t := range tables {
		if t.Properties == nil {
			continue
		}
		e := byName[t.Properties.FilterPolicyName]
		e[0] += t.Properties.NumEntries
		e[1] += t.Properties.FilterSize
		byName[t.Properties.FilterPolicyName] = e
	}
	var name string
	var most, filterBytes, all uint64
	for n, e := range byName {
		all += e[0]
		if e[0] > most || (e[0] == most && n < name) {
			name, most, filterBytes = n, e[0], e[1]
		}
	}
	if most == 0 || filterBytes == 0 {
		return nil
	}
	// The level's bytes if all its tables had this family's filters.
	target := float64(filterBytes) * float64(all) / float64(most)
	var family func(b int) pebble.FilterPolicy
	switch name {
	case cuckoopolicy.PolicyName:
		family = func(b int) pebble.FilterPolicy { return cuckoopolicy.FilterPolicy(b) }
	case bloom.FilterPolicy(10).Name():
		family = func(b int) pebble.FilterPolicy { return bloom.FilterPolicy(b) }
	default:
		return nil
	}
	var best pebble.FilterPolicy
	bestDiff := math.Inf(1)
	for b := 1; b <= cuckoopolicy.MaxBitsPerKey; b++ {
		var bytes float64
		for _, g := range sizes {
			tb, _ := cost(family(b), g.keys)
			bytes += float64(g.count) * tb
		}
		// Budgets whose blocks take the same bytes tie (on small tables,
		// bloom's line rounding gives many budgets one size): take the
		// highest, the most such a block holds, not the lowest, whose rate
		// is far higher (bloom(1) for bloom(10) on 50-key tables).
		if d := math.Abs(bytes - target); d <= bestDiff {
			best, bestDiff = family(b), d
		}
	}
	return best
}

// seekGE is it.SeekGE, with First for the empty key: Pebble's invariants
// builds (the race detector's) index an empty non-nil seek key.
func seekGE(it *pebble.Iterator, k []byte) bool {
	if len(k) == 0 {
		return it.First()
	}
	return it.SeekGE(k)
}
