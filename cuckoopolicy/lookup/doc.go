// Package lookup reads one key of a Pebble database through the filters of
// every level, L6 included, with the contract of db.Get.
//
// Pebble's Get never reads the filter blocks of L6 tables (Pebble keeps them
// out of the block cache on purpose), so on a database whose keys mostly live
// in L6 every Get of an absent key reads an L6 index and data block, whatever
// the filter. Get and Has here ask an iterator with
// pebble.IterOptions.UseL6Filters instead: SeekPrefixGE(key), then an exact
// check of the key it lands on, so an absent key that the L6 filter rules out
// reads no L6 data block. It is for clients that ask many absent keys: a
// datastore's Has before a write, a deduplication check, a cache in front of
// the database.
//
// When it helps: many keys asked are absent and the L6 tables carry filters
// (cuckoopolicy.Apply sets one on every level). When it does not: most keys
// asked are present (an iterator costs more to build and close than Get, and
// a present key's data block is read either way), or L6 has no filter. Get
// stops at the first level that holds the key; the iterator positions every
// level, so a key found above L6 still costs an L6 seek, a data block read
// where L6 has no filter to rule it out (about a tenth more data blocks than
// Get for present keys in the workload benchmark's blockstore and state
// shapes). Adaptive picks Get or this path from the share of absent keys it
// sees.
//
// Traps:
//
//   - The comparer must be the database's: Get and Has use
//     pebble.DefaultComparer, Filtered and Adaptive the Comparer they are
//     given. The exact check uses its Equal; another Equal can report a present
//     key absent (with CockroachDB's comparer, a timestamp written in one of its
//     encodings and asked in another).
//   - A nil key is the empty key, as for db.Get. A key whose prefix is empty
//     (the empty key, with Pebble's default comparer) goes to the reader's Get:
//     Pebble's iterators take an empty prefix for none.
//   - The closer Get returns holds the database's state (an iterator) until it
//     is closed: close it exactly once, and before the database, whose Close
//     otherwise panics.
//   - L6 filter blocks enter the block cache beside data: they are large
//     (about a byte and a quarter a key at ten bits per key), and a workload of
//     present keys pays for them in cache space without the gain. A live plan
//     given the cache's size (plan.Config.BlockCache) keeps every level's
//     filters and the indexes within half of it as the database grows, and
//     writes no L6 filter where L6's would not fit (its Status says so).
package lookup
