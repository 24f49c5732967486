// Package cuckoo is the cuckoo-filter engine of pebble-cuckoo: one key hash,
// packed tables of four-slot buckets (plain, or semi-sorted to save a bit per
// fingerprint), and two kinds of filter on top of them, after Fan, Andersen,
// Kaminsky and Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom"
// (CoNEXT 2014). It imports no Pebble package; cuckoopolicy adapts it to
// Pebble.
//
// # Static filters, for sstables
//
// Builder places a set of key hashes (collected in a HashList) that is
// complete before the first is placed, and returns the packed table and its
// StaticParams; Static and Lookup answer queries on those bytes in place,
// without copying or allocating. Since no key is added later, each key's two
// buckets are drawn independently from its hash (the second within 16384
// buckets of the first) and the table fills to about 98% before a build
// needs a new seed. A build never fails and never drops a key. It places
// keys 64 at a time, after asking the cache for both buckets of each
// (prefetch_amd64.s, prefetch_arm64.s; on other targets, or with the purego
// build tag, it touches them with loads, which is slower), each in the
// emptier of its two; the keys that find both full then walk, evicting,
// eight walks side by side, each led by per-bucket labels away from
// crowded buckets (local search allocation).
// This is what every sstable filter block holds (see cuckoopolicy for the
// block format).
// A lookup reads exactly the two buckets, both loads issued before either is
// compared, in code generated for each fingerprint width up to 16 bits
// (gen_lookup.go), so that every shift and mask is a constant.
//
// # Dynamic filters, for applications
//
// Filter is a set that changes: Insert, Contains, Delete, and MarshalBinary
// to save it. It uses partial-key cuckoo hashing (the second bucket is
// computed from the first and the fingerprint, so fingerprints move without
// their keys), evictions along a bounded random walk, and a victim stash; a
// failed insert returns ErrFull and changes nothing. New(capacity) sizes the
// table so that capacity distinct inserts succeed (about capacity/0.95 slots
// for fingerprints of 8 bits or more, more with a small Config.MaxKicks);
// past that, inserts keep succeeding until the table is about 97% full. Growing
// chains Filters of growing size and fingerprint width when the number of
// keys is not known in advance, with a false-positive bound that holds
// however far it grows; it saves with MarshalBinary too. Concurrent is a
// Filter behind a lock.
//
// With f-bit fingerprints at load a, the false-positive rate is about
// 8a/2^f and a key costs f/a bits, f-1 semi-sorted (Fan et al., section 5).
// Measured at a = 0.95 (TestFPR): f = 8, 2.9%; f = 12, 0.185%; f = 13
// semi-sorted (the size of f = 12 plain), 0.091%; f = 16, 0.012%.
//
// # Which to use
//
//   - The keys are all known when the filter is made, and it is never
//     changed: Builder and Static. Smaller (a higher load) and faster to
//     query than a Filter, and nothing to delete.
//   - Keys arrive and leave over time, and an upper bound on how many are
//     held at once is known: Filter (or Concurrent, when goroutines share it
//     and some of them write).
//   - No bound is known: Growing, which costs more bits per key as it grows
//     (each stage has wider fingerprints) and a lookup probe per stage.
//
// None of them suits keys that are deleted without having been inserted
// (that removes another key's fingerprint), more than eight copies of one key
// in a Filter, or a need for exact answers.
//
// # Concurrency
//
// Static, Lookup and Hash are safe for concurrent use. Builder and HashList
// are not. Filter and Growing are safe for any number of concurrent readers
// (Contains, Count, LoadFactor, MarshalBinary) while no goroutine mutates
// them; Concurrent is safe for any mix of calls.
//
// # Keys and hashes
//
// Every filter addresses keys by Hash, the 64-bit xxhash of the key, which is
// stable across processes and releases. The ...Hash methods (InsertHash,
// ContainsHash, DeleteHash) take that hash instead of the key, for callers
// that hash once and ask several filters.
package cuckoo
