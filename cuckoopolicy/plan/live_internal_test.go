package plan

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/dbtest"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// TestSteadyLevels checks that a live fit scales a level above its target
// (fill factor over 1) down to the target, its filter bytes with it, and
// leaves alone L0, the deepest level, projected levels and levels within
// their targets.
func TestSteadyLevels(t *testing.T) {
	s := shape{
		keys:        [7]uint64{5_000, 0, 0, 1_000, 40_000, 90_000, 300_000},
		tables:      [7]int{4, 0, 0, 1, 8, 18, 60},
		probes:      [7]float64{4, 0, 0, 1, 1, 1, 1},
		sizes:       [7][]group{nil, nil, nil, {{1_000, 1}}, {{5_000, 8}}, {{5_000, 18}}, {{5_000, 60}}},
		filterBytes: [7]uint64{6_000, 0, 0, 1_200, 50_000, 100_000, 0},
		fill:        [7]float64{3, 0, 0, 0.5, 4, 1, 2},
		projected:   [7]bool{false, false, true},
	}
	s.keys[2], s.tables[2] = 100, 1
	want := s
	want.keys[4], want.tables[4], want.filterBytes[4], want.sizes[4] = 10_000, 2, 12_500, nil
	s.steadyLevels()
	if s.keys != want.keys || s.tables != want.tables || s.filterBytes != want.filterBytes {
		t.Errorf("steadyLevels: keys %v tables %v filter bytes %v; want %v %v %v",
			s.keys, s.tables, s.filterBytes, want.keys, want.tables, want.filterBytes)
	}
	for l := range s.sizes {
		if (s.sizes[l] == nil) != (want.sizes[l] == nil) {
			t.Errorf("L%d sizes %v, want %v", l, s.sizes[l], want.sizes[l])
		}
	}
}

