package bench

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/cockroachdb/pebble/v2"
	pbloom "github.com/cockroachdb/pebble/v2/bloom"
	"gonum.org/v1/plot/plotter"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// Series names shared by the experiments and the report.
const (
	SeriesCuckoo      = "cuckoo FilterPolicy(B)" // semi-sorted, budgeted: the drop-in
	SeriesCuckooPlain = "cuckoo plain Policy{f}"
	SeriesCuckooSemi  = "cuckoo semi-sorted Policy{f}"
	SeriesPebbleBloom = "pebble bloom(B)"
	SeriesStdBloom    = "standard bloom"
	SeriesIdealBloom  = "ideal bloom (formula)"
	SeriesFuse8       = "binary fuse 8"
	SeriesFuse16      = "binary fuse 16"
	SeriesBound       = "log2(1/eps) bound"
)

// FPRPoint is one filter's measured space and false-positive rate.
type FPRPoint struct {
	Series     string
	Param      string  // "B=10", "f=12"
	X          int     // the swept parameter (budget or fingerprint bits)
	Keys       int     // members the filter was built over
	BitsPerKey float64 // 8*len(filter)/keys, measured
	FPR        float64 // hits/queries over non-members
	Hits       int
	Queries    int
	Info       string // Inspect's view of a cuckoo block
}

// FPRResult is the false-positive experiment.
type FPRResult struct {
	Keys, Queries int
	Points        []FPRPoint
	Headline      []FPRPoint // the paper's headline configurations
	// BySize is the sweep over key counts (X) at SizeBits bits per key,
	// over SizeQueries non-member queries.
	BySize                []FPRPoint
	SizeBits, SizeQueries int
	// ByShape holds, for each KeyShapes family (Param: its format), count
	// of sequential members and budget (X), FilterPolicy(B) and bloom(B),
	// queried with the next ShapeQueries keys of the family.
	ByShape      []FPRPoint
	ShapeQueries int
}

// Find returns the point of a series with parameter x.
func (r *FPRResult) Find(series string, x int) (FPRPoint, bool) {
	return findPoint(r.Points, series, x)
}

func findPoint(ps []FPRPoint, series string, x int) (FPRPoint, bool) {
	for _, p := range ps {
		if p.Series == series && p.X == x {
			return p, true
		}
	}
	return FPRPoint{}, false
}

// SizePairs returns the size sweep as (cuckoo, bloom) pairs measured over
// the same key count, in the sweep's order.
func (r *FPRResult) SizePairs() [][2]FPRPoint {
	var pairs [][2]FPRPoint
	for _, c := range r.BySize {
		if c.Series != SeriesCuckoo {
			continue
		}
		if b, ok := findPoint(r.BySize, SeriesPebbleBloom, c.X); ok {
			pairs = append(pairs, [2]FPRPoint{c, b})
		}
	}
	return pairs
}

// ShapePairs returns the key-shape table as (cuckoo, bloom) pairs over the
// same keys, in the order measured.
func (r *FPRResult) ShapePairs() [][2]FPRPoint {
	var pairs [][2]FPRPoint
	for _, c := range r.ByShape {
		if c.Series != SeriesCuckoo {
			continue
		}
		for _, b := range r.ByShape {
			if b.Series == SeriesPebbleBloom && b.Param == c.Param && b.X == c.X && b.Keys == c.Keys {
				pairs = append(pairs, [2]FPRPoint{c, b})
			}
		}
	}
	return pairs
}

// MeasureFPR sweeps bits per key for every filter kind on the same keys and
// the same non-member queries.
func MeasureFPR(c Config, pr *progress) (*FPRResult, error) {
	m := &fprRun{c: c, pr: pr,
		members: KeyGen{Seed: c.Seed*1000 + 1, Width: ShortKeyLen},
		absent:  KeyGen{Seed: c.Seed*1000 + 2, Width: ShortKeyLen},
		r:       &FPRResult{Keys: c.FPRKeys, Queries: c.FPRQueries}}
	for _, step := range []func() error{m.budgets, m.headline, m.bySize, m.byShape} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return m.r, nil
}

