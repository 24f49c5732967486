package plan

import (
	"math"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/family"
)

// group is count tables of about keys distinct keys each.
type group struct {
	keys  uint64
	count int
}

// shape is what a plan needs to know of an LSM, per level: the keys its
// filters hold, its tables, and how many of them an absent lookup probes.
type shape struct {
	keys   [7]uint64 // distinct keys (prefixes) the level's filters hold
	tables [7]int
	probes [7]float64 // tables an absent lookup probes, on average
	// sizes, where not nil, are the level's tables by their distinct keys;
	// nil means tables of equal size.
	sizes [7][]group
	// projected marks an empty level planned for the keys it will hold.
	projected [7]bool
	// size is the bytes of the tables read; filterBytes their filter
	// blocks' bytes, per level.
	size        uint64
	filterBytes [7]uint64
	// index is the bytes of the tables' index blocks, each backing file
	// once.
	index uint64
	// fill is each level's size over Pebble's target for it
	// (LevelMetrics.FillFactor), 0 where unknown.
	fill [7]float64
}

// groups returns the level's tables by size.
func (s *shape) groups(l int) []group {
	if s.sizes[l] != nil {
		return s.sizes[l]
	}
	t := uint64(s.tables[l])
	if t == 0 || s.keys[l] == 0 {
		return nil
	}
	per, rem := s.keys[l]/t, s.keys[l]%t
	var g []group
	if per > 0 && t > rem {
		g = append(g, group{per, int(t - rem)})
	}
	if rem > 0 {
		g = append(g, group{per + 1, int(rem)})
	}
	return g
}

// levelCost is policy p on level l: its filter bytes and the expected false
// positives an absent lookup meets there. A table is probed in proportion to
// its keys.
func (s *shape) levelCost(l int, p pebble.FilterPolicy) (bytes, fp float64) {
	var w, n float64
	for _, g := range s.groups(l) {
		b, r := cost(p, g.keys)
		bytes += float64(g.count) * b
		w += float64(g.count) * float64(g.keys) * r
		n += float64(g.count) * float64(g.keys)
	}
	if n == 0 {
		return bytes, 0
	}
	return bytes, s.probes[l] * w / n
}

// cost is p's filter bytes and false-positive rate on a table of n
// distinct keys: a live level's are those of its policy of the moment.
func cost(p pebble.FilterPolicy, n uint64) (bytes, rate float64) {
	if l, ok := p.(*liveLevel); ok {
		p = l.current()
	}
	return family.TableCost(p, n)
}

// active reports whether the plan spends bytes on level l: it holds keys
// (or will) and the lookups probe it.
func (s *shape) active(l int) bool { return s.probes[l] > 0 && s.keys[l] > 0 }

// model says which plans a solve may choose.
type model struct {
	maxBits int     // the highest budget a level takes
	minGain float64 // the fewest expected reads a step must save per byte
	bloom   bool    // bloom.FilterPolicy candidates
	cuckoo  bool    // cuckoopolicy.FilterPolicy and cuckoopolicy.Policy candidates
	// live: a live plan's levels write this package's blocks only: bloom
	// candidates are bloom blocks (Pebble's bloom table in this package's
	// trailer), and a level without a filter writes unfiltered blocks (the
	// trailer alone).
	live bool
}

// step is one choice for a level: a policy, its bytes and the expected false
// positives it leaves there.
type step struct {
	policy pebble.FilterPolicy
	bytes  float64
	fp     float64
}

// candidates returns every whole-budget choice the model allows on level l.
func (s *shape) candidates(l int, m model) []step {
	var pts []step
	add := func(p pebble.FilterPolicy) {
		b, fp := s.levelCost(l, p)
		pts = append(pts, step{p, b, fp})
	}
	if m.live {
		add(family.Unfiltered)
	} else {
		add(nil)
	}
	// From the highest budget down: budgets whose blocks are the same (a
	// small table takes bloom's bytes, which round many budgets alike)
	// leave the front as the highest of them, the budget the block
	// spends.
	for b := m.maxBits; b >= 1; b-- {
		switch {
		case m.bloom && m.live:
			add(family.BloomBlocks(b))
		case m.bloom:
			add(bloom.FilterPolicy(b))
		}
		if m.cuckoo && b >= cuckoopolicy.MinBitsPerKey {
			add(cuckoopolicy.FilterPolicy(b))
		}
	}
	return pts
}

