package plan

import (
	"math"

	"github.com/cockroachdb/pebble/v2"
)

// fit returns the live model's report on db and the bytes of its tables.
func (lp *Live) fit(db *pebble.DB) (Report, uint64, error) {
	s, cur, err := readShape(db, float64(lp.cfg.LevelMultiplier))
	if err != nil {
		return Report{}, 0, err
	}
	if lp.cfg.Current != nil {
		cur = optionsPlan(lp.cfg.Current)
	}
	if s.tables[0] > 0 {
		lp.l0Keys.Store(max(s.keys[0]/uint64(s.tables[0]), 1))
	} else {
		s.flushedL0(lp.l0Keys.Load())
	}
	s.steadyL0()
	s.steadyLevels()
	m := lp.cfg.model()
	m.live = true
	cfg := lp.cfg
	cfg.MaxFilterBytes = lp.target(s, m)
	r := s.report(cfg, cur, m)
	r.Config = lp.cfg
	return r, s.size, nil
}

// target is the ceiling a refit plans new tables for: the plan's ceiling
// less the excess of the tables below L0 over what the plan at the ceiling
// (the reference) would take on them, at least half the ceiling. Tables keep
// their filters until compactions rewrite them, and in a growing database
// the older ones were written for fewer keys, with more bits: new tables make
// up for them while they last, and tables written with fewer bytes than the
// reference give theirs back. The reference depends on the tables' keys
// alone, never on what earlier refits chose, so a refit that spent less
// cannot make the next spend less still.
func (lp *Live) target(s shape, m model) uint64 {
	c := lp.cfg.MaxFilterBytes
	if !lp.cfg.UseL6 {
		s.probes[6] = 0
	}
	ref, _ := s.plan(float64(c), m)
	var excess float64
	for l := 1; l < 7; l++ {
		if !s.active(l) || s.projected[l] {
			continue
		}
		model, _ := s.levelCost(l, ref[l])
		excess += float64(s.filterBytes[l]) - model
	}
	switch {
	case excess <= 0:
		return c
	case excess >= float64(c/2):
		return c / 2
	}
	return c - uint64(excess)
}

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
