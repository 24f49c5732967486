// Package cuckoopolicy is a Pebble filter policy that stores a cuckoo filter
// with semi-sorted buckets in every sstable's filter block, in place of
// Pebble's bloom filter. From 9 bits a key up it admits fewer false
// positives than bloom.FilterPolicy of the same budget, in no more bytes on
// any table, so point lookups (Get, SeekPrefixGE) read fewer data blocks
// for keys a table does not hold. On a table of a few dozen keys, where
// bloom's table has fewer false positives in those bytes, the block is
// bloom's.
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
// A policy per level, fitted to a database and refitted as it grows, is
// package plan's (cuckoopolicy/plan).
//
// # Traps
//
//   - Pebble reads a table's filter only if Options.Filters holds the name of
//     the policy that wrote it: switch with Apply, or older tables are read
//     with no filter until compactions rewrite them.
//   - A level whose FilterPolicy is nil copies the level above's (bloom set
//     on L0 to L5 and nil on L6 writes bloom on L6 too): set
//     pebble.NoFilterPolicy where a level must have none.
//   - db.Get never reads L6 filters, and L6 holds most of a steady LSM's
//     keys; SeekPrefixGE reads them only with IterOptions.UseL6Filters.
//   - The OPTIONS file names each level's family, not its budget: apply the
//     options in code at every open (ParseHooks parses the names).
//   - Below 9 bits per key bloom has fewer false positives. Far beyond the
//     CPU cache a lookup reads two cache lines to bloom's one.
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