// front returns the points no other point beats on both bytes and false
// positives, by bytes: each costs more than the one before and leaves fewer
// false positives.
func front(pts []step) []step {
	pts = slices.Clone(pts)
	slices.SortStableFunc(pts, func(a, b step) int {
		switch {
		case a.bytes != b.bytes:
			if a.bytes < b.bytes {
				return -1
			}
			return 1
		case a.fp < b.fp:
			return -1
		case a.fp > b.fp:
			return 1
		}
		return 0
	})
	var f []step
	for _, p := range pts {
		if len(f) == 0 || p.fp < f[len(f)-1].fp {
			f = append(f, p)
		}
	}
	return f
}

// hull returns the lower convex hull of a front: from its cheapest point,
// each step buys fewer false positives per byte than the one before.
func hull(f []step) []step {
	var h []step
	for _, p := range f {
		for len(h) >= 2 {
			a, b := h[len(h)-2], h[len(h)-1]
			// b lies on or above the segment from a to p: drop it.
			if (b.fp-a.fp)*(p.bytes-a.bytes) >= (p.fp-a.fp)*(b.bytes-a.bytes) {
				h = h[:len(h)-1]
				continue
			}
			break
		}
		h = append(h, p)
	}
	return h
}

// choice is a solve's answer: a step per level (the zero step for a level
// the plan does not spend on).
type choice [7]step

func (c *choice) totals() (bytes, fp float64) {
	for _, st := range c {
		bytes += st.bytes
		fp += st.fp
	}
	return bytes, fp
}

// objective is what a solve minimises: expected false positives, plus the
// floor's worth of the bytes spent.
func (c *choice) objective(m model) float64 {
	b, fp := c.totals()
	return fp + m.minGain*b
}

// solve returns the choice of least expected false positives within budget
// bytes (and, for each byte, at least m.minGain fewer of them), and whether
// the least choice the model allows fits at all. It runs two searches and
// keeps the better: the greedy over each level's hull (Monkey's rule: each
// byte goes where it saves the most) with a last, fractional step, and an
// exact search over every level's whole-budget choices on a grid of 1/65536
// of the budget, each followed by improve. See Fit for what that
// guarantees.
func (s *shape) solve(budget float64, m model) (choice, bool) {
	var fronts [7][]step
	for l := range fronts {
		if s.active(l) {
			fronts[l] = front(s.candidates(l, m))
		}
	}
	g, fits := s.greedy(fronts, budget, m)
	if !fits {
		return g, false
	}
	g = improve(fronts, g, budget, m)
	if d, ok := exact(fronts, budget, m); ok {
		if d = improve(fronts, d, budget, m); d.objective(m) < g.objective(m) {
			g = d
		}
	}
	return g, true
}

// improve moves c to a better choice within budget while one exists that
// changes one level's point, or two levels' at once, for another of their
// fronts': the grid's rounding can leave the last few cells of the budget,
// and what they buy, unused.
func improve(fronts [7][]step, c choice, budget float64, m model) choice {
	obj := func(st step) float64 { return st.fp + m.minGain*st.bytes }
	for range 32 {
		total, _ := c.totals()
		best, bi, bj := 0.0, -1, -1
		var ba, bb step
		for i, fi := range fronts {
			for _, a := range fi {
				da := obj(a) - obj(c[i])
				if total-c[i].bytes+a.bytes <= budget && da < best {
					best, bi, bj, ba = da, i, -1, a
				}
				for j := i + 1; j < len(fronts); j++ {
					for _, b := range fronts[j] {
						d := da + obj(b) - obj(c[j])
						if d < best && total-c[i].bytes-c[j].bytes+a.bytes+b.bytes <= budget {
							best, bi, bj, ba, bb = d, i, j, a, b
						}
					}
				}
			}
		}
		if bi < 0 || best > -1e-15*max(obj(c[bi]), 1e-300) {
			return c
		}
		c[bi] = ba
		if bj >= 0 {
			c[bj] = bb
		}
	}
	return c
}

