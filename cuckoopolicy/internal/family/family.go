// Package family gives package plan what it needs of package cuckoopolicy's
// writer and byte model without the root package exporting it: the members
// of the filter family a user never configures by hand (bloom blocks and
// unfiltered blocks, which a live plan's levels write so that a level keeps
// one family while its budget changes), the cost of any policy on a table,
// and the budget rule.
//
// Package cuckoopolicy sets every variable in its init. Package plan
// imports cuckoopolicy, so the variables are set before any of its code
// runs; nothing else may import this package.
package family

import "github.com/cockroachdb/pebble/v2"

// MaxLoad is the highest load the budget rule plans a cuckoo table for.
const MaxLoad = 0.97

// Set by package cuckoopolicy.
var (
	// BloomBlocks returns the policy, of cuckoopolicy's family, that
	// writes Pebble's bloom table at bits per key inside cuckoopolicy's
	// trailer. Its String is "bloom(b) in cuckoo blocks".
	BloomBlocks func(bits int) pebble.FilterPolicy
	// BloomBits returns the bits per key of a policy BloomBlocks returned,
	// and whether p is one.
	BloomBits func(p pebble.FilterPolicy) (int, bool)
	// Unfiltered is the policy, of cuckoopolicy's family, that writes
	// unfiltered blocks: the trailer alone, "may contain" for every key.
	Unfiltered pebble.FilterPolicy
	// TableCost returns p's filter block bytes and false-positive rate on a
	// table of n distinct keys, as the writer sizes it. A nil policy,
	// pebble.NoFilterPolicy and families the model does not know cost
	// nothing and pass every key.
	TableCost func(p pebble.FilterPolicy, n uint64) (bytes, rate float64)
	// Layout returns what a FilterPolicy or a Policy writes after its
	// defaults and clamps: the fingerprint width, semi-sorting, and either
	// a budget of bits per key or a load (the other is 0).
	Layout func(p pebble.FilterPolicy) (f int, semi bool, bitsPerKey int, load float64)
	// LevelPolicies returns the policy each level of opts writes: a nil
	// level takes the level above's, as Pebble does; nil for no filter.
	LevelPolicies func(opts *pebble.Options) [7]pebble.FilterPolicy
	// BudgetWidth is the fingerprint width FilterPolicy(bitsPerKey) gives
	// its tables (semi-sorted when semi).
	BudgetWidth func(bitsPerKey int, semi bool) int
)