// fprRun is one false-positive experiment: its random members and
// non-members, and the points measured so far.
type fprRun struct {
	c       Config
	pr      *progress
	members KeyGen
	absent  KeyGen
	r       *FPRResult
}

// fprFilter is one filter to measure: its series, parameter, the swept
// value and the kind that builds it.
type fprFilter struct {
	series, param string
	x             int
	k             Kind
}

// measure builds each filter over n members, counts its hits on q
// non-members and appends its point to dst.
func (m *fprRun) measure(dst *[]FPRPoint, n, q int, fs ...fprFilter) error {
	for _, f := range fs {
		m.pr.Tick("%s %s", f.series, f.param)
		p, _, err := measurePoint(f.series, f.param, f.x, f.k, m.members.First(n), q,
			func(fl Filter) int { return CountStream(fl, m.absent, q) })
		if err != nil {
			return err
		}
		*dst = append(*dst, p)
	}
	return nil
}

// budgets sweeps the budget B for FilterPolicy(B), Pebble's bloom and a
// standard bloom filter, the explicit layouts over the same range of bits
// per key, and the binary fuse filters; with the ideal bloom filter and
// the log2(1/eps) bound as formulas.
func (m *fprRun) budgets() error {
	c, r := m.c, m.r
	n, q := c.FPRKeys, c.FPRQueries
	m.pr.Stage("fpr: %d keys, %d non-member queries per filter, %d..%d bits/key", n, q, c.FPRMinBits, c.FPRMaxBits)
	for b := c.FPRMinBits; b <= c.FPRMaxBits; b++ {
		param := fmt.Sprintf("B=%d", b)
		if err := m.measure(&r.Points, n, q,
			fprFilter{SeriesCuckoo, param, b, PolicyKind("cuckoo", cuckoopolicy.FilterPolicy(b))},
			fprFilter{SeriesPebbleBloom, param, b, PolicyKind("bloom", pbloom.FilterPolicy(b))},
			fprFilter{SeriesStdBloom, param, b, StdBloomKind(float64(b))}); err != nil {
			return err
		}
		r.Points = append(r.Points, FPRPoint{Series: SeriesIdealBloom, Param: param, X: b,
			BitsPerKey: float64(b), FPR: IdealBloomFPR(float64(b))})
		// Plain buckets hold f bits a key at load ~1, semi-sorted f-1: sweep
		// f so that both cover the same range of bits per key.
		var layouts []fprFilter
		if f := b; f >= 4 {
			layouts = append(layouts, fprFilter{SeriesCuckooPlain, fmt.Sprintf("f=%d", f), f,
				PolicyKind("plain", cuckoopolicy.Policy{FingerprintBits: f})})
		}
		if f := b + 1; f >= 5 {
			layouts = append(layouts, fprFilter{SeriesCuckooSemi, fmt.Sprintf("f=%d", f), f,
				PolicyKind("semi", cuckoopolicy.Policy{FingerprintBits: f, SemiSort: true})})
		}
		if err := m.measure(&r.Points, n, q, layouts...); err != nil {
			return err
		}
	}
	if err := m.measure(&r.Points, n, q,
		fprFilter{SeriesFuse8, "8-bit", 8, FuseKind[uint8]("fuse8")},
		fprFilter{SeriesFuse16, "16-bit", 16, FuseKind[uint16]("fuse16")}); err != nil {
		return err
	}
	for b := c.FPRMinBits; b <= c.FPRMaxBits; b++ {
		r.Points = append(r.Points, FPRPoint{Series: SeriesBound, Param: fmt.Sprintf("eps=2^-%d", b), X: b,
			BitsPerKey: float64(b), FPR: math.Pow(2, -float64(b))})
	}
	return nil
}