// greedy is the Monkey allocation over the hulls of fronts.
func (s *shape) greedy(fronts [7][]step, budget float64, m model) (choice, bool) {
	var c choice
	var hulls [7][]step
	var at [7]int
	left := budget
	for l, f := range fronts {
		if f == nil {
			continue
		}
		hulls[l] = hull(f)
		c[l] = hulls[l][0]
		left -= c[l].bytes
	}
	if left < 0 {
		return c, false
	}
	for {
		best, bestGain := -1, 0.0
		for l, h := range hulls {
			if at[l]+1 >= len(h) {
				continue
			}
			cur, next := h[at[l]], h[at[l]+1]
			if gain := (cur.fp - next.fp) / (next.bytes - cur.bytes); gain > bestGain {
				best, bestGain = l, gain
			}
		}
		if best < 0 || bestGain < m.minGain {
			break
		}
		h := hulls[best]
		cur, next := h[at[best]], h[at[best]+1]
		if cost := next.bytes - cur.bytes; cost <= left {
			left -= cost
			at[best]++
			c[best] = next
			continue
		}
		// The best step does not fit: what is left buys a cuckoo table
		// between the two, where one fits; the level is then settled and
		// the other levels go on with what remains.
		if p, ok := s.partial(best, cur, left, m); ok {
			left -= p.bytes - cur.bytes
			c[best] = p
		}
		hulls[best] = h[:at[best]+1]
	}
	return c, true
}

// partial returns the cuckoo Policy on level l with the fewest expected
// false positives that takes at most cur's bytes and extra more: for each
// fingerprint width, the lowest load (in steps of 0.001, at most family.MaxLoad,
// and no more than m.maxBits bits a key) whose blocks fit.
func (s *shape) partial(l int, cur step, extra float64, m model) (step, bool) {
	if !m.cuckoo || s.keys[l] == 0 {
		return step{}, false
	}
	limit := cur.bytes + extra
	best, ok := cur, false
	cost := func(f, milli int) step {
		p := cuckoopolicy.Policy{FingerprintBits: f, SemiSort: true, LoadFactor: float64(milli) / 1000}
		b, fp := s.levelCost(l, p)
		return step{p, b, fp}
	}
	hi := int(family.MaxLoad * 1000)
	for f := cuckoopolicy.MinBitsPerKey; f <= family.BudgetWidth(m.maxBits, true); f++ {
		lo := int(math.Ceil(1000 * max(cuckoopolicy.MinLoadFactor, float64(f-1)/float64(m.maxBits))))
		if lo > hi || cost(f, hi).bytes > limit {
			continue
		}
		// Bytes fall as the load rises: find the lowest load that fits.
		for lo < hi {
			mid := (lo + hi) / 2
			if cost(f, mid).bytes <= limit {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		if st := cost(f, lo); st.fp < best.fp {
			best, ok = st, true
		}
		hi = int(family.MaxLoad * 1000)
	}
	return best, ok
}

// gridCells is the resolution of exact: the budget (or the largest plan's
// bytes, if less) in cells.
const gridCells = 1 << 16

// exact finds the choice of least objective over every level's front,
// within budget, on a grid of 1/gridCells of the budget: a point's bytes are
// rounded up to whole cells, so the choice never takes more than budget, and
// it is the best of those within the budget less 7 cells. A budget larger by
// more than 7 cells (0.011%) never does worse.
func exact(fronts [7][]step, budget float64, m model) (choice, bool) {
	top := 0.0
	for _, f := range fronts {
		if len(f) > 0 {
			top += f[len(f)-1].bytes
		}
	}
	if top == 0 || !(budget > 0) {
		return choice{}, false
	}
	unit := min(budget, top) / gridCells
	cells := gridCells
	inf := math.Inf(1)
	dp := make([]float64, cells+1)
	next := make([]float64, cells+1)
	var picks [7][]uint8
	for l, f := range fronts {
		if len(f) == 0 {
			continue
		}
		picks[l] = make([]uint8, cells+1)
		pick := picks[l]
		for c := range next {
			next[c] = inf
		}
		for i, st := range f {
			w := cellsOf(st.bytes, unit)
			if w > cells {
				continue
			}
			cost := st.fp + m.minGain*st.bytes
			for c, d := range dp[:cells+1-w] {
				if v := d + cost; v < next[c+w] {
					next[c+w], pick[c+w] = v, uint8(i)
				}
			}
		}
		dp, next = next, dp
	}
	if dp[cells] == inf {
		return choice{}, false
	}
	var ch choice
	c := cells
	for l := len(fronts) - 1; l >= 0; l-- {
		if len(fronts[l]) == 0 {
			continue
		}
		st := fronts[l][picks[l][c]]
		ch[l] = st
		c -= cellsOf(st.bytes, unit)
	}
	return ch, true
}

// cellsOf is bytes in whole cells of unit bytes, rounded up.
func cellsOf(bytes, unit float64) int { return int(math.Ceil(bytes/unit - 1e-9)) }
