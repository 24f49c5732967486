package whatif

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// planReport is the filter plan cuckoopolicy.PlanFor chooses for the
// database within Config.Memory bytes of filters, and what it and bloom(10)
// on every level would do, measured as the candidates are: each table's
// filter built from its keys, probed with the same absent keys.
type planReport struct {
	Memory uint64 // the filter bytes the plan may take (Config.Memory)
	UseL6  bool   // the plan is for lookups that read L6 filters (Config.UseL6)
	Plan   cuckoopolicy.Plan
	// Projections are the plan's filters ("plan") and bloom(10) on every
	// level ("bloom(10)"), in that order.
	Projections []projection
}

// projection is one plan's filters on every level. A level's candidateResult is
// named after its policy ("none" for none), its Bytes scaled from a sample
// as a candidate's are, and its Hits count the checks that read a data
// block: filter positives, and every check of a level without a filter.
type projection struct {
	Name   string
	Plan   cuckoopolicy.Plan
	Levels [numLevels]candidateResult
}

// bloomEverywhere is bloom(10) on every level, the configuration the plan is
// measured against beside the current filters.
func bloomEverywhere() cuckoopolicy.Plan {
	var p cuckoopolicy.Plan
	for l := range p {
		p[l] = bloom.FilterPolicy(10)
	}
	return p
}

// choosePlan asks PlanFor for the plan of c.Memory bytes on db and returns
// the plan section it starts, with a projection of that plan and of
// bloom(10) on every level; nil when c.Memory is 0.
func choosePlan(db *pebble.DB, c Config) (*planReport, error) {
	if c.Memory == 0 {
		return nil, nil
	}
	var plan cuckoopolicy.Plan
	err := catch(func() (err error) {
		plan, err = cuckoopolicy.PlanFor(db, c.Memory, c.UseL6)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("whatif: choosing a filter plan: %w", namePath(err))
	}
	pr := &planReport{Memory: c.Memory, UseL6: c.UseL6, Plan: plan}
	for _, p := range []struct {
		name string
		plan cuckoopolicy.Plan
	}{{"plan", plan}, {"bloom(10)", bloomEverywhere()}} {
		pj := projection{Name: p.name, Plan: p.plan}
		for l := range pj.Levels {
			pj.Levels[l].Name = policyName(p.plan[l])
		}
		pr.Projections = append(pr.Projections, pj)
	}
	return pr, nil
}

// policyName is a plan entry in the words of Plan.String.
func policyName(p pebble.FilterPolicy) string {
	var one cuckoopolicy.Plan
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
