package bench

import (
	"fmt"
	"math"

	"github.com/cockroachdb/pebble/v2"
	pbloom "github.com/cockroachdb/pebble/v2/bloom"

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
	members := KeyGen{Seed: c.Seed*1000 + 1, Width: ShortKeyLen}
	absent := KeyGen{Seed: c.Seed*1000 + 2, Width: ShortKeyLen}
	n, q := c.FPRKeys, c.FPRQueries
	r := &FPRResult{Keys: n, Queries: q}

	// measureTo builds k over n members, counts its hits on q non-members
	// and appends the point to dst.
	measureTo := func(dst *[]FPRPoint, series, param string, x int, k Kind, n, q int) error {
		pr.Tick("%s %s", series, param)
		p, _, err := measurePoint(series, param, x, k, members.First(n), q,
			func(f Filter) int { return CountStream(f, absent, q) })
		if err != nil {
			return err
		}
		*dst = append(*dst, p)
		return nil
	}
	measure := func(series, param string, x int, k Kind) error {
		return measureTo(&r.Points, series, param, x, k, n, q)
	}

	pr.Stage("fpr: %d keys, %d non-member queries per filter, %d..%d bits/key", n, q, c.FPRMinBits, c.FPRMaxBits)
	for b := c.FPRMinBits; b <= c.FPRMaxBits; b++ {
		param := fmt.Sprintf("B=%d", b)
		if err := measure(SeriesCuckoo, param, b, PolicyKind("cuckoo", cuckoopolicy.FilterPolicy(b))); err != nil {
			return nil, err
		}
		if err := measure(SeriesPebbleBloom, param, b, PolicyKind("bloom", pbloom.FilterPolicy(b))); err != nil {
			return nil, err
		}
		if err := measure(SeriesStdBloom, param, b, StdBloomKind(float64(b))); err != nil {
			return nil, err
		}
		r.Points = append(r.Points, FPRPoint{Series: SeriesIdealBloom, Param: param, X: b,
			BitsPerKey: float64(b), FPR: IdealBloomFPR(float64(b))})
		// Plain buckets hold f bits a key at load ~1, semi-sorted f-1: sweep
		// f so that both cover the same range of bits per key.
		if f := b; f >= 4 {
			if err := measure(SeriesCuckooPlain, fmt.Sprintf("f=%d", f), f,
				PolicyKind("plain", cuckoopolicy.Policy{FingerprintBits: f})); err != nil {
				return nil, err
			}
		}
		if f := b + 1; f >= 5 {
			if err := measure(SeriesCuckooSemi, fmt.Sprintf("f=%d", f), f,
				PolicyKind("semi", cuckoopolicy.Policy{FingerprintBits: f, SemiSort: true})); err != nil {
				return nil, err
			}
		}
	}
	if err := measure(SeriesFuse8, "8-bit", 8, FuseKind[uint8]("fuse8")); err != nil {
		return nil, err
	}
	if err := measure(SeriesFuse16, "16-bit", 16, FuseKind[uint16]("fuse16")); err != nil {
		return nil, err
	}
	for b := c.FPRMinBits; b <= c.FPRMaxBits; b++ {
		eps := math.Pow(2, -float64(b))
		r.Points = append(r.Points, FPRPoint{Series: SeriesBound, Param: fmt.Sprintf("eps=2^-%d", b), X: b,
			BitsPerKey: float64(b), FPR: eps})
	}

	// The paper's headline: 12-bit fingerprints (12.53 bits/item, 0.19%),
	// semi-sorted 13-bit (12.57, 0.09%), bloom at 13 bits/item (0.20%). At
	// the builder's default load, at the paper's 95.5% and at 97.5%; and the
	// budgeted FilterPolicy(13).
	pr.Stage("fpr: headline configurations")
	head := []struct {
		series, param string
		k             Kind
	}{
		{SeriesCuckooPlain, "f=12", PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 12})},
		{SeriesCuckooPlain, "f=12, load 0.955", PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 12, LoadFactor: 0.955})},
		{SeriesCuckooSemi, "f=13", PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 13, SemiSort: true})},
		{SeriesCuckooSemi, "f=13, load 0.955", PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 13, SemiSort: true, LoadFactor: 0.955})},
		{SeriesCuckooSemi, "f=13, load 0.975", PolicyKind("", cuckoopolicy.Policy{FingerprintBits: 13, SemiSort: true, LoadFactor: 0.975})},
		{SeriesCuckoo, "B=13", PolicyKind("", cuckoopolicy.FilterPolicy(13))},
		{SeriesPebbleBloom, "B=13", PolicyKind("", pbloom.FilterPolicy(13))},
		{SeriesStdBloom, "13 bits", StdBloomKind(13)},
	}
	for _, h := range head {
		if err := measureTo(&r.Headline, h.series, h.param, 0, h.k, n, q); err != nil {
			return nil, err
		}
	}

	// Filter size: the same budget over more and more keys. Pebble's bloom
	// picks the cache line and the bit positions in it from one 32-bit
	// hash, so the more lines, the fewer hash bits are left to choose the
	// positions.
	if len(c.FPRSizes) > 0 {
		bb := c.FPRSizeBits
		r.SizeBits, r.SizeQueries = bb, min(q, 20_000_000)
		pr.Stage("fpr: B=%d over %v keys, %d queries each", bb, c.FPRSizes, r.SizeQueries)
		for _, sz := range c.FPRSizes {
			param := fmt.Sprintf("n=%d", sz)
			if err := measureTo(&r.BySize, SeriesCuckoo, param, sz, PolicyKind("", cuckoopolicy.FilterPolicy(bb)), sz, r.SizeQueries); err != nil {
				return nil, err
			}
			if err := measureTo(&r.BySize, SeriesPebbleBloom, param, sz, PolicyKind("", pbloom.FilterPolicy(bb)), sz, r.SizeQueries); err != nil {
				return nil, err
			}
		}
	}
	// Key shape: sequential keys of a few common forms. Pebble's bloom
	// hashes with a 32-bit function whose spread depends on the keys;
	// cuckoo filters address by a 64-bit xxhash.
	if len(c.FPRShapeBits) > 0 && len(c.FPRShapeKeys) > 0 {
		r.ShapeQueries = min(q, c.FPRShapeQueries)
		for _, shape := range KeyShapes {
			for _, count := range c.FPRShapeKeys {
				pr.Stage("fpr: %d %s keys (%s), B=%v, %d queries each", count, shape.Name, shape.Format, c.FPRShapeBits, r.ShapeQueries)
				keys, err := shape.Set(0, count)
				if err != nil {
					return nil, err
				}
				queries, err := shape.Set(count, r.ShapeQueries)
				if err != nil {
					return nil, err
				}
				for _, bb := range c.FPRShapeBits {
					for _, k := range []struct {
						series string
						pol    pebble.FilterPolicy
					}{{SeriesCuckoo, cuckoopolicy.FilterPolicy(bb)}, {SeriesPebbleBloom, pbloom.FilterPolicy(bb)}} {
						pr.Tick("%s %s B=%d", k.series, shape.Format, bb)
						p, f, err := measurePoint(k.series, shape.Format, bb, PolicyKind("", k.pol), keys, r.ShapeQueries,
							func(f Filter) int { return f.Count(queries) })
						if err != nil {
							return nil, err
						}
						if miss := count - f.Count(keys); miss != 0 {
							return nil, fmt.Errorf("%s %s B=%d: %d false negatives", k.series, shape.Format, bb, miss)
						}
						r.ByShape = append(r.ByShape, p)
					}
				}
			}
		}
	}
	return r, nil
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
