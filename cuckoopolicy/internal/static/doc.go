// Package static builds and reads static cuckoo filters: tables whose keys
// are all known before the first is placed and that never change, as in an
// sstable's filter block. Package cuckoopolicy wraps them in its block format.
//
// Builder places the hashes a HashList collected and returns the packed
// table (see package cuckoohash for its layout) and its Params; Lookup
// answers queries on those bytes in place, without copying or allocating.
// Since no key is added later, each key's two buckets are drawn independently
// from its hash, the second within 16384 buckets of the first, so that the
// table fills to about 98%, the (2,4) cuckoo threshold. A build never fails
// and never drops a key: when placement fails it retries with the next seed,
// and grows the table when the seeds run out.
//
// A build places keys 64 at a time, after asking the cache for both buckets
// of each (prefetch_amd64.s, prefetch_arm64.s; on other targets, or with the
// purego build tag, it touches them with loads), each in the emptier of its
// two; the keys that find both full then walk, evicting, eight walks side by
// side, each led by per-bucket labels away from crowded buckets (local search
// allocation). A lookup reads exactly the two buckets, both loads issued
// before either is compared, in code generated for each fingerprint width up
// to 16 bits (gen_lookup.go), so that every shift and mask is a constant.
//
// Lookup is safe for concurrent use; Builder and HashList are not.
package static