// TestLiveTarget checks what a refit plans new tables for: the ceiling when
// the tables below L0 carry at most what the plan at the ceiling would give
// them (a refit after a stingy one does not get stingier), the ceiling less
// their excess when they carry more, and never less than the ceiling less
// its payback share.
func TestLiveTarget(t *testing.T) {
	const c = 40_000
	lp := NewLive(Config{MaxFilterBytes: c}, time.Hour)
	m := lp.cfg.model()
	m.live = true
	s := shape{
		keys:   [7]uint64{2_000, 0, 0, 0, 4_000, 30_000, 300_000},
		tables: [7]int{2, 0, 0, 0, 2, 10, 60},
		probes: [7]float64{2, 0, 0, 0, 1, 1, 1},
	}
	s.probes[6] = 0
	ref, _ := s.plan(c, m)
	s.probes[6] = 1
	var refBytes [7]uint64
	for l := 1; l < 6; l++ {
		b, _ := s.levelCost(l, ref[l])
		refBytes[l] = uint64(b)
	}
	for _, tc := range []struct {
		name  string
		extra [7]int64 // bytes over the reference, per level
		want  uint64
	}{
		{"as the reference", [7]int64{}, c},
		{"under the reference", [7]int64{4: -int64(refBytes[4]), 5: -int64(refBytes[5]) / 2}, c},
		{"L0 over, not counted", [7]int64{0: 50_000}, c},
		{"L6 over, not counted without UseL6", [7]int64{6: 50_000}, c},
		{"over by 5,000", [7]int64{4: 2_000, 5: 3_000}, c - 5_000},
		{"over by more than the payback share", [7]int64{5: 30_000}, c * (1 - paybackShare)},
	} {
		s := s
		for l := range s.filterBytes {
			s.filterBytes[l] = uint64(int64(refBytes[l]) + tc.extra[l])
		}
		if got := lp.target(s, m, c); got < tc.want-1 || got > tc.want+1 {
			t.Errorf("%s: target %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestFlushedL0 checks that a live fit plans an empty L0 as the flushes
// that will fill it (two tables of the size L0's tables had), counted in
// the ceiling, rather than copying the level below's policy, and that
// without a size seen L0 stays empty.
func TestFlushedL0(t *testing.T) {
	s := shape{
		keys:   [7]uint64{0, 0, 0, 0, 4_000, 30_000, 300_000},
		tables: [7]int{0, 0, 0, 0, 2, 10, 60},
		probes: [7]float64{0, 0, 0, 0, 1, 1, 1},
	}
	empty := s
	empty.flushedL0(0)
	if empty.keys != s.keys || empty.tables != s.tables || empty.probes != s.probes {
		t.Errorf("no L0 size seen: L0 became %d keys in %d tables", empty.keys[0], empty.tables[0])
	}
	s.flushedL0(3_000)
	if s.keys[0] != 6_000 || s.tables[0] != 2 || s.probes[0] != 2 || !s.projected[0] {
		t.Fatalf("empty L0 planned as %d keys, %d tables, %g probes, projected %v; want 6000, 2, 2, true",
			s.keys[0], s.tables[0], s.probes[0], s.projected[0])
	}
	m := Config{}.withDefaults().model()
	m.live = true
	const c = 40_000
	s.probes[6] = 0
	p, _ := s.plan(c, m)
	if e := s.estimate(p); e.Bytes > c {
		t.Errorf("plan %v: %d bytes, over the ceiling %d with L0 counted", p, e.Bytes, c)
	}
	if b, _ := s.levelCost(0, p[0]); b == 0 || b > c/2 {
		t.Errorf("plan %v gives the flushed L0 %.0f of %d bytes", p, b, c)
	}
}

// TestLiveFitL0 runs a live fit's L0 rules on a real database: eight
// overlapping L0 tables are planned as steadyL0Tables of them (a burst is
// short-lived), and once compactions empty L0, it is planned as two flushes
// of the table size the plan last saw there, never left out or given the
// cap.
func TestLiveFitL0(t *testing.T) {
	const perTable = 1_000
	lp := NewLive(Config{}, time.Hour)
	m := dbtest.New(t)
	m.Open(lp.Apply)
	m.FlushTables(8, perTable)
	r, _, err := lp.fit(m.DB)
	if err != nil {
		t.Fatal(err)
	}
	// Each table holds perTable keys and the two that widen its range; the
	// keys per level come from a sample, within a few percent.
	near := func(got uint64, want float64) bool { return float64(got) >= 0.95*want && float64(got) <= 1.05*want }
	if l0 := r.Levels[0]; l0.Tables != steadyL0Tables || l0.Projected || !near(l0.Keys, steadyL0Tables*perTable) {
		t.Errorf("8 L0 tables planned as %+v; want %d tables of about %d keys", l0, steadyL0Tables, perTable)
	}
	if err := m.DB.Compact(context.Background(), []byte("key"), []byte("key~~"), true); err != nil {
		t.Fatal(err)
	}
	if r, _, err = lp.fit(m.DB); err != nil {
		t.Fatal(err)
	}
	if l0 := r.Levels[0]; l0.Tables != 2 || !l0.Projected || !near(l0.Keys, 2*perTable) || r.Plan[0] == nil {
		t.Errorf("an emptied L0 planned as %+v with %v; want 2 projected tables of about %d keys, filtered", l0, r.Plan[0], perTable)
	}
	if r.Budget == 0 || r.Bytes > r.Budget {
		t.Errorf("plan %v: %d bytes at a budget of %d", r.Plan, r.Bytes, r.Budget)
	}
	m.Close()
}

// TestLiveCurrentEmptyL0: a live fit that plans an empty L0 as flushes
// costs its current filters there as what L0's level writes now, not as no
// filter (which put about two false positives a Get in Status().Current).
func TestLiveCurrentEmptyL0(t *testing.T) {
	lp := NewLive(Config{}, time.Hour)
	m := dbtest.New(t)
	m.Open(lp.Apply)
	m.FlushTables(2, 1_000)
	if _, _, err := lp.fit(m.DB); err != nil { // sees L0's table size
		t.Fatal(err)
	}
	if err := m.DB.Compact(context.Background(), []byte("key"), []byte("key~~"), true); err != nil {
		t.Fatal(err)
	}
	r, _, err := lp.fit(m.DB)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Levels[0].Projected || r.Current.Plan[0] == nil || r.Current.FalsePositives > 0.1 {
		t.Errorf("current filters %v: %.3g false positives per Get with L0 %+v; want L0's level policy, a few hundredths at most",
			r.Current.Plan, r.Current.FalsePositives, r.Levels[0])
	}
	m.Close()
}

// TestPaybackFloor fits live plans on random shapes at a spend below the
// budget, as a refit that pays for older tables does: no level's new
// tables get fewer bytes than the lesser of what the plan at the full
// budget gives the level and what FilterPolicy(B) takes there, B the
// reference's bits per key on it, and the plan stays within the budget.
// Short: 40 shapes; default 150; PEBBLE_CUCKOO_LONG=1: 5,000.
func TestPaybackFloor(t *testing.T) {
	r := rand.New(rand.NewPCG(pebbletest.Seed(t), 5))
	n := pebbletest.Scale(40, 150, 5_000)
	floored := 0
	for i := range n {
		s := randomShape(r)
		ref := randomReference(r)
		cfg := Config{UseL6: s.probes[6] > 0}.withDefaults()
		m := cfg.model()
		m.live = true
		if !cfg.UseL6 {
			s.probes[6] = 0
		}
		budget := cfg.budget(&s, ref)
		spend := uint64(float64(budget) * (1 - paybackShare*r.Float64()))
		if spend == 0 || spend >= budget {
			continue
		}
		rep := s.report(cfg, ref, ref, m, spend)
		if rep.Bytes > budget+1 && !rep.BelowLeast {
			t.Fatalf("shape %d: plan %v takes %d bytes, over the budget of %d", i, rep.Plan, rep.Bytes, budget)
		}
		full := s.report(cfg, ref, ref, m, 0).Plan
		stingy, _ := s.plan(float64(spend), m)
		for l := range rep.Plan {
			if !s.active(l) {
				continue
			}
			floor, _ := s.levelCost(l, full[l])
			if rb, _ := s.levelCost(l, ref[l]); ref[l] != nil && rb > 0 {
				var q Plan
				q[l] = cuckoopolicy.FilterPolicy(min(max(int(math.Round(8*rb/float64(s.keys[l]))), cuckoopolicy.MinBitsPerKey), m.maxBits))
				if sb, _ := s.levelCost(l, liveFamily(q)[l]); sb < floor {
					floor = sb
				}
			}
			got, _ := s.levelCost(l, rep.Plan[l])
			if got < floor-1e-6 && rep.Plan != full {
				t.Fatalf("shape %d: spending %d of %d, L%d's new tables get %v, %.0f bytes, under the floor of %.0f (full plan %v)", i, spend, budget, l, rep.Plan[l], got, floor, full)
			}
			if sb, _ := s.levelCost(l, stingy[l]); sb < floor-1e-6 {
				floored++
			}
		}
	}
	// The shapes must exercise the floor: some plan at the spend alone
	// starves a level.
	if floored == 0 {
		t.Fatalf("no shape of %d had a level the spend alone would starve", n)
	}
	t.Logf("%d levels kept at their floor", floored)
}
