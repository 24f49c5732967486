package whatif

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// errPlanPrefix begins the errors of choosing a plan.
const errPlanPrefix = "whatif: choosing a filter plan: "

// fit is plan.Fit on db, a fatal error Pebble raises returned
// as an error that names the damaged file.
func fit(db *pebble.DB, cfg plan.Config) (r plan.Report, err error) {
	err = catch(func() (err error) {
		r, err = plan.Fit(db, cfg)
		return err
	})
	if err != nil {
		err = fmt.Errorf(errPlanPrefix+"%w", namePath(err))
	}
	return r, err
}

// planReport is the plan section: the filter plan plan.Fit
// chooses for the database within Memory bytes of the filters the lookups
// load, plan.Fit's report on it (the plan, the current filters, bloom(10) on
// every level and the best bloom-only plan at that ceiling, by its model),
// and three of them measured as the candidates are: each table's filter
// built from its keys, probed with the same absent keys.
type planReport struct {
	Memory uint64 // the ceiling: Config.Memory, or the default (see ceiling)
	// By says, when Memory is the default, where it comes from; "" for
	// Config.Memory.
	By string
	// TableBytes are the current filters' bytes on the levels the lookups
	// load, by the tables' properties.
	TableBytes uint64
	UseL6      bool // the plan is for lookups that read L6 filters (Config.UseL6)
	Plan       plan.Plan
	Fit        plan.Report
	// Projections are the plan's filters ("plan"), bloom(10) on every level
	// ("bloom(10)") and the best bloom-only plan ("bloom-only"), in that
	// order.
	Projections []projection
	// Measured is the current filters measured through Pebble with lookups
	// like the plan's; nil where nothing was measured (no absent probes).
	Measured *measurement
}

// projection is one plan's filters on every level. A level's candidateResult is
// named after its policy ("none" for none), its Bytes scaled from a sample
// as a candidate's are, and its Hits count the checks that read a data
// block: filter positives, and every check of a level without a filter.
type projection struct {
	Name   string
	Plan   plan.Plan
	Levels [numLevels]candidateResult
}

// bloomEverywhere is bloom(10) on every level, the configuration the plan is
// measured against beside the current filters.
func bloomEverywhere() plan.Plan {
	var p plan.Plan
	for l := range p {
		p[l] = bloom.FilterPolicy(10)
	}
	return p
}

// lastLevel is the deepest level whose filters the lookups load: L5 for
// db.Get, L6 for lookups that read L6 filters.
func lastLevel(useL6 bool) int {
	if useL6 {
		return numLevels - 1
	}
	return numLevels - 2
}

// loadedFilterBytes returns the bytes of the filter blocks on levels L0 to
// last, by the tables' properties.
func loadedFilterBytes(levels [][]pebble.SSTableInfo, last int) uint64 {
	var n uint64
	for l, lv := range levels {
		for _, t := range lv {
			if l <= last && t.Properties != nil {
				n += t.Properties.FilterSize
			}
		}
	}
	return n
}

// choosePlan asks plan.Fit for the plan of c.Memory bytes on db (by default,
// see ceiling) and returns the plan section it starts, with a projection of
// the plan, of bloom(10) on every level and of the best bloom-only plan; nil
// when there is nothing to plan for (no keys on the levels the lookups load).
func choosePlan(db *pebble.DB, c Config, levels [][]pebble.SSTableInfo) (*planReport, error) {
	pr := &planReport{Memory: c.Memory, UseL6: c.UseL6, TableBytes: loadedFilterBytes(levels, lastLevel(c.UseL6))}
	if pr.Memory == 0 {
		none, err := fit(db, plan.Config{Fixed: true, UseL6: c.UseL6})
		if err != nil {
			return nil, err
		}
		if pr.Memory, pr.By = ceiling(none, pr.TableBytes, c.UseL6); pr.Memory == 0 {
			return nil, nil
		}
	}
	var err error
	if pr.Fit, err = fit(db, plan.Config{MaxFilterBytes: pr.Memory, Fixed: true, UseL6: c.UseL6}); err != nil {
		return nil, err
	}
	pr.Plan = pr.Fit.Plan
	for _, p := range []struct {
		name string
		plan plan.Plan
	}{{"plan", pr.Plan}, {"bloom(10)", bloomEverywhere()}, {"bloom-only", pr.Fit.BloomOnly.Plan}} {
		pj := projection{Name: p.name, Plan: p.plan}
		for l := range pj.Levels {
			pj.Levels[l].Name = policyName(p.plan[l])
		}
		pr.Projections = append(pr.Projections, pj)
	}
	return pr, nil
}

