package report

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/plot/plotter"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/filters"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/markdown"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/plot"
)

// writeFPR writes section 2: the tables by budget, by layout, the paper's
// headline rows, by filter size and by key shape, and the plot.
func (r *report) writeFPR(w *markdown.Doc) {
	if !w.Section("2. False-positive rate against bits per key (the paper's Figure 2)", r.FPR != nil) {
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

func (r *report) writeFPRBudgets(w *markdown.Doc) {
	f := r.FPR
	var rows [][]string
	for bb := r.Config.FPRMinBits; bb <= r.Config.FPRMaxBits; bb++ {
		cp, _ := f.find(seriesCuckoo, bb)
		bp, _ := f.find(seriesPebbleBloom, bb)
		sp, _ := f.find(seriesStdBloom, bb)
		ratio := ""
		if bp.Queries > 0 && cp.Queries > 0 {
			ratio = fmt.Sprintf("%.3f", ratioHits(cp, bp))
		}
		rows = append(rows, []string{fmt.Sprint(bb),
			fmt.Sprintf("%s (%d) %.2f b/k, %s", pct(cp.FPR), cp.Hits, cp.BitsPerKey, cp.Info),
			fmt.Sprintf("%s (%d) %.2f b/k", pct(bp.FPR), bp.Hits, bp.BitsPerKey),
			ratio,
			fmt.Sprintf("%s (%d)", pct(sp.FPR), sp.Hits),
			pct(filters.IdealBloomFPR(float64(bb)))})
	}
	w.WriteString("By budget B (FPR (hits) bits/key):\n\n")
	w.Table([]string{"B", "cuckoo FilterPolicy(B)", "pebble bloom(B)", "FPR ratio cuckoo/bloom", "standard bloom", "ideal bloom"}, rows)
}

func writeFPRLayouts(w *markdown.Doc, f *fprResult) {
	var rows [][]string
	for _, series := range []string{seriesCuckooPlain, seriesCuckooSemi, seriesFuse8, seriesFuse16} {
		for _, p := range f.Points {
			if p.Series == series {
				rows = append(rows, []string{series, p.Param, f2(p.BitsPerKey), pct(p.FPR), fmt.Sprint(p.Hits),
					f2(p.BitsPerKey / math.Log2(1/math.Max(p.FPR, 0.5/float64(p.Queries)))), p.Info})
			}
		}
	}
	w.WriteString("Explicit layouts and binary fuse filters (space/bound: bits per key over log2(1/eps); with 0 hits eps is taken as half a hit):\n\n")
	w.Table([]string{"filter", "param", "bits/key", "FPR", "hits", "space/bound", "inspect"}, rows)
}

func writeFPRHeadline(w *markdown.Doc, f *fprResult) {
	w.WriteString("The paper's headline rows beside ours (paper: 12-bit fingerprints at 12.53 bits/item and 0.19%; " +
		"semi-sorted at 12.57 bits/item and 0.09%; a standard bloom filter at 13 bits/item and 0.20%, set beside the standard bloom row, " +
		"not beside Pebble's, whose blocked layout and 32-bit hash cost it more at 13 bits):\n\n")
	var rows [][]string
	paper := map[string]string{seriesCuckooPlain: "12.53 b/i, 0.19%", seriesCuckooSemi: "12.57 b/i, 0.09%",
		seriesStdBloom: "13 b/i, 0.20%"}
	for _, p := range f.Headline {
		rows = append(rows, []string{p.Series, p.Param, f2(p.BitsPerKey), pct(p.FPR), fmt.Sprint(p.Hits), paper[p.Series], p.Info})
	}
	w.Table([]string{"filter", "config", "bits/key", "FPR", "hits", "paper", "inspect"}, rows)
}

func writeFPRSizes(w *markdown.Doc, f *fprResult) {
	if len(f.BySize) == 0 {
		return
	}
	fmt.Fprintf(w, "By filter size, at B=%d over %d non-member queries each. Pebble's bloom picks a cache line and "+
		"the bit positions in it from one 32-bit hash: the more lines a filter has, the fewer hash bits are "+
		"left to choose the positions, and its rate rises with the number of keys in the filter (one filter covers one sstable). "+
		"Cuckoo filters hash to 64 bits:\n\n", f.SizeBits, f.SizeQueries)
	var rows [][]string
	for _, pair := range f.sizePairs() {
		cp, bp := pair[0], pair[1]
		rows = append(rows, []string{fmt.Sprint(cp.X),
			fmt.Sprintf("%s (%d) %.2f b/k", pct(cp.FPR), cp.Hits, cp.BitsPerKey),
			fmt.Sprintf("%s (%d) %.2f b/k", pct(bp.FPR), bp.Hits, bp.BitsPerKey),
			fmt.Sprintf("%.3f", ratioHits(cp, bp))})
	}
	w.Table([]string{"keys", fmt.Sprintf("cuckoo FilterPolicy(%d)", f.SizeBits), fmt.Sprintf("pebble bloom(%d)", f.SizeBits), "FPR ratio cuckoo/bloom"}, rows)
}

func (r *report) writeFPRShapes(w *markdown.Doc) {
	f := r.FPR
	pairs := f.shapePairs()
	if len(pairs) == 0 {
		return
	}
	fmt.Fprintf(w, "By key shape: sequential keys of each form, queried with the next %d keys of the same form "+
		"(the random rows repeat the first table). Pebble's bloom hashes with a 32-bit function whose spread "+
		"depends on the keys, so its rate moves with their form and their number; a cuckoo filter addresses by a "+
		"64-bit xxhash and its rate does not:\n\n", f.ShapeQueries)
	var rows [][]string
	row := func(shape string, cp, bp fprPoint) []string {
		return []string{shape, fmt.Sprint(cp.Keys), fmt.Sprint(cp.X),
			fmt.Sprintf("%s (%d)", pct(cp.FPR), cp.Hits), fmt.Sprintf("%s (%d)", pct(bp.FPR), bp.Hits),
			fmt.Sprintf("%.3f", ratioHits(cp, bp))}
	}
	for _, bb := range r.Config.FPRShapeBits {
		cp, ok1 := f.find(seriesCuckoo, bb)
		bp, ok2 := f.find(seriesPebbleBloom, bb)
		if ok1 && ok2 {
			rows = append(rows, row("random bytes", cp, bp))
		}
	}
	for _, pair := range pairs {
		rows = append(rows, row("`"+pair[0].Param+"`", pair[0], pair[1]))
	}
	w.Table([]string{"keys", "members", "B", "cuckoo FilterPolicy(B)", "pebble bloom(B)", "FPR ratio cuckoo/bloom"}, rows)
}

func plotFPR(w *markdown.Doc, f *fprResult) {
	var cs []plot.Curve
	series := []string{seriesCuckoo, seriesCuckooPlain, seriesCuckooSemi, seriesPebbleBloom, seriesStdBloom, seriesIdealBloom, seriesFuse8, seriesFuse16, seriesBound}
	for _, s := range series {
		var xy plotter.XYs
		for _, p := range f.Points {
			if p.Series == s {
				xy = append(xy, plotter.XY{X: p.BitsPerKey, Y: 100 * p.FPR})
			}
		}
		sort.Slice(xy, func(i, j int) bool { return xy[i].X < xy[j].X })
		cs = append(cs, plot.Curve{Name: s, XY: xy, Points: s == seriesFuse8 || s == seriesFuse16,
			Dashed: s == seriesBound || s == seriesIdealBloom, Gray: s == seriesBound})
	}
	w.Plot("fpr.png", plot.Figure{Title: "False-positive rate vs bits per key", XLabel: "bits per key (measured)", YLabel: "FPR (%)",
		LogY: true, Legend: plot.BottomLeft, XStep: 2}, cs)
}
