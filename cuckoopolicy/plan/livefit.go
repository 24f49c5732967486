package plan

import (
	"math"

	"github.com/cockroachdb/pebble/v2"
)

// fit returns the live model's report on db and the bytes of its tables.
func (lp *Live) fit(db *pebble.DB) (Report, uint64, error) {
	s, cur, err := readShape(db)
	if err != nil {
		return Report{}, 0, err
	}
	lp.levelsAtFit.Store(populated(&s))
	if lp.cfg.Current != nil {
		cur = optionsPlan(lp.cfg.Current)
	}
	if s.tables[0] > 0 {
		lp.l0Keys.Store(max(s.keys[0]/uint64(s.tables[0]), 1))
	} else {
		s.flushedL0(lp.l0Keys.Load())
		// The flushes to come are written by L0's level object: what it
		// writes now is L0's current policy, not "no filter".
		cur[0] = lp.levels[0].current()
	}
	s.steadyL0()
	s.steadyLevels()
	m := lp.cfg.model()
	m.live = true
	lp.mu.Lock()
	opts := lp.opts
	lp.mu.Unlock()
	// Not the tables' filters: a live plan's tables carry what it wrote
	// itself, and a reference of its own output would drift with it.
	ref := lp.cfg.reference(opts, Plan{})
	if !lp.cfg.UseL6 || lp.cfg.cacheTight(&s, ref) {
		s.probes[6] = 0
	}
	r := s.report(lp.cfg, cur, ref, m, lp.target(s, m, lp.cfg.budget(&s, ref)))
	return r, s.size, nil
}

// populated is the levels of s holding tables, a bit each.
func populated(s *shape) uint32 {
	var bits uint32
	for l, t := range s.tables {
		if t > 0 {
			bits |= 1 << l
		}
	}
	return bits
}

// target is the budget a refit plans new tables for: the budget c less
// the excess of the tables below L0 over what the plan at the full budget
// would take on them, and at least (1-paybackShare) of c. Tables keep their
// filters until compactions rewrite them, and in a growing database the
// older ones were written for fewer keys, with more bits: new tables make
// up for them while they last, and tables written with fewer bytes than
// the plan give theirs back. The comparison depends on the tables' keys
// alone, never on what earlier refits chose, so a refit that spent less
// cannot make the next spend less still; and the floor spreads a large
// excess over the refits of the compactions to come, so that no level's
// new tables are starved to pay for older ones.
func (lp *Live) target(s shape, m model, c uint64) uint64 {
	if !lp.cfg.UseL6 {
		s.probes[6] = 0
	}
	full, _ := s.plan(float64(c), m)
	var excess float64
	for l := 1; l < 7; l++ {
		if !s.active(l) || s.projected[l] {
			continue
		}
		model, _ := s.levelCost(l, full[l])
		excess += float64(s.filterBytes[l]) - model
	}
	floor := uint64(float64(c) * (1 - paybackShare))
	switch {
	case excess <= 0:
		return c
	case float64(c)-excess <= float64(floor):
		return floor
	}
	return c - uint64(excess)
}

// paybackShare is the most of its budget a fit holds back to pay for the
// excess of older tables.
const paybackShare = 0.15

// growthRefit: bytes written of a growthRefit-th of the database's tables
// since the last fit ask for a refit without waiting for the interval.
const growthRefit = 10

// steadyL0Tables is the L0 a live plan fits to: Pebble's default
// L0CompactionThreshold of tables.
const steadyL0Tables = 4

// steadyL0 scales L0 down to steadyL0Tables tables where it holds more: a
// live plan refits during write bursts, when L0 piles up for a moment, and a
// plan fitted to that moment gives L0's short-lived tables the bytes of the
// levels its compactions are writing to.
func (s *shape) steadyL0() {
	t := s.tables[0]
	if t <= steadyL0Tables {
		return
	}
	f := float64(steadyL0Tables) / float64(t)
	s.keys[0] = uint64(float64(s.keys[0]) * f)
	s.probes[0] *= f
	s.tables[0] = steadyL0Tables
	s.sizes[0] = nil
}

// steadyLevels scales each level between L0 and the deepest down to the
// size Pebble targets for it, where it holds more (its fill factor above 1).
// In a write burst the upper levels hold several times their targets for a
// while, and a plan fitted to that moment would give the tables compactions
// write then, which outlast the burst, a fraction of the bits. A level's
// filter bytes scale with its keys, so that the excess target counts is bits
// per key, not compaction debt.
func (s *shape) steadyLevels() {
	deepest := 0
	for l := 6; l >= 1; l-- {
		if s.tables[l] > 0 && !s.projected[l] {
			deepest = l
			break
		}
	}
	for l := 1; l < deepest; l++ {
		if s.projected[l] || !(s.fill[l] > 1) {
			continue
		}
		f := 1 / s.fill[l]
		s.keys[l] = max(uint64(float64(s.keys[l])*f), 1)
		s.filterBytes[l] = uint64(float64(s.filterBytes[l]) * f)
		s.tables[l] = max(int(math.Round(float64(s.tables[l])*f)), 1)
		s.sizes[l] = nil
	}
}

// flushedL0 plans an empty L0 for the tables the next flushes write: half
// of steadyL0Tables tables of perTable keys, each probed by every lookup. A
// plan has nothing to fit on an empty L0 and would give it the policy of
// the level below, often a small projected one at the cap, and the
// flushes that follow would write L0 at many times the bits it is worth.
// Without a size seen yet (0) L0 stays empty.
func (s *shape) flushedL0(perTable uint64) {
	if perTable == 0 {
		return
	}
	const tables = steadyL0Tables / 2
	s.keys[0], s.tables[0], s.probes[0] = tables*perTable, tables, tables
	s.sizes[0] = nil
	s.projected[0] = true
}
