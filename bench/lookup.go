package bench

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	pbloom "github.com/cockroachdb/pebble/v2/bloom"
	"gonum.org/v1/plot/plotter"

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

// lookupTargets judges lookup time: cuckoo FilterPolicy no slower than
// Pebble's bloom at any share of positives, at both sizes.
func (r *Report) lookupTargets() []Target {
	name := "cuckoo FilterPolicy lookup no slower than Pebble's bloom at every p (both sizes)"
	ok, n, worst, where := true, 0, 0.0, ""
	if r.Lookup != nil {
		for _, p := range r.Lookup.Points {
			if p.Kind != KindCuckoo {
				continue
			}
			b, found := r.Lookup.Get(p.Size, KindBloom, p.P)
			if !found || b.Ns == 0 {
				continue
			}
			n++
			ratio := p.Ns / b.Ns
			if ratio > worst {
				worst, where = ratio, fmt.Sprintf("%s p=%.2f", p.Size, p.P)
			}
			if ratio > 1 {
				ok = false
			}
		}
	}
	return []Target{newTarget(name, ok, n > 0, "%d points; worst time ratio cuckoo/bloom %.3f (%s)", n, worst, where)}
}

// lookupSizes names the two filter sizes, in report order.
var lookupSizes = []string{"in-cache", "beyond-cache"}

// writeLookup writes section 3: per size, a table and a plot of time per
// lookup against the share of positive queries.
func (r *Report) writeLookup(w *markdown) {
	if !w.section("3. Lookup time against the share of positive queries (the paper's Figure 3)", r.Lookup != nil) {
		return
	}
	l := r.Lookup
	fmt.Fprintf(w, "Budget B=%d. Each pass looks up the same %d 16-byte queries (a share p of members, in random order) "+
		"through each filter's concrete lookup in a loop; passes alternate between filters; the fastest of %d passes "+
		"of at least %s is shown (noise on a shared machine only adds time), in ns per lookup, and the ratio to "+
		"Pebble's bloom in the same run.\n\n",
		l.Bits, l.Queries, r.Config.LookupReps, r.Config.LookupMinTime)
	if len(l.FalseNegatives) > 0 {
		w.WriteString("**FALSE NEGATIVES:**\n\n")
		w.list(l.FalseNegatives)
		w.WriteString("\n")
	}
	for _, size := range lookupSizes {
		writeLookupSize(w, l, size)
	}
}

// lookupKinds are the filters of the lookup tables, in column order.
var lookupKinds = []string{KindCuckoo, KindPlain, KindBloom, KindFuse8}

func writeLookupSize(w *markdown, l *LookupResult, size string) {
	var ps []float64
	for _, p := range l.Points {
		if p.Size == size && !slices.Contains(ps, p.P) {
			ps = append(ps, p.P)
		}
	}
	if len(ps) == 0 {
		return
	}
	first, _ := l.Get(size, KindCuckoo, ps[0])
	fmt.Fprintf(w, "**%s** (%d keys):", size, first.Keys)
	for _, k := range lookupKinds {
		if p, ok := l.Get(size, k, ps[0]); ok {
			fmt.Fprintf(w, " %s %.2f MB;", k, float64(p.FilterBytes)/1e6)
		}
	}
	if llc := lastLevelCache(); llc > 0 && first.FilterBytes > 0 {
		fmt.Fprintf(w, " cuckoo's filter is %.3gx the last-level cache (%s).", float64(first.FilterBytes)/float64(llc), binarySize(llc))
		if size == "beyond-cache" && int64(first.FilterBytes) < llc {
			w.WriteString(" At this size it fits in that cache: these are not the times of a filter beyond it.")
		}
	}
	w.WriteString("\n\n")
	var rows [][]string
	xys := make([]plotter.XYs, len(lookupKinds))
	for _, p := range ps {
		bl, _ := l.Get(size, KindBloom, p)
		row := []string{fmt.Sprintf("%.2f", p)}
		for i, k := range lookupKinds {
			x, ok := l.Get(size, k, p)
			if !ok {
				row = append(row, "")
				continue
			}
			cell := f1(x.Ns)
			if k != KindBloom && bl.Ns > 0 {
				cell += fmt.Sprintf(" (%.2fx)", x.Ns/bl.Ns)
			}
			row = append(row, cell)
			xys[i] = append(xys[i], plotter.XY{X: p, Y: x.Ns})
		}
		rows = append(rows, row)
	}
	w.table(append([]string{"p"}, lookupKinds...), rows)
	var cs []curve
	for i, k := range lookupKinds {
		cs = append(cs, curve{name: k, xy: xys[i]})
	}
	w.plot("lookup_"+size+".png", fmt.Sprintf("Lookup time, %s filter (%d keys)", size, first.Keys),
		"share of positive queries p", "ns per lookup", false, legendBottomRight, 0.25, cs)
}

// lookupVerdicts gives, per size and filter, the range of its time ratios
// to Pebble's bloom and the shares of positives where it is slower.
func (r *Report) lookupVerdicts() []string {
	if r.Lookup == nil {
		return nil
	}
	var v []string
	for _, size := range lookupSizes {
		for _, k := range []string{KindCuckoo, KindPlain, KindFuse8} {
			if s, ok := lookupVerdict(r.Lookup, size, k); ok {
				v = append(v, s)
			}
		}
	}
	return v
}

func lookupVerdict(l *LookupResult, size, kind string) (string, bool) {
	var faster, slower []string
	lo, hi := math.Inf(1), 0.0
	for _, p := range l.Points {
		if p.Size != size || p.Kind != kind {
			continue
		}
		bl, ok := l.Get(size, KindBloom, p.P)
		if !ok || bl.Ns == 0 {
			continue
		}
		ratio := p.Ns / bl.Ns
		lo, hi = math.Min(lo, ratio), math.Max(hi, ratio)
		if ratio <= 1 {
			faster = append(faster, fmt.Sprintf("%.2f", p.P))
		} else {
			slower = append(slower, fmt.Sprintf("%.2f", p.P))
		}
	}
	if len(faster)+len(slower) == 0 {
		return "", false
	}
	s := fmt.Sprintf("Lookup, %s, %s: %.2fx..%.2fx Pebble's bloom time", size, kind, lo, hi)
	switch {
	case len(slower) == 0:
		s += " (no slower at any p)"
	case len(faster) == 0:
		s += " (slower at every p)"
	default:
		s += fmt.Sprintf(" (slower at p = %s)", strings.Join(slower, ", "))
	}
	return s + ".", true
}
