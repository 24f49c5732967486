package report

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	pbloom "github.com/cockroachdb/pebble/v2/bloom"
	"gonum.org/v1/plot/plotter"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/filters"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/keys"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/machine"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/markdown"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/plot"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/progress"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// Lookup kinds, in report order; kindBloom is the baseline.
const (
	kindCuckoo = "cuckoo semi-sorted FilterPolicy(B)"
	kindPlain  = "cuckoo plain Policy{f=B}"
	kindBloom  = "pebble bloom(B)"
	kindFuse8  = "binary fuse 8"
)

// lookupFilters returns the filters compared for lookup time at budget b.
func lookupFilters(b int) []filters.Kind {
	return []filters.Kind{
		filters.PolicyKind(kindCuckoo, cuckoopolicy.FilterPolicy(b)),
		filters.PolicyKind(kindPlain, cuckoopolicy.Policy{FingerprintBits: b}),
		filters.PolicyKind(kindBloom, pbloom.FilterPolicy(b)),
		filters.FuseKind[uint8](kindFuse8),
	}
}

// lookupPoint is the time of one lookup for a filter and share of positives.
type lookupPoint struct {
	Size        string // "in-cache" or "beyond-cache"
	Kind        string
	Keys        int
	FilterBytes int
	P           float64 // share of positive queries
	Ns          float64 // ns per lookup, fastest pass
	Hits, Pos   int     // answers true, positive queries among them
}

// lookupResult is the lookup experiment.
type lookupResult struct {
	Bits    int
	Queries int
	Points  []lookupPoint
	// FalseNegatives lists filters that missed a member: always a bug.
	FalseNegatives []string
	// Builds times the building of each filter above (one run each).
	Builds []buildPoint
	// BySize is FilterPolicy(B) against bloom(B), paired, by table size.
	BySize []lookupSizePoint
}

// Get returns the point for (size, kind, p).
func (r *lookupResult) get(size, kind string, p float64) (lookupPoint, bool) {
	for _, x := range r.Points {
		if x.Size == size && x.Kind == kind && x.P == p {
			return x, true
		}
	}
	return lookupPoint{}, false
}

// timeCount returns the time per key of f.Count(q), running passes until
// at least minTime has gone by, and the count of one pass.
func timeCount(f filters.Filter, q *keys.Set, minTime time.Duration) (float64, int) {
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

// measureLookup times lookups against the share of positive queries, for a
// filter that fits in L2 and one far beyond the last-level cache. Every
// filter answers the same queries in each pass; passes alternate between the
// filters so that machine noise hits all of them alike, and the fastest pass
// is kept: on a shared machine noise only ever adds time. Building the
// filters (key generation included) is timed once, for the build section.
func measureLookup(c Config, pr *progress.Printer) (*lookupResult, error) {
	r := &lookupResult{Bits: c.LookupBits, Queries: c.LookupQueries}
	sizes := []struct {
		name string
		n    int
	}{{"in-cache", c.LookupSmallKeys}, {"beyond-cache", c.LookupLargeKeys}}
	for si, sz := range sizes {
		members := keys.Gen{Seed: c.Seed*1000 + 11 + uint64(si), Width: keys.ShortLen}
		absent := keys.Gen{Seed: c.Seed*1000 + 21 + uint64(si), Width: keys.ShortLen}
		kinds := lookupFilters(c.LookupBits)
		built := make([]filters.Filter, len(kinds))
		for i, k := range kinds {
			pr.Stage("lookup %s: building %s over %d keys", sz.name, k.Name, sz.n)
			start := time.Now()
			f, err := k.Build(members.First(sz.n))
			el := time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("lookup %s: %w", k.Name, err)
			}
			built[i] = f
			r.Builds = append(r.Builds, buildPoint{Kind: k.Name, KeyLen: keys.ShortLen, Keys: sz.n,
				NsPerKey: float64(el.Nanoseconds()) / float64(sz.n), KeysPerSec: float64(sz.n) / el.Seconds(),
				OutBitsPerKey: 8 * float64(f.Bytes()) / float64(sz.n)})
		}
		// Counting hits against positive queries (below) cannot see a
		// false negative that a false positive hides: ask the filters.
		for fi, f := range built {
			if i := missedMember(f, members.First(sz.n)); i >= 0 {
				r.FalseNegatives = append(r.FalseNegatives,
					fmt.Sprintf("%s %s: member %d answered absent", sz.name, kinds[fi].Name, i))
			}
		}
		for _, p := range c.LookupPositiveps {
			pr.Stage("lookup %s: p=%.2f, %d queries", sz.name, p, c.LookupQueries)
			q, pos := keys.Mixed(members, sz.n, absent, c.LookupQueries, p, c.Seed+uint64(p*1000))
			times := make([][]float64, len(kinds))
			hits := make([]int, len(kinds))
			for range max(1, c.LookupReps) {
				for i, f := range built {
					ns, h := timeCount(f, q, c.LookupMinTime)
					times[i] = append(times[i], ns)
					hits[i] = h
				}
			}
			for i, k := range kinds {
				if hits[i] < pos {
					r.FalseNegatives = append(r.FalseNegatives,
						fmt.Sprintf("%s %s p=%.2f: %d hits for %d positive queries", sz.name, k.Name, p, hits[i], pos))
				}
				r.Points = append(r.Points, lookupPoint{Size: sz.name, Kind: k.Name, Keys: sz.n,
					FilterBytes: built[i].Bytes(), P: p, Ns: slices.Min(times[i]), Hits: hits[i], Pos: pos})
			}
		}
		runtime.GC()
	}
	var err error
	r.BySize, err = measureLookupSizes(c, pr)
	return r, err
}