// headline measures the paper's headline configurations: 12-bit
// fingerprints (12.53 bits/item, 0.19%), semi-sorted 13-bit (12.57, 0.09%),
// bloom at 13 bits/item (0.20%). At the builder's default load, at the
// paper's 95.5% and at 97.5%; and the budgeted FilterPolicy(13).
func (m *fprRun) headline() error {
	m.pr.Stage("fpr: headline configurations")
	return m.measure(&m.r.Headline, m.c.FPRKeys, m.c.FPRQueries,
		fprFilter{SeriesCuckooPlain, "f=12", 0, PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 12})},
		fprFilter{SeriesCuckooPlain, "f=12, load 0.955", 0, PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 12, LoadFactor: 0.955})},
		fprFilter{SeriesCuckooSemi, "f=13", 0, PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 13, SemiSort: true})},
		fprFilter{SeriesCuckooSemi, "f=13, load 0.955", 0, PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 13, SemiSort: true, LoadFactor: 0.955})},
		fprFilter{SeriesCuckooSemi, "f=13, load 0.975", 0, PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 13, SemiSort: true, LoadFactor: 0.975})},
		fprFilter{SeriesCuckoo, "B=13", 0, PolicyKind("", cuckoopolicy.FilterPolicy(13))},
		fprFilter{SeriesPebbleBloom, "B=13", 0, PolicyKind("", pbloom.FilterPolicy(13))},
		fprFilter{SeriesStdBloom, "13 bits", 0, StdBloomKind(13)})
}

// bySize measures the same budget over more and more keys. Pebble's bloom
// picks the cache line and the bit positions in it from one 32-bit hash, so
// the more lines, the fewer hash bits are left to choose the positions.
func (m *fprRun) bySize() error {
	c, r := m.c, m.r
	if len(c.FPRSizes) == 0 {
		return nil
	}
	bb := c.FPRSizeBits
	r.SizeBits, r.SizeQueries = bb, min(c.FPRQueries, 20_000_000)
	m.pr.Stage("fpr: B=%d over %v keys, %d queries each", bb, c.FPRSizes, r.SizeQueries)
	for _, sz := range c.FPRSizes {
		param := fmt.Sprintf("n=%d", sz)
		if err := m.measure(&r.BySize, sz, r.SizeQueries,
			fprFilter{SeriesCuckoo, param, sz, PolicyKind("", cuckoopolicy.FilterPolicy(bb))},
			fprFilter{SeriesPebbleBloom, param, sz, PolicyKind("", pbloom.FilterPolicy(bb))}); err != nil {
			return err
		}
	}
	return nil
}

// byShape measures sequential keys of a few common forms. Pebble's bloom
// hashes with a 32-bit function whose spread depends on the keys; cuckoo
// filters address by a 64-bit xxhash.
func (m *fprRun) byShape() error {
	c, r := m.c, m.r
	if len(c.FPRShapeBits) == 0 || len(c.FPRShapeKeys) == 0 {
		return nil
	}
	r.ShapeQueries = min(c.FPRQueries, c.FPRShapeQueries)
	for _, shape := range KeyShapes {
		for _, count := range c.FPRShapeKeys {
			m.pr.Stage("fpr: %d %s keys (%s), B=%v, %d queries each", count, shape.Name, shape.Format, c.FPRShapeBits, r.ShapeQueries)
			if err := m.shape(shape, count); err != nil {
				return err
			}
		}
	}
	return nil
}

