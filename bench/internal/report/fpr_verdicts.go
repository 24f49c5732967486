package report

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/filters"
)

// fprTargets judges the false-positive rate: below Pebble's bloom at every
// budget from 9 to 24, and semi-sorted space within 1.25x of the
// information-theoretic bound near eps = 0.1%.
func (r *report) fprTargets() []target {
	return []target{r.fprBudgetTarget(), r.fprSpaceTarget()}
}

func (r *report) fprBudgetTarget() target {
	name := "cuckoo FilterPolicy(B) FPR below Pebble's bloom(B) at every B in 9..24"
	ok, n, worst, worstB := true, 0, 0.0, 0
	if r.FPR != nil {
		for b := 9; b <= 24; b++ {
			cp, ok1 := r.FPR.find(seriesCuckoo, b)
			bp, ok2 := r.FPR.find(seriesPebbleBloom, b)
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
func (r *report) fprSpaceTarget() target {
	name := "semi-sorted space within 1.25x of log2(1/eps) at eps near 0.1% (best semi-sorted point with eps in 0.05%..0.2%)"
	var best fprPoint
	bestRatio := math.Inf(1)
	if r.FPR != nil {
		for _, p := range append(slices.Clone(r.FPR.Points), r.FPR.Headline...) {
			if (p.Series == seriesCuckoo || p.Series == seriesCuckooSemi) && p.Hits > 0 && p.FPR >= 5e-4 && p.FPR <= 2e-3 {
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
func ratioHits(a, b fprPoint) float64 {
	ha, hb := float64(a.Hits), float64(b.Hits)
	if ha == 0 {
		ha = 0.5
	}
	if hb == 0 {
		hb = 0.5
	}
	return (ha / float64(a.Queries)) / (hb / float64(b.Queries))
}

// fprVerdicts: budgets won and lost, Pebble's bloom against an ideal one,
// the trend with filter size, key shapes, and space against binary fuse.
func (r *report) fprVerdicts() []string {
	f := r.FPR
	if f == nil {
		return nil
	}
	var v []string
	v = append(v, r.fprBudgetVerdicts()...)
	if b24, ok := f.find(seriesPebbleBloom, r.Config.FPRMaxBits); ok {
		v = append(v, fmt.Sprintf("Pebble's bloom at %d bits/key measures %s against %s for an ideal bloom filter (its 32-bit hash).",
			r.Config.FPRMaxBits, pct(b24.FPR), pct(filters.IdealBloomFPR(float64(r.Config.FPRMaxBits)))))
	}
	if pairs := f.sizePairs(); len(pairs) >= 2 {
		c0, b0 := pairs[0][0], pairs[0][1]
		c1, b1 := pairs[len(pairs)-1][0], pairs[len(pairs)-1][1]
		v = append(v, fmt.Sprintf("Filter size, at B=%d: from %d to %d keys Pebble's bloom goes from %s to %s false positives, "+
			"cuckoo from %s to %s (ratio cuckoo/bloom %.3f, then %.3f).",
			f.SizeBits, c0.X, c1.X, pct(b0.FPR), pct(b1.FPR), pct(c0.FPR), pct(c1.FPR), ratioHits(c0, b0), ratioHits(c1, b1)))
	}
	v = append(v, r.shapeVerdicts()...)
	return append(v, fuseVerdicts(f)...)
}

func (r *report) fprBudgetVerdicts() []string {
	var win, loss []int
	var sumRatio float64
	for b := r.Config.FPRMinBits; b <= r.Config.FPRMaxBits; b++ {
		cp, ok1 := r.FPR.find(seriesCuckoo, b)
		bp, ok2 := r.FPR.find(seriesPebbleBloom, b)
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
func (r *report) shapeVerdicts() []string {
	var v []string
	pairs := r.FPR.shapePairs()
	for _, bb := range r.Config.FPRShapeBits {
		lo, hi := math.Inf(1), math.Inf(-1)
		sets, better := 0, 0
		rb, haveRandom := r.FPR.find(seriesPebbleBloom, bb)
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
func fuseVerdicts(f *fprResult) []string {
	var v []string
	for _, fs := range []string{seriesFuse8, seriesFuse16} {
		for _, p := range f.Points {
			if p.Series != fs || p.Hits == 0 {
				continue
			}
			need, ok := bitsForFPR(f, seriesCuckoo, p.FPR)
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
func bitsForFPR(f *fprResult, series string, eps float64) (float64, bool) {
	var pts []fprPoint
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
