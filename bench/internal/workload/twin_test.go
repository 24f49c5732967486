package workload

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The twin rule on made-up cells whose intervals are known by
// construction: ten repetitions, base at 100 µs, the other policy at lo
// times that in five and hi times it in the other five, so that the paired
// ratios' median is (lo+hi)/2 and their sign-test interval [lo, hi]. Three
// shapes differ only in the A/A twin: wide (twin/bloom(10) in [0.9, 1.2]),
// tight ([1.0, 1.0]) and none (no twin timed).

// twinReps returns ten repetitions of 100 µs scaled by lo and hi in turn.
func twinReps(lo, hi float64) []float64 {
	out := make([]float64, 10)
	for i := range out {
		out[i] = 100e3 * []float64{lo, hi}[i%2]
	}
	return out
}

// twinShapes are the shapes' twin intervals; a nil one is not timed.
var twinShapes = []struct {
	name string
	twin []float64 // {lo, hi}
}{{"wide", []float64{0.9, 1.2}}, {"tight", []float64{1.0, 1.0}}, {"none", nil}}

// twinResult returns a Result where, in every shape, in one cell of regime
// pressure1 and path get-present, policy x takes lo to hi times base's
// time, and bloom(10) and bloom(10)-noL6 take base's; every named policy
// has a database of the same (empty) LSM.
func twinResult(x, base string, lo, hi float64) *Result {
	r := &Result{Config: Config{Threads: []int{1}, Budgets: []int{10}, Reps: 10}, Cells: map[cellKey]map[string]*cellStats{}}
	var dbs []dbRow
	for _, n := range []string{planBase, planBloomNoL6, twinName, x, base} {
		if !slices.ContainsFunc(dbs, func(d dbRow) bool { return d.Cfg.Name == n }) {
			dbs = append(dbs, dbRow{Cfg: policyCfg{Name: n}})
		}
	}
	for _, s := range twinShapes {
		r.Shapes = append(r.Shapes, shapeResult{Spec: shapeSpec{Name: s.name}, DBs: dbs})
		c := map[string]*cellStats{}
		for _, n := range []string{planBase, planBloomNoL6, base} {
			c[n] = &cellStats{Ops: 1000, NsPerOp: twinReps(1, 1)}
		}
		c[x] = &cellStats{Ops: 1000, NsPerOp: twinReps(lo, hi)}
		if s.twin != nil {
			c[twinName] = &cellStats{Ops: 1000, NsPerOp: twinReps(s.twin[0], s.twin[1])}
		}
		r.Cells[cellKey{Shape: s.name, Regime: "pressure1", Path: "get-present", Threads: 1}] = c
	}
	return r
}

// twinSlower is the oracle: the shapes where an interval [lo, hi] is
// slower by the twin rule, above 1.02 and above the twin's interval.
func twinSlower(lo float64) []string {
	var out []string
	for _, s := range twinShapes {
		if lo > 1.02 && (s.twin == nil || lo > s.twin[1]) {
			out = append(out, s.name)
		}
	}
	return out
}

// twinIntervals are the policy's intervals the tests judge: below 1.02,
// inside the wide twin's (with a median or a top above it), above it, and
// above the inverse of the wide twin (1/0.9) but inside the twin itself.
var twinIntervals = [][2]float64{{1.01, 1.01}, {1.00, 1.30}, {1.10, 1.10}, {1.10, 1.30}, {1.15, 1.15}, {1.25, 1.25}, {1.25, 1.40}}

// TestTwinRuleIntervals checks slowerThanTwin against the oracle for every
// interval and twin, and the twin's cell in the time tables: its own
// interval in its own cell.
func TestTwinRuleIntervals(t *testing.T) {
	for _, iv := range twinIntervals {
		r := twinResult("x", planBase, iv[0], iv[1])
		for _, s := range twinShapes {
			k := cellKey{Shape: s.name, Regime: "pressure1", Path: "get-present", Threads: 1}
			st := r.timeRatio(k, "x", planBase)
			if got, want := r.slowerThanTwin(k, st), slices.Contains(twinSlower(iv[0]), s.name); got != want {
				t.Errorf("[%.2f, %.2f] in %s (twin %v): slower %v, want %v", iv[0], iv[1], s.name, s.twin, got, want)
			}
			want := "-"
			if s.twin != nil {
				want = fmt.Sprintf("%.3f [%.2f, %.2f]", (s.twin[0]+s.twin[1])/2, s.twin[0], s.twin[1])
			}
			if got := r.twinCell(k); got != want {
				t.Errorf("%s: twin cell %q, want %q", s.name, got, want)
			}
		}
	}
}

