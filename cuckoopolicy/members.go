package cuckoopolicy

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/family"
)

// The members of the family that package plan's live levels write, which
// this package does not export: a live level's policy object keeps one
// name while its budget changes, so where its plan has bloom or no filter
// it writes them in this package's blocks.
func init() {
	family.BloomBlocks = func(b int) pebble.FilterPolicy { return bloomBlocks(max(b, 1)) }
	family.BloomBits = func(p pebble.FilterPolicy) (int, bool) {
		b, ok := p.(bloomBlocks)
		return int(b), ok
	}
	family.Unfiltered = unfilteredPolicy{}
	family.TableCost = tableCost
	family.BudgetWidth = budgetWidth
	family.LevelPolicies = levelPolicies
	family.Layout = func(p pebble.FilterPolicy) (int, bool, int, float64) {
		var c config
		switch v := p.(type) {
		case FilterPolicy:
			c = v.config()
		case Policy:
			c = v.config()
		}
		return c.f, c.semi, c.bitsPerKey, c.load
	}
}

// unfilteredPolicy writes unfiltered blocks: the trailer alone, "may
// contain" for every key (Pebble writes no filter only for a level whose
// policy is pebble.NoFilterPolicy itself, which a live level cannot become).
type unfilteredPolicy struct{}

func (unfilteredPolicy) Name() string { return PolicyName }

func (unfilteredPolicy) MayContain(ftype pebble.FilterType, filter, key []byte) bool {
	return FilterPolicy(0).MayContain(ftype, filter, key)
}

func (unfilteredPolicy) NewWriter(pebble.FilterType) pebble.FilterWriter {
	return newWriter(config{unfiltered: true})
}

func (unfilteredPolicy) String() string { return "none" }

// bloomBlocks writes bloom blocks: Pebble's bloom filter at int bits per
// key, in this package's trailer, so that a live level, whose policy is of
// this package's family, can take fewer bits per key than a cuckoo filter
// allows.
type bloomBlocks int

func (bloomBlocks) Name() string { return PolicyName }

func (bloomBlocks) MayContain(ftype pebble.FilterType, filter, key []byte) bool {
	return FilterPolicy(0).MayContain(ftype, filter, key)
}

func (b bloomBlocks) NewWriter(pebble.FilterType) pebble.FilterWriter {
	return newWriter(config{bloom: max(int(b), 1)})
}

func (b bloomBlocks) String() string { return fmt.Sprintf("bloom(%d) in cuckoo blocks", int(b)) }