// ceiling returns the default ceiling of a plan, from plan.Fit's report at a
// ceiling of 0 and the current filters' bytes on the loaded levels by the
// tables' properties, and where it comes from in words: the current filters'
// bytes by plan.Fit's model, the same footing as every figure of the report
// (it counts the levels that are empty now as they will fill); failing that
// (a policy the model does not know), by the tables' properties; failing
// that (no filters), bloom(10) on every level's by the model. It is 0 when
// the levels the lookups load hold no keys.
func ceiling(none plan.Report, tableBytes uint64, useL6 bool) (uint64, string) {
	levels := fmt.Sprintf("L0-L%d", lastLevel(useL6))
	switch {
	case none.Current.Bytes > 0:
		return none.Current.Bytes, fmt.Sprintf("the bytes the current filters take on %s, by plan.Fit's model (their tables'\n"+
			"properties say %s bytes; the model adds the levels empty now as they will fill)", levels, num(tableBytes))
	case tableBytes > 0:
		return tableBytes, fmt.Sprintf("the bytes the current filters take on %s, by their tables' properties\n"+
			"(plan.Fit's model does not know their policy)", levels)
	case none.Bloom10.Bytes > 0:
		return none.Bloom10.Bytes, fmt.Sprintf("the bytes bloom(10) on every level would take on %s, by plan.Fit's\n"+
			"model: the tables have no filters there", levels)
	}
	return 0, ""
}

// policyName is a plan entry in the words of Plan.String.
func policyName(p pebble.FilterPolicy) string {
	var one plan.Plan
	for l := range one {
		one[l] = p
	}
	s := one.String() // "L0-L6 NAME"
	return s[len("L0-L6 "):]
}

// buildProjections builds t's filters of every projection at its level,
// reusing a candidate's block where the policy is the candidate's, and adds
// their bytes, scaled up to all nkeys filter keys, to the projections.
func (a *analysis) buildProjections(pr *planReport, t *table, keys [][]byte, nkeys uint64) {
	if pr == nil {
		return
	}
	scale := float64(nkeys) / float64(len(keys))
	t.proj = make([][]byte, len(pr.Projections))
	for j := range pr.Projections {
		pj := &pr.Projections[j]
		p := pj.Plan[t.level]
		if p == nil || p == pebble.NoFilterPolicy {
			continue
		}
		b := a.candidateBlock(t, p)
		if b == nil {
			w := p.NewWriter(pebble.TableFilter)
			for _, k := range keys {
				w.AddKey(k)
			}
			b = w.Finish(nil)
		}
		t.proj[j] = b
		pj.Levels[t.level].Bytes += float64(len(b)) * scale
	}
}

// candidateBlock returns t's block of the candidate whose policy is p, or
// nil if there is none.
func (a *analysis) candidateBlock(t *table, p pebble.FilterPolicy) []byte {
	for i, cd := range a.cands {
		if cd.policy == p {
			return t.cands[i]
		}
	}
	return nil
}

// checkProjections counts a check of table t by absent key k against each
// projection's filters.
func checkProjections(pr *planReport, t *table, k []byte) {
	if pr == nil {
		return
	}
	for j := range pr.Projections {
		pj := &pr.Projections[j]
		p := pj.Plan[t.level]
		if t.proj[j] == nil || p.MayContain(pebble.TableFilter, t.proj[j], k) {
			pj.Levels[t.level].Hits++
		}
	}
}
