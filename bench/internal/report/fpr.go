package report

import (
	"fmt"
	"math"

	"github.com/cockroachdb/pebble/v2"
	pbloom "github.com/cockroachdb/pebble/v2/bloom"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/filters"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/keys"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/progress"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// Series names shared by the experiments and the report.
const (
	seriesCuckoo      = "cuckoo FilterPolicy(B)" // semi-sorted, budgeted: the drop-in
	seriesCuckooPlain = "cuckoo plain Policy{f}"
	seriesCuckooSemi  = "cuckoo semi-sorted Policy{f}"
	seriesPebbleBloom = "pebble bloom(B)"
	seriesStdBloom    = "standard bloom"
	seriesIdealBloom  = "ideal bloom (formula)"
	seriesFuse8       = "binary fuse 8"
	seriesFuse16      = "binary fuse 16"
	seriesBound       = "log2(1/eps) bound"
)

// fprPoint is one filter's measured space and false-positive rate.
type fprPoint struct {
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

// fprResult is the false-positive experiment.
type fprResult struct {
	Keys, Queries int
	Points        []fprPoint
	Headline      []fprPoint // the paper's headline configurations
	// BySize is the sweep over key counts (X) at SizeBits bits per key,
	// over SizeQueries non-member queries.
	BySize                []fprPoint
	SizeBits, SizeQueries int
	// ByShape holds, for each keys.Shapes family (Param: its format), count
	// of sequential members and budget (X), FilterPolicy(B) and bloom(B),
	// queried with the next ShapeQueries keys of the family.
	ByShape      []fprPoint
	ShapeQueries int
}

// Find returns the point of a series with parameter x.
func (r *fprResult) find(series string, x int) (fprPoint, bool) {
	return findPoint(r.Points, series, x)
}

func findPoint(ps []fprPoint, series string, x int) (fprPoint, bool) {
	for _, p := range ps {
		if p.Series == series && p.X == x {
			return p, true
		}
	}
	return fprPoint{}, false
}

// SizePairs returns the size sweep as (cuckoo, bloom) pairs measured over
// the same key count, in the sweep's order.
func (r *fprResult) sizePairs() [][2]fprPoint {
	var pairs [][2]fprPoint
	for _, c := range r.BySize {
		if c.Series != seriesCuckoo {
			continue
		}
		if b, ok := findPoint(r.BySize, seriesPebbleBloom, c.X); ok {
			pairs = append(pairs, [2]fprPoint{c, b})
		}
	}
	return pairs
}

// ShapePairs returns the key-shape table as (cuckoo, bloom) pairs over the
// same keys, in the order measured.
func (r *fprResult) shapePairs() [][2]fprPoint {
	var pairs [][2]fprPoint
	for _, c := range r.ByShape {
		if c.Series != seriesCuckoo {
			continue
		}
		for _, b := range r.ByShape {
			if b.Series == seriesPebbleBloom && b.Param == c.Param && b.X == c.X && b.Keys == c.Keys {
				pairs = append(pairs, [2]fprPoint{c, b})
			}
		}
	}
	return pairs
}

// measureFPR sweeps bits per key for every filter kind on the same keys and
// the same non-member queries.
func measureFPR(c Config, pr *progress.Printer) (*fprResult, error) {
	m := &fprRun{c: c, pr: pr,
		members: keys.Gen{Seed: c.Seed*1000 + 1, Width: keys.ShortLen},
		absent:  keys.Gen{Seed: c.Seed*1000 + 2, Width: keys.ShortLen},
		r:       &fprResult{Keys: c.FPRKeys, Queries: c.FPRQueries}}
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
	pr      *progress.Printer
	members keys.Gen
	absent  keys.Gen
	r       *fprResult
}

// fprFilter is one filter to measure: its series, parameter, the swept
// value and the kind that builds it.
type fprFilter struct {
	series, param string
	x             int
	k             filters.Kind
}

// measure builds each filter over n members, counts its hits on q
// non-members and appends its point to dst.
func (m *fprRun) measure(dst *[]fprPoint, n, q int, fs ...fprFilter) error {
	for _, f := range fs {
		m.pr.Tick("%s %s", f.series, f.param)
		p, _, err := measurePoint(f.series, f.param, f.x, f.k, m.members.First(n), q,
			func(fl filters.Filter) int { return filters.CountStream(fl, m.absent, q) })
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
			fprFilter{seriesCuckoo, param, b, filters.PolicyKind("cuckoo", cuckoopolicy.FilterPolicy(b))},
			fprFilter{seriesPebbleBloom, param, b, filters.PolicyKind("bloom", pbloom.FilterPolicy(b))},
			fprFilter{seriesStdBloom, param, b, filters.StdBloomKind(float64(b))}); err != nil {
			return err
		}
		r.Points = append(r.Points, fprPoint{Series: seriesIdealBloom, Param: param, X: b,
			BitsPerKey: float64(b), FPR: filters.IdealBloomFPR(float64(b))})
		// Plain buckets hold f bits a key at load ~1, semi-sorted f-1: sweep
		// f so that both cover the same range of bits per key.
		var layouts []fprFilter
		if f := b; f >= 4 {
			layouts = append(layouts, fprFilter{seriesCuckooPlain, fmt.Sprintf("f=%d", f), f,
				filters.PolicyKind("plain", cuckoopolicy.Policy{FingerprintBits: f})})
		}
		if f := b + 1; f >= 5 {
			layouts = append(layouts, fprFilter{seriesCuckooSemi, fmt.Sprintf("f=%d", f), f,
				filters.PolicyKind("semi", cuckoopolicy.Policy{FingerprintBits: f, SemiSort: true})})
		}
		if err := m.measure(&r.Points, n, q, layouts...); err != nil {
			return err
		}
	}
	if err := m.measure(&r.Points, n, q,
		fprFilter{seriesFuse8, "8-bit", 8, filters.FuseKind[uint8]("fuse8")},
		fprFilter{seriesFuse16, "16-bit", 16, filters.FuseKind[uint16]("fuse16")}); err != nil {
		return err
	}
	for b := c.FPRMinBits; b <= c.FPRMaxBits; b++ {
		r.Points = append(r.Points, fprPoint{Series: seriesBound, Param: fmt.Sprintf("eps=2^-%d", b), X: b,
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
		fprFilter{seriesCuckooPlain, "f=12", 0, filters.PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 12})},
		fprFilter{seriesCuckooPlain, "f=12, load 0.955", 0, filters.PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 12, LoadFactor: 0.955})},
		fprFilter{seriesCuckooSemi, "f=13", 0, filters.PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 13, SemiSort: true})},
		fprFilter{seriesCuckooSemi, "f=13, load 0.955", 0, filters.PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 13, SemiSort: true, LoadFactor: 0.955})},
		fprFilter{seriesCuckooSemi, "f=13, load 0.975", 0, filters.PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 13, SemiSort: true, LoadFactor: 0.975})},
		fprFilter{seriesCuckoo, "B=13", 0, filters.PolicyKind("", cuckoopolicy.FilterPolicy(13))},
		fprFilter{seriesPebbleBloom, "B=13", 0, filters.PolicyKind("", pbloom.FilterPolicy(13))},
		fprFilter{seriesStdBloom, "13 bits", 0, filters.StdBloomKind(13)})
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
			fprFilter{seriesCuckoo, param, sz, filters.PolicyKind("", cuckoopolicy.FilterPolicy(bb))},
			fprFilter{seriesPebbleBloom, param, sz, filters.PolicyKind("", pbloom.FilterPolicy(bb))}); err != nil {
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
	for _, shape := range keys.Shapes {
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
func (m *fprRun) shape(shape keys.Shape, count int) error {
	ks, err := shape.Set(0, count)
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
		}{{seriesCuckoo, cuckoopolicy.FilterPolicy(bb)}, {seriesPebbleBloom, pbloom.FilterPolicy(bb)}} {
			m.pr.Tick("%s %s B=%d", k.series, shape.Format, bb)
			p, f, err := measurePoint(k.series, shape.Format, bb, filters.PolicyKind("", k.pol), ks, m.r.ShapeQueries,
				func(f filters.Filter) int { return f.Count(queries) })
			if err != nil {
				return err
			}
			if miss := count - f.Count(ks); miss != 0 {
				return fmt.Errorf("%s %s B=%d: %d false negatives", k.series, shape.Format, bb, miss)
			}
			m.r.ByShape = append(m.r.ByShape, p)
		}
	}
	return nil
}