// shape measures FilterPolicy(B) and bloom(B) at each shape budget over
// count sequential keys of one shape, queried with the keys that follow.
func (m *fprRun) shape(shape KeyShape, count int) error {
	keys, err := shape.Set(0, count)
	if err != nil {
		return err
	}
	queries, err := shape.Set(count, m.r.ShapeQueries)
	if err != nil {
		return err
	}
	for _, bb := range m.c.FPRShapeBits {
		for _, k := range []struct {
			series string
			pol    pebble.FilterPolicy
		}{{SeriesCuckoo, cuckoopolicy.FilterPolicy(bb)}, {SeriesPebbleBloom, pbloom.FilterPolicy(bb)}} {
			m.pr.Tick("%s %s B=%d", k.series, shape.Format, bb)
			p, f, err := measurePoint(k.series, shape.Format, bb, PolicyKind("", k.pol), keys, m.r.ShapeQueries,
				func(f Filter) int { return f.Count(queries) })
			if err != nil {
				return err
			}
			if miss := count - f.Count(keys); miss != 0 {
				return fmt.Errorf("%s %s B=%d: %d false negatives", k.series, shape.Format, bb, miss)
			}
			m.r.ByShape = append(m.r.ByShape, p)
		}
	}
	return nil
}

// measurePoint builds k over members and returns the filter and its point:
// bits per key, and the hits count reports among q non-member queries.
func measurePoint(series, param string, x int, k Kind, members Keys, q int, count func(Filter) int) (FPRPoint, Filter, error) {
	f, err := k.Build(members)
	if err != nil {
		return FPRPoint{}, nil, fmt.Errorf("%s %s: %w", series, param, err)
	}
	n, hits := members.Len(), count(f)
	// A false negative is a bug, not a point to plot.
	if i := missedMember(f, members); i >= 0 {
		return FPRPoint{}, nil, fmt.Errorf("%s %s: false negative: member %d of %d answered absent", series, param, i, n)
	}
	p := FPRPoint{Series: series, Param: param, X: x, Keys: n,
		BitsPerKey: 8 * float64(f.Bytes()) / float64(n),
		FPR:        float64(hits) / float64(q), Hits: hits, Queries: q}
	if cb, ok := f.(CuckooBlock); ok {
		p.Info = inspectString(cb)
	}
	return p, f, nil
}

// missedMember asks f about up to 2^16 of its members, spread over all of
// them, and returns the index of the first it answers absent for, or -1.
func missedMember(f Filter, members Keys) int {
	step, i, missed := max(1, members.Len()>>16), 0, -1
	members.Each(func(key []byte) {
		if i%step == 0 && missed < 0 && !f.Contains(key) {
			missed = i
		}
		i++
	})
	return missed
}

func inspectString(b []byte) string {
	in, err := cuckoopolicy.Inspect(b)
	if err != nil {
		return "inspect: " + err.Error()
	}
	s := fmt.Sprintf("f=%d load=%.3f", in.FingerprintBits, in.LoadFactor)
	if in.SemiSorted {
		s += " semi"
	}
	return s
}

// fprTargets judges the false-positive rate: below Pebble's bloom at every
// budget from 9 to 24, and semi-sorted space within 1.25x of the
// information-theoretic bound near eps = 0.1%.
func (r *Report) fprTargets() []Target {
	return []Target{r.fprBudgetTarget(), r.fprSpaceTarget()}
}

func (r *Report) fprBudgetTarget() Target {
	name := "cuckoo FilterPolicy(B) FPR below Pebble's bloom(B) at every B in 9..24"
	ok, n, worst, worstB := true, 0, 0.0, 0
	if r.FPR != nil {
		for b := 9; b <= 24; b++ {
			cp, ok1 := r.FPR.Find(SeriesCuckoo, b)
			bp, ok2 := r.FPR.Find(SeriesPebbleBloom, b)
			if !ok1 || !ok2 {
				continue
			}
			n++
			ratio := ratioHits(cp, bp)
			if ratio > worst {
				worst, worstB = ratio, b
			}
			if cp.Hits >= bp.Hits {
				ok = false
			}
		}
	}
	return newTarget(name, ok, n > 0, "%d budgets measured; worst FPR ratio cuckoo/bloom %.3f at B=%d", n, worst, worstB)
}

