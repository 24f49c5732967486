// Package cuckoopolicy is a Pebble filter policy that stores a cuckoo filter
// with semi-sorted buckets in every sstable's filter block, in place of
// Pebble's bloom filter. At the same bits per key it admits fewer false
// positives from 9 bits a key up (on 200,000 random keys: 0.72% against
// bloom's 1.16% at 10 bits, 0.18% against 0.67% at 12, 0.011% against 0.36%
// at 16), so point lookups (Get, SeekPrefixGE) read fewer data blocks for
// keys a table does not hold. A table's block takes the bytes
// bloom.FilterPolicy of the same budget would give it, or fewer, on tables
// of any size from 9 bits a key up; on a table of a few dozen keys, where
// bloom's table has fewer false positives in those bytes, it is bloom's.
//
// # Use
//
// FilterPolicy(10) takes the place of bloom.FilterPolicy(10). Apply sets it
// on every level and registers the readers of both bloom and cuckoo blocks:
//
//	opts := &pebble.Options{}
//	cuckoopolicy.Apply(opts, cuckoopolicy.FilterPolicy(10))
//
// Rolling back is Apply with bloom.FilterPolicy(10): tables keep the filters
// they were written with, and options set by Apply read both families.
// FilterUsage shows how far compactions have carried a switch, and
// Mismatches which tables do not yet carry what the options write.
//
// A Plan sets a policy per level. Progressive is a preset for the usual LSM
// shape; FitPlan (and PlanFor) fits one to a database within a ceiling on
// the filter bytes its lookups load, and reports it beside the current
// filters and the best bloom-only plan at the same bytes; a LivePlan, set on
// the options before Open, refits itself as the database grows.
//
// # Traps
//
//   - Pebble reads a table's filter only if Options.Filters holds the name of
//     the policy that wrote it: switch levels with Apply or ApplyPlan, or
//     older tables are read with no filter until compactions rewrite them.
//   - A level whose FilterPolicy is nil copies the level above's (bloom set
//     on L0 to L5 and nil on L6 writes bloom on L6 too); ApplyPlan sets
//     pebble.NoFilterPolicy where a plan has no filter.
//   - db.Get never reads L6 filters, and L6 holds most of a steady LSM's
//     keys; SeekPrefixGE reads them only with UseL6Filters. The same policy
//     on every level saves Gets little: a plan spends the bytes where the
//     lookups read them.
//   - The OPTIONS file names each level's family, not its budget or plan:
//     apply them in code at every open (ParseHooks parses the names).
//   - Below 9 bits per key bloom has fewer false positives; a plan takes the
//     better family per level. Far beyond the CPU cache a lookup reads two
//     cache lines to bloom's one.
//
// MayContain answers "may contain" for anything it cannot vouch for (a
// damaged or unknown block, another filter type), never panics, and is safe
// for concurrent use. Policy configures other layouts (plain buckets, a
// chosen fingerprint width or load).
//
// FORMAT.md, beside this package's source, gives the sizing rule and its
// false-positive rates, how a lookup reads a block, the writer's memory and
// the block format byte by byte; the golden blocks in testdata/golden pin
// it.
package cuckoopolicy