// measurePoint builds k over members and returns the filter and its point:
// bits per key, and the hits count reports among q non-member queries.
func measurePoint(series, param string, x int, k filters.Kind, members keys.Seq, q int, count func(filters.Filter) int) (fprPoint, filters.Filter, error) {
	f, err := k.Build(members)
	if err != nil {
		return fprPoint{}, nil, fmt.Errorf("%s %s: %w", series, param, err)
	}
	n, hits := members.Len(), count(f)
	// A false negative is a bug, not a point to plot.
	if i := missedMember(f, members); i >= 0 {
		return fprPoint{}, nil, fmt.Errorf("%s %s: false negative: member %d of %d answered absent", series, param, i, n)
	}
	p := fprPoint{Series: series, Param: param, X: x, Keys: n,
		BitsPerKey: 8 * float64(f.Bytes()) / float64(n),
		FPR:        float64(hits) / float64(q), Hits: hits, Queries: q}
	if cb, ok := f.(filters.CuckooBlock); ok {
		p.Info = inspectString(cb)
	}
	return p, f, nil
}

// missedMember asks f about up to 2^16 of its members, spread over all of
// them, and returns the index of the first it answers absent for, or -1.
func missedMember(f filters.Filter, members keys.Seq) int {
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
	if in.SemiSort {
		s += " semi"
	}
	return s
}
