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
// A build puts each key in the emptier of its two buckets. In a scratch
// table too large for a core's L2 cache (from 512 KiB) it places keys 64 at
// a time, after asking the cache for both buckets of each (prefetch_amd64.s,
// prefetch_arm64.s; on other targets, or with the purego build tag, it
// touches them with loads); in a smaller one, where that bookkeeping costs
// as much as the misses it hides, one key after another. The keys that find
// both buckets full then walk, evicting, eight walks side by side, each led
// by per-bucket labels away from crowded buckets (local search allocation).
// Every path places the same entries in the same slots. A lookup reads
// exactly the two buckets, both loads issued before either is compared, in
// code generated for each fingerprint width up to 16 bits (gen_lookup.go), so
// that every shift and mask is a constant.
//
// Lookup is safe for concurrent use; Builder and HashList are not.
package static