// fprSpaceTarget takes the best semi-sorted configuration measured with
// eps in [0.05%, 0.2%].
func (r *Report) fprSpaceTarget() Target {
	name := "semi-sorted space within 1.25x of log2(1/eps) at eps near 0.1% (best semi-sorted point with eps in 0.05%..0.2%)"
	var best FPRPoint
	bestRatio := math.Inf(1)
	if r.FPR != nil {
		for _, p := range append(slices.Clone(r.FPR.Points), r.FPR.Headline...) {
			if (p.Series == SeriesCuckoo || p.Series == SeriesCuckooSemi) && p.Hits > 0 && p.FPR >= 5e-4 && p.FPR <= 2e-3 {
				if ratio := p.BitsPerKey / math.Log2(1/p.FPR); ratio < bestRatio {
					best, bestRatio = p, ratio
				}
			}
		}
	}
	found := !math.IsInf(bestRatio, 1)
	return newTarget(name, bestRatio <= 1.25, found, "%s %s: %.2f bits/key at eps=%s, log2(1/eps)=%.2f, ratio %.3f",
		best.Series, best.Param, best.BitsPerKey, pct(best.FPR), math.Log2(1/best.FPR), bestRatio)
}

// ratioHits is the FPR ratio of two points, counting zero hits as half a hit
// so that the ratio stays finite.
func ratioHits(a, b FPRPoint) float64 {
	ha, hb := float64(a.Hits), float64(b.Hits)
	if ha == 0 {
		ha = 0.5
	}
	if hb == 0 {
		hb = 0.5
	}
	return (ha / float64(a.Queries)) / (hb / float64(b.Queries))
}

// writeFPR writes section 2: the tables by budget, by layout, the paper's
// headline rows, by filter size and by key shape, and the plot.
func (r *Report) writeFPR(w *markdown) {
	if !w.section("2. False-positive rate against bits per key (the paper's Figure 2)", r.FPR != nil) {
		return
	}
	f := r.FPR
	fmt.Fprintf(w, "%d random 16-byte keys; FPR over %d non-member queries (hits shown: a count of 0 means below %s). "+
		"Bits per key are measured: 8·len(filter)/keys (trailers included), or m/n for the standard bloom filter. "+
		"Cuckoo blocks are described by cuckoopolicy.Inspect.\n\n", f.Keys, f.Queries, pct(1/float64(f.Queries)))
	r.writeFPRBudgets(w)
	writeFPRLayouts(w, f)
	writeFPRHeadline(w, f)
	writeFPRSizes(w, f)
	r.writeFPRShapes(w)
	plotFPR(w, f)
}

func (r *Report) writeFPRBudgets(w *markdown) {
	f := r.FPR
	var rows [][]string
	for bb := r.Config.FPRMinBits; bb <= r.Config.FPRMaxBits; bb++ {
		cp, _ := f.Find(SeriesCuckoo, bb)
		bp, _ := f.Find(SeriesPebbleBloom, bb)
		sp, _ := f.Find(SeriesStdBloom, bb)
		ratio := ""
		if bp.Queries > 0 && cp.Queries > 0 {
			ratio = fmt.Sprintf("%.3f", ratioHits(cp, bp))
		}
		rows = append(rows, []string{fmt.Sprint(bb),
			fmt.Sprintf("%s (%d) %.2f b/k, %s", pct(cp.FPR), cp.Hits, cp.BitsPerKey, cp.Info),
			fmt.Sprintf("%s (%d) %.2f b/k", pct(bp.FPR), bp.Hits, bp.BitsPerKey),
			ratio,
			fmt.Sprintf("%s (%d)", pct(sp.FPR), sp.Hits),
			pct(IdealBloomFPR(float64(bb)))})
	}
	w.WriteString("By budget B (FPR (hits) bits/key):\n\n")
	w.table([]string{"B", "cuckoo FilterPolicy(B)", "pebble bloom(B)", "FPR ratio cuckoo/bloom", "standard bloom", "ideal bloom"}, rows)
}