// TestTwinVerdicts checks every time verdict the twin rule judges, and the
// pressure table's "slower" mark: each misses exactly the shapes whose
// cell is slower by the oracle (the twin of that cell, not another's).
func TestTwinVerdicts(t *testing.T) {
	small := func(r *Result) regimeSpec { return r.pressureRegimes()[0] }
	plan1 := cachePlanName("pressure1")
	for _, c := range []struct {
		x, base string
		verdict func(r *Result) verdictRow
	}{
		{cuckooName(10), bloomName(10), func(r *Result) verdictRow { return r.timeVerdicts()[0] }},
		{planProgressive, planBase, (*Result).planSlowerVerdict},
		{planForGet, planBloomOnlyGet, (*Result).bloomOnlyVerdict},
		{planForL6, planBloomNoL6, func(r *Result) verdictRow { return r.l6PlanVerdict(small(r)) }},
		{plan1, planBloomNoL6, func(r *Result) verdictRow {
			for _, s := range twinShapes {
				r.CachePlans = append(r.CachePlans, cachePlan{Shape: s.name, Regime: "pressure1", Cache: r.pressureCache(small(r), s.name), Budget: 1 << 20, Policy: plan1})
			}
			return r.cachePlanVerdict(small(r))
		}},
	} {
		for _, iv := range twinIntervals {
			r := twinResult(c.x, c.base, iv[0], iv[1])
			v := c.verdict(r)
			var missed []string
			for _, s := range twinShapes {
				if slices.ContainsFunc(v.Misses, func(m string) bool { return strings.Contains(m, s.name+"/pressure1/get-present") }) {
					missed = append(missed, s.name)
				}
			}
			want := twinSlower(iv[0])
			if !v.Judged || v.Pass != (len(want) == 0) || !slices.Equal(missed, want) {
				t.Errorf("%s/%s [%.2f, %.2f]: %q judged %v, pass %v, misses %q; want misses in %v",
					c.x, c.base, iv[0], iv[1], v.Target, v.Judged, v.Pass, v.Misses, want)
			}
		}
	}
	for _, iv := range twinIntervals {
		r := twinResult("x", planBase, iv[0], iv[1])
		for _, s := range twinShapes {
			k := cellKey{Shape: s.name, Regime: "pressure1", Path: "get-present", Threads: 1}
			var b strings.Builder
			r.writePressureRow(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }, k, "x", r.Cells[k]["x"])
			if got, want := strings.Contains(b.String(), " slower |"), slices.Contains(twinSlower(iv[0]), s.name); got != want {
				t.Errorf("[%.2f, %.2f] in %s: row %q marked slower %v, want %v", iv[0], iv[1], s.name, b.String(), got, want)
			}
		}
	}
}

// TestTwinVerdict checks the verdict on the twin itself: a miss for each
// cell whose twin/bloom(10) median lies outside [0.98, 1.02], cells without
// a twin not judged, and no verdict where no twin was timed.
func TestTwinVerdict(t *testing.T) {
	r := twinResult("x", planBase, 1, 1) // twin medians: wide 1.05, tight 1.00
	k := func(s string) cellKey { return cellKey{Shape: s, Regime: "pressure1", Path: "get-present", Threads: 1} }
	r.Cells[k("tight")][twinName].NsPerOp = twinReps(0.99, 1.01)
	low := k("low")
	r.Cells[low] = map[string]*cellStats{planBase: {NsPerOp: twinReps(1, 1)}, twinName: {NsPerOp: twinReps(0.95, 0.96)}}
	v := r.twinVerdict()
	var missed []string
	for _, m := range v.Misses {
		missed = append(missed, m[:strings.Index(m, "/")])
	}
	slices.Sort(missed)
	if !v.Judged || v.Pass || !slices.Equal(missed, []string{"low", "wide"}) || !strings.HasPrefix(v.Detail, "3 cells;") {
		t.Errorf("twin verdict: judged %v, pass %v, misses %q, %q; want misses in low and wide, 3 cells judged", v.Judged, v.Pass, v.Misses, v.Detail)
	}
	delete(r.Cells, low)
	delete(r.Cells[k("wide")], twinName)
	if v := r.twinVerdict(); !v.Judged || !v.Pass {
		t.Errorf("twin verdict, twin medians 1.00: judged %v, pass %v, misses %q", v.Judged, v.Pass, v.Misses)
	}
	delete(r.Cells[k("tight")], twinName)
	if v := r.twinVerdict(); v.Judged || v.Pass {
		t.Errorf("twin verdict, no twin timed: judged %v, pass %v (%s)", v.Judged, v.Pass, v.Detail)
	}
}

// TestTwinRuleAcrossCells checks the twin rule across two cells (a lookup path
// timed against db.Get's path): slower only above 1.02 and above the twin's
// interval of each cell where it was timed, whichever cell's twin is wide.
func TestTwinRuleAcrossCells(t *testing.T) {
	k := cellKey{Shape: "s", Regime: "pressure1", Path: "lookup-absent", Threads: 1}
	kb := cellKey{Shape: "s", Regime: "pressure1", Path: "get-absent", Threads: 1}
	for _, a := range twinShapes {
		for _, b := range twinShapes {
			r := &Result{Cells: map[cellKey]map[string]*cellStats{}}
			for _, c := range []struct {
				k    cellKey
				twin []float64
			}{{k, a.twin}, {kb, b.twin}} {
				r.Cells[c.k] = map[string]*cellStats{planBase: {NsPerOp: twinReps(1, 1)}}
				if c.twin != nil {
					r.Cells[c.k][twinName] = &cellStats{NsPerOp: twinReps(c.twin[0], c.twin[1])}
				}
			}
			for _, iv := range twinIntervals {
				st := ratioStat{N: 10, Median: (iv[0] + iv[1]) / 2, Lo: iv[0], Hi: iv[1]}
				want := iv[0] > 1.02 && (a.twin == nil || iv[0] > a.twin[1]) && (b.twin == nil || iv[0] > b.twin[1])
				if got := r.crossSlower(k, kb, st); got != want {
					t.Errorf("[%.2f, %.2f], twins %s (lookup) and %s (Get): slower %v, want %v", iv[0], iv[1], a.name, b.name, got, want)
				}
			}
		}
	}
}