// lookupTargets judges lookup time: cuckoo FilterPolicy no slower than
// Pebble's bloom at any share of positives, at both sizes.
func (r *report) lookupTargets() []target {
	name := "cuckoo FilterPolicy lookup no slower than Pebble's bloom at every p (both sizes)"
	ok, n, worst, where := true, 0, 0.0, ""
	if r.Lookup != nil {
		for _, p := range r.Lookup.Points {
			if p.Kind != kindCuckoo {
				continue
			}
			b, found := r.Lookup.get(p.Size, kindBloom, p.P)
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
	return []target{newTarget(name, ok, n > 0, "%d points; worst time ratio cuckoo/bloom %.3f (%s)", n, worst, where)}
}

// lookupSizes names the two filter sizes, in report order.
var lookupSizes = []string{"in-cache", "beyond-cache"}

// writeLookup writes section 3: per size, a table and a plot of time per
// lookup against the share of positive queries.
func (r *report) writeLookup(w *markdown.Doc) {
	if !w.Section("3. Lookup time against the share of positive queries (the paper's Figure 3)", r.Lookup != nil) {
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
		w.List(l.FalseNegatives)
		w.WriteString("\n")
	}
	for _, size := range lookupSizes {
		writeLookupSize(w, l, size)
	}
	r.writeLookupSizes(w)
}

// lookupKinds are the filters of the lookup tables, in column order.
var lookupKinds = []string{kindCuckoo, kindPlain, kindBloom, kindFuse8}

func writeLookupSize(w *markdown.Doc, l *lookupResult, size string) {
	var ps []float64
	for _, p := range l.Points {
		if p.Size == size && !slices.Contains(ps, p.P) {
			ps = append(ps, p.P)
		}
	}
	if len(ps) == 0 {
		return
	}
	first, _ := l.get(size, kindCuckoo, ps[0])
	fmt.Fprintf(w, "**%s** (%d keys):", size, first.Keys)
	for _, k := range lookupKinds {
		if p, ok := l.get(size, k, ps[0]); ok {
			fmt.Fprintf(w, " %s %.2f MB;", k, float64(p.FilterBytes)/1e6)
		}
	}
	if llc := machine.LastLevelCache(); llc > 0 && first.FilterBytes > 0 {
		fmt.Fprintf(w, " cuckoo's filter is %.3gx the last-level cache (%s).", float64(first.FilterBytes)/float64(llc), machine.BinarySize(llc))
		if size == "beyond-cache" && int64(first.FilterBytes) < llc {
			w.WriteString(" At this size it fits in that cache: these are not the times of a filter beyond it.")
		}
	}
	w.WriteString("\n\n")
	var rows [][]string
	xys := make([]plotter.XYs, len(lookupKinds))
	for _, p := range ps {
		bl, _ := l.get(size, kindBloom, p)
		row := []string{fmt.Sprintf("%.2f", p)}
		for i, k := range lookupKinds {
			x, ok := l.get(size, k, p)
			if !ok {
				row = append(row, "")
				continue
			}
			cell := f1(x.Ns)
			if k != kindBloom && bl.Ns > 0 {
				cell += fmt.Sprintf(" (%.2fx)", x.Ns/bl.Ns)
			}
			row = append(row, cell)
			xys[i] = append(xys[i], plotter.XY{X: p, Y: x.Ns})
		}
		rows = append(rows, row)
	}
	w.Table(append([]string{"p"}, lookupKinds...), rows)
	var cs []plot.Curve
	for i, k := range lookupKinds {
		cs = append(cs, plot.Curve{Name: k, XY: xys[i]})
	}
	w.Plot("lookup_"+size+".png", plot.Figure{Title: fmt.Sprintf("Lookup time, %s filter (%d keys)", size, first.Keys),
		XLabel: "share of positive queries p", YLabel: "ns per lookup", Legend: plot.BottomRight, XStep: 0.25}, cs)
}

// lookupVerdicts gives, per size and filter, the range of its time ratios
// to Pebble's bloom and the shares of positives where it is slower.
func (r *report) lookupVerdicts() []string {
	if r.Lookup == nil {
		return nil
	}
	var v []string
	for _, size := range lookupSizes {
		for _, k := range []string{kindCuckoo, kindPlain, kindFuse8} {
			if s, ok := lookupVerdict(r.Lookup, size, k); ok {
				v = append(v, s)
			}
		}
	}
	return v
}

func lookupVerdict(l *lookupResult, size, kind string) (string, bool) {
	var faster, slower []string
	lo, hi := math.Inf(1), 0.0
	for _, p := range l.Points {
		if p.Size != size || p.Kind != kind {
			continue
		}
		bl, ok := l.get(size, kindBloom, p.P)
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

// lookupSizePoint is FilterPolicy(B)'s MayContain throughput against
// bloom(B)'s on tables of one size at one share of present keys: the median,
// lowest and highest of the rounds' ratios.
type lookupSizePoint struct {
	Bits, Keys              int
	P                       float64 // share of queries for present keys
	Median, Lowest, Highest float64 // bloom's time over cuckoo's: above 1, cuckoo answers faster
	Rounds                  int
}

// pairedLookupSizes are the table sizes of the paired lookups: sstables' filters,
// in cache.
var pairedLookupSizes = []int{8_000, 64_000}

// measureLookupSizes times MayContain of FilterPolicy(B) and
// bloom.FilterPolicy(B), through the pebble.FilterPolicy interface as Pebble
// calls it, over blocks built from the same 16-byte keys, at each of
// pairedLookupSizes, B = 10 and 16, with no present keys and with half:
// in each round the two answer the same 200,000 queries back to back, in an
// order that alternates, and the round's ratio is bloom's time over
// cuckoo's.
func measureLookupSizes(c Config, pr *progress.Printer) ([]lookupSizePoint, error) {
	rounds, nq := 21, 200_000
	if c.Smoke {
		rounds, nq = 3, 20_000
	}
	var out []lookupSizePoint
	for si, n := range pairedLookupSizes {
		members := keys.Gen{Seed: c.Seed*1000 + 41 + uint64(si), Width: keys.ShortLen}
		absent := keys.Gen{Seed: c.Seed*1000 + 51 + uint64(si), Width: keys.ShortLen}
		ks := members.First(n)
		for _, b := range []int{10, 16} {
			var cu, bl pebble.FilterPolicy = cuckoopolicy.FilterPolicy(b), pbloom.FilterPolicy(b)
			blocks := [2][]byte{}
			for i, p := range []pebble.FilterPolicy{cu, bl} {
				w := p.NewWriter(pebble.TableFilter)
				ks.Each(w.AddKey)
				blocks[i] = w.Finish(nil)
			}
			for _, share := range []float64{0, 0.5} {
				q, pos := keys.Mixed(members, n, absent, nq, share, c.Seed+uint64(b)*7+uint64(share*1000))
				run := func(p pebble.FilterPolicy, block []byte) (time.Duration, int) {
					hits := 0
					start := time.Now()
					for i := range q.Len() {
						if p.MayContain(pebble.TableFilter, block, q.At(i)) {
							hits++
						}
					}
					return time.Since(start), hits
				}
				ratios := make([]float64, 0, rounds)
				for r := range rounds {
					pr.Stage("paired lookup %d/%d: B=%d, %d keys, %.0f%% present", r+1, rounds, b, n, 100*share)
					var tc, tb time.Duration
					var hc, hb int
					if r%2 == 0 {
						tc, hc = run(cu, blocks[0])
						tb, hb = run(bl, blocks[1])
					} else {
						tb, hb = run(bl, blocks[1])
						tc, hc = run(cu, blocks[0])
					}
					if hc < pos || hb < pos {
						return nil, fmt.Errorf("paired lookup B=%d, %d keys: %d and %d hits for %d present queries", b, n, hc, hb, pos)
					}
					ratios = append(ratios, float64(tb)/float64(tc))
				}
				slices.Sort(ratios)
				out = append(out, lookupSizePoint{Bits: b, Keys: n, P: share, Median: ratios[len(ratios)/2],
					Lowest: ratios[0], Highest: ratios[len(ratios)-1], Rounds: rounds})
			}
		}
	}
	return out, nil
}

// writeLookupSizes writes the paired lookups by table size.
func (r *report) writeLookupSizes(w *markdown.Doc) {
	if len(r.Lookup.BySize) == 0 {
		return
	}
	w.WriteString(fmt.Sprintf("MayContain throughput by table size, FilterPolicy(B) against bloom.FilterPolicy(B), through the "+
		"pebble.FilterPolicy interface as Pebble calls it, 16-byte keys, paired: in each of %d rounds the two answer the same "+
		"queries back to back (the order alternating); the ratio is bloom's time over cuckoo's (above 1: cuckoo answers faster), "+
		"the median of the rounds with the lowest and highest beside it.\n\n", r.Lookup.BySize[0].Rounds))
	var rows [][]string
	for _, p := range r.Lookup.BySize {
		rows = append(rows, []string{fmt.Sprint(p.Bits), fmt.Sprint(p.Keys), fmt.Sprintf("%.0f%%", 100*p.P),
			f2(p.Median), f2(p.Lowest) + " to " + f2(p.Highest)})
	}
	w.Table([]string{"B", "keys", "present", "throughput ratio (median)", "lowest to highest"}, rows)
}