func writeFPRLayouts(w *markdown, f *FPRResult) {
	var rows [][]string
	for _, series := range []string{SeriesCuckooPlain, SeriesCuckooSemi, SeriesFuse8, SeriesFuse16} {
		for _, p := range f.Points {
			if p.Series == series {
				rows = append(rows, []string{series, p.Param, f2(p.BitsPerKey), pct(p.FPR), fmt.Sprint(p.Hits),
					f2(p.BitsPerKey / math.Log2(1/math.Max(p.FPR, 0.5/float64(p.Queries)))), p.Info})
			}
		}
	}
	w.WriteString("Explicit layouts and binary fuse filters (space/bound: bits per key over log2(1/eps); with 0 hits eps is taken as half a hit):\n\n")
	w.table([]string{"filter", "param", "bits/key", "FPR", "hits", "space/bound", "inspect"}, rows)
}

func writeFPRHeadline(w *markdown, f *FPRResult) {
	w.WriteString("The paper's headline rows beside ours (paper: 12-bit fingerprints at 12.53 bits/item and 0.19%; " +
		"semi-sorted at 12.57 bits/item and 0.09%; a standard bloom filter at 13 bits/item and 0.20%, set beside the standard bloom row, " +
		"not beside Pebble's, whose blocked layout and 32-bit hash cost it more at 13 bits):\n\n")
	var rows [][]string
	paper := map[string]string{SeriesCuckooPlain: "12.53 b/i, 0.19%", SeriesCuckooSemi: "12.57 b/i, 0.09%",
		SeriesStdBloom: "13 b/i, 0.20%"}
	for _, p := range f.Headline {
		rows = append(rows, []string{p.Series, p.Param, f2(p.BitsPerKey), pct(p.FPR), fmt.Sprint(p.Hits), paper[p.Series], p.Info})
	}
	w.table([]string{"filter", "config", "bits/key", "FPR", "hits", "paper", "inspect"}, rows)
}

func writeFPRSizes(w *markdown, f *FPRResult) {
	if len(f.BySize) == 0 {
		return
	}
	fmt.Fprintf(w, "By filter size, at B=%d over %d non-member queries each. Pebble's bloom picks a cache line and "+
		"the bit positions in it from one 32-bit hash: the more lines a filter has, the fewer hash bits are "+
		"left to choose the positions, and its rate rises with the number of keys in the filter (one filter covers one sstable). "+
		"Cuckoo filters hash to 64 bits:\n\n", f.SizeBits, f.SizeQueries)
	var rows [][]string
	for _, pair := range f.SizePairs() {
		cp, bp := pair[0], pair[1]
		rows = append(rows, []string{fmt.Sprint(cp.X),
			fmt.Sprintf("%s (%d) %.2f b/k", pct(cp.FPR), cp.Hits, cp.BitsPerKey),
			fmt.Sprintf("%s (%d) %.2f b/k", pct(bp.FPR), bp.Hits, bp.BitsPerKey),
			fmt.Sprintf("%.3f", ratioHits(cp, bp))})
	}
	w.table([]string{"keys", fmt.Sprintf("cuckoo FilterPolicy(%d)", f.SizeBits), fmt.Sprintf("pebble bloom(%d)", f.SizeBits), "FPR ratio cuckoo/bloom"}, rows)
}

