package bench

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	pbloom "github.com/cockroachdb/pebble/v2/bloom"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// Lookup kinds, in report order; KindBloom is the baseline.
const (
	KindCuckoo = "cuckoo semi-sorted FilterPolicy(B)"
	KindPlain  = "cuckoo plain Policy{f=B}"
	KindBloom  = "pebble bloom(B)"
	KindFuse8  = "binary fuse 8"
)

// LookupKinds returns the filters compared for lookup time at budget b.
func LookupKinds(b int) []Kind {
	return []Kind{
		PolicyKind(KindCuckoo, cuckoopolicy.FilterPolicy(b)),
		PolicyKind(KindPlain, cuckoopolicy.Policy{FingerprintBits: b}),
		PolicyKind(KindBloom, pbloom.FilterPolicy(b)),
		FuseKind[uint8](KindFuse8),
	}
}

// LookupPoint is the time of one lookup for a filter and share of positives.
type LookupPoint struct {
	Size        string // "in-cache" or "beyond-cache"
	Kind        string
	Keys        int
	FilterBytes int
	P           float64 // share of positive queries
	Ns          float64 // ns per lookup, fastest pass
	Hits, Pos   int     // answers true, positive queries among them
}

// LookupResult is the lookup experiment.
type LookupResult struct {
	Bits    int
	Queries int
	Points  []LookupPoint
	// FalseNegatives lists filters that missed a member: always a bug.
	FalseNegatives []string
	// Builds times the building of each filter above (one run each).
	Builds []BuildPoint
}

// Get returns the point for (size, kind, p).
func (r *LookupResult) Get(size, kind string, p float64) (LookupPoint, bool) {
	for _, x := range r.Points {
		if x.Size == size && x.Kind == kind && x.P == p {
			return x, true
		}
	}
	return LookupPoint{}, false
}

// TimeCount returns the time per key of f.Count(q), running passes until
// at least minTime has gone by, and the count of one pass.
func TimeCount(f Filter, q *KeySet, minTime time.Duration) (float64, int) {
	hits := f.Count(q) // warm up, and the answer
	passes := 0
	start := time.Now()
	for {
		f.Count(q)
		passes++
		if el := time.Since(start); el >= minTime {
			return float64(el.Nanoseconds()) / float64(passes*q.Len()), hits
		}
	}
}

// MeasureLookup times lookups against the share of positive queries, for a
// filter that fits in L2 and one far beyond the last-level cache. Every
// filter answers the same queries in each pass; passes alternate between the
// filters so that machine noise hits all of them alike, and the fastest pass
// is kept: on a shared machine noise only ever adds time. Building the
// filters (key generation included) is timed once, for the build section.
func MeasureLookup(c Config, pr *progress) (*LookupResult, error) {
	r := &LookupResult{Bits: c.LookupBits, Queries: c.LookupQueries}
	sizes := []struct {
		name string
		n    int
	}{{"in-cache", c.LookupSmallKeys}, {"beyond-cache", c.LookupLargeKeys}}
	for si, sz := range sizes {
		members := KeyGen{Seed: c.Seed*1000 + 11 + uint64(si), Width: ShortKeyLen}
		absent := KeyGen{Seed: c.Seed*1000 + 21 + uint64(si), Width: ShortKeyLen}
		kinds := LookupKinds(c.LookupBits)
		filters := make([]Filter, len(kinds))
		for i, k := range kinds {
			pr.Stage("lookup %s: building %s over %d keys", sz.name, k.Name, sz.n)
			start := time.Now()
			f, err := k.Build(members.First(sz.n))
			el := time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("lookup %s: %w", k.Name, err)
			}
			filters[i] = f
			r.Builds = append(r.Builds, BuildPoint{Kind: k.Name, KeyLen: ShortKeyLen, Keys: sz.n,
				NsPerKey: float64(el.Nanoseconds()) / float64(sz.n), KeysPerSec: float64(sz.n) / el.Seconds(),
				OutBitsPerKey: 8 * float64(f.Bytes()) / float64(sz.n)})
		}
		// Counting hits against positive queries (below) cannot see a
		// false negative that a false positive hides: ask the filters.
		for fi, f := range filters {
			if i := missedMember(f, members.First(sz.n)); i >= 0 {
				r.FalseNegatives = append(r.FalseNegatives,
					fmt.Sprintf("%s %s: member %d answered absent", sz.name, kinds[fi].Name, i))
			}
		}
		for _, p := range c.LookupPositiveps {
			pr.Stage("lookup %s: p=%.2f, %d queries", sz.name, p, c.LookupQueries)
			q, pos := Mixed(members, sz.n, absent, c.LookupQueries, p, c.Seed+uint64(p*1000))
			times := make([][]float64, len(kinds))
			hits := make([]int, len(kinds))
			for range max(1, c.LookupReps) {
				for i, f := range filters {
					ns, h := TimeCount(f, q, c.LookupMinTime)
					times[i] = append(times[i], ns)
					hits[i] = h
				}
			}
			for i, k := range kinds {
				if hits[i] < pos {
					r.FalseNegatives = append(r.FalseNegatives,
						fmt.Sprintf("%s %s p=%.2f: %d hits for %d positive queries", sz.name, k.Name, p, hits[i], pos))
				}
				r.Points = append(r.Points, LookupPoint{Size: sz.name, Kind: k.Name, Keys: sz.n,
					FilterBytes: filters[i].Bytes(), P: p, Ns: slices.Min(times[i]), Hits: hits[i], Pos: pos})
			}
		}
		runtime.GC()
	}
	return r, nil
}