func (r *Report) writeFPRShapes(w *markdown) {
	f := r.FPR
	pairs := f.ShapePairs()
	if len(pairs) == 0 {
		return
	}
	fmt.Fprintf(w, "By key shape: sequential keys of each form, queried with the next %d keys of the same form "+
		"(the random rows repeat the first table). Pebble's bloom hashes with a 32-bit function whose spread "+
		"depends on the keys, so its rate moves with their form and their number; a cuckoo filter addresses by a "+
		"64-bit xxhash and its rate does not:\n\n", f.ShapeQueries)
	var rows [][]string
	row := func(shape string, cp, bp FPRPoint) []string {
		return []string{shape, fmt.Sprint(cp.Keys), fmt.Sprint(cp.X),
			fmt.Sprintf("%s (%d)", pct(cp.FPR), cp.Hits), fmt.Sprintf("%s (%d)", pct(bp.FPR), bp.Hits),
			fmt.Sprintf("%.3f", ratioHits(cp, bp))}
	}
	for _, bb := range r.Config.FPRShapeBits {
		cp, ok1 := f.Find(SeriesCuckoo, bb)
		bp, ok2 := f.Find(SeriesPebbleBloom, bb)
		if ok1 && ok2 {
			rows = append(rows, row("random bytes", cp, bp))
		}
	}
	for _, pair := range pairs {
		rows = append(rows, row("`"+pair[0].Param+"`", pair[0], pair[1]))
	}
	w.table([]string{"keys", "members", "B", "cuckoo FilterPolicy(B)", "pebble bloom(B)", "FPR ratio cuckoo/bloom"}, rows)
}

func plotFPR(w *markdown, f *FPRResult) {
	var cs []curve
	series := []string{SeriesCuckoo, SeriesCuckooPlain, SeriesCuckooSemi, SeriesPebbleBloom, SeriesStdBloom, SeriesIdealBloom, SeriesFuse8, SeriesFuse16, SeriesBound}
	for _, s := range series {
		var xy plotter.XYs
		for _, p := range f.Points {
			if p.Series == s {
				xy = append(xy, plotter.XY{X: p.BitsPerKey, Y: 100 * p.FPR})
			}
		}
		sort.Slice(xy, func(i, j int) bool { return xy[i].X < xy[j].X })
		cs = append(cs, curve{name: s, xy: xy, points: s == SeriesFuse8 || s == SeriesFuse16,
			dashed: s == SeriesBound || s == SeriesIdealBloom, gray: s == SeriesBound})
	}
	w.plot("fpr.png", "False-positive rate vs bits per key", "bits per key (measured)", "FPR (%)", true, legendBottomLeft, 2, cs)
}

// fprVerdicts: budgets won and lost, Pebble's bloom against an ideal one,
// the trend with filter size, key shapes, and space against binary fuse.
func (r *Report) fprVerdicts() []string {
	f := r.FPR
	if f == nil {
		return nil
	}
	var v []string
	v = append(v, r.fprBudgetVerdicts()...)
	if b24, ok := f.Find(SeriesPebbleBloom, r.Config.FPRMaxBits); ok {
		v = append(v, fmt.Sprintf("Pebble's bloom at %d bits/key measures %s against %s for an ideal bloom filter (its 32-bit hash).",
			r.Config.FPRMaxBits, pct(b24.FPR), pct(IdealBloomFPR(float64(r.Config.FPRMaxBits)))))
	}
	if pairs := f.SizePairs(); len(pairs) >= 2 {
		c0, b0 := pairs[0][0], pairs[0][1]
		c1, b1 := pairs[len(pairs)-1][0], pairs[len(pairs)-1][1]
		v = append(v, fmt.Sprintf("Filter size, at B=%d: from %d to %d keys Pebble's bloom goes from %s to %s false positives, "+
			"cuckoo from %s to %s (ratio cuckoo/bloom %.3f, then %.3f).",
			f.SizeBits, c0.X, c1.X, pct(b0.FPR), pct(b1.FPR), pct(c0.FPR), pct(c1.FPR), ratioHits(c0, b0), ratioHits(c1, b1)))
	}
	v = append(v, r.shapeVerdicts()...)
	return append(v, fuseVerdicts(f)...)
}

func (r *Report) fprBudgetVerdicts() []string {
	var win, loss []int
	var sumRatio float64
	for b := r.Config.FPRMinBits; b <= r.Config.FPRMaxBits; b++ {
		cp, ok1 := r.FPR.Find(SeriesCuckoo, b)
		bp, ok2 := r.FPR.Find(SeriesPebbleBloom, b)
		if !ok1 || !ok2 {
			continue
		}
		if cp.Hits < bp.Hits {
			win = append(win, b)
		} else {
			loss = append(loss, b)
		}
		sumRatio += cp.BitsPerKey / bp.BitsPerKey
	}
	n := len(win) + len(loss)
	if n == 0 {
		return nil
	}
	s := fmt.Sprintf("FPR: cuckoo FilterPolicy(B) beats Pebble's bloom(B) at %d of %d budgets", len(win), n)
	if len(loss) > 0 {
		s += fmt.Sprintf("; loses or ties at B = %v", loss)
	}
	s += fmt.Sprintf("; its blocks are %.2fx bloom's size on average", sumRatio/float64(n))
	return []string{s + "."}
}

// shapeVerdicts gives, per budget of the key-shape table, the range of
// cuckoo/bloom ratios over its sets, and on how many bloom does better than
// on random keys.
func (r *Report) shapeVerdicts() []string {
	var v []string
	pairs := r.FPR.ShapePairs()
	for _, bb := range r.Config.FPRShapeBits {
		lo, hi := math.Inf(1), math.Inf(-1)
		sets, better := 0, 0
		rb, haveRandom := r.FPR.Find(SeriesPebbleBloom, bb)
		for _, pair := range pairs {
			if pair[0].X != bb {
				continue
			}
			ratio := ratioHits(pair[0], pair[1])
			lo, hi, sets = min(lo, ratio), max(hi, ratio), sets+1
			if haveRandom && pair[1].FPR < rb.FPR {
				better++
			}
		}
		if sets > 0 {
			v = append(v, fmt.Sprintf("Key shape, B=%d: over %d sets of sequential keys the FPR ratio cuckoo/bloom ranges "+
				"from %.3f to %.3f; Pebble's bloom does better than on random keys on %d of them.",
				bb, sets, lo, hi, better))
		}
	}
	return v
}

// fuseVerdicts sets each binary fuse filter beside the bits per key the
// cuckoo sweep needs for the same FPR.
func fuseVerdicts(f *FPRResult) []string {
	var v []string
	for _, fs := range []string{SeriesFuse8, SeriesFuse16} {
		for _, p := range f.Points {
			if p.Series != fs || p.Hits == 0 {
				continue
			}
			need, ok := bitsForFPR(f, SeriesCuckoo, p.FPR)
			if !ok {
				v = append(v, fmt.Sprintf("%s: %s at %.2f bits/key; the cuckoo sweep does not reach that FPR with measured hits.", fs, pct(p.FPR), p.BitsPerKey))
				continue
			}
			// The smaller filter's saving, relative to the larger one.
			smaller, small, large := "binary fuse", p.BitsPerKey, need
			if need < p.BitsPerKey {
				smaller, small, large = "cuckoo", need, p.BitsPerKey
			}
			v = append(v, fmt.Sprintf("Space at equal FPR: %s reaches %s at %.2f bits/key; cuckoo FilterPolicy needs %.2f (interpolated): %s takes %.0f%% less space; binary fuse is static (no deletes) and not a Pebble policy.",
				fs, pct(p.FPR), p.BitsPerKey, need, smaller, 100*(large-small)/large))
		}
	}
	return v
}

// bitsForFPR interpolates, along a series sorted by bits per key, the bits
// per key at which the measured FPR reaches eps (linear in log FPR).
func bitsForFPR(f *FPRResult, series string, eps float64) (float64, bool) {
	var pts []FPRPoint
	for _, p := range f.Points {
		if p.Series == series && p.Hits > 0 {
			pts = append(pts, p)
		}
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].BitsPerKey < pts[j].BitsPerKey })
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if a.FPR >= eps && b.FPR <= eps && a.FPR != b.FPR {
			t := (math.Log(a.FPR) - math.Log(eps)) / (math.Log(a.FPR) - math.Log(b.FPR))
			return a.BitsPerKey + t*(b.BitsPerKey-a.BitsPerKey), true
		}
	}
	return 0, false
}
