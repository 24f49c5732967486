// Package cuckoo implements dynamic cuckoo filters: approximate sets of keys
// with insert, delete and lookup, after Fan, Andersen, Kaminsky and
// Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom" (CoNEXT 2014).
// A lookup never answers false for a key that was inserted and not deleted;
// it answers true for other keys with a small probability, the false-positive
// rate. The package imports no Pebble package. (The static filters that
// Pebble's sstables hold are written and read by package cuckoopolicy.)
//
// # Which to use
//
//   - Keys arrive and leave over time, and an upper bound on how many are
//     held at once is known: Filter, or Concurrent when goroutines share it
//     and some of them write.
//   - No bound is known: Growing, which costs more bits per key as it grows
//     (each stage has wider fingerprints) and one lookup probe per stage.
//
// None of them suits keys that are deleted without having been inserted
// (that removes another key's fingerprint), more than eight copies of one key
// in a Filter, or a need for exact answers.
//
// With f-bit fingerprints at load a (LoadFactor), the false-positive rate is
// 1-(1-1/(2^f-1))^(8a), about 8a/2^f, and a key costs f/a bits, (f-1)/a
// with Config.SemiSort (Fan et al., sections 4 and 5.2).
//
// # Concurrency
//
// Hash is safe for concurrent use. Filter and Growing are safe for any number
// of concurrent readers (Contains, Count, LoadFactor, MarshalBinary) while no
// goroutine mutates them; Concurrent is safe for any mix of calls.
//
// # Keys and hashes
//
// Every filter addresses keys by Hash, the 64-bit xxhash of the key, which is
// stable across processes and releases. The ...Hash methods (InsertHash,
// ContainsHash, DeleteHash) take that hash instead of the key, for callers
// that hash once and ask several filters.
//
// # Encodings
//
// Filter.MarshalBinary writes, all integers little-endian:
//
//	offset  size  field
//	0       4     magic "CKDF"
//	4       1     version (1)
//	5       1     flags: bit 0 semi-sorted, bit 1 table stored raw (else snappy)
//	6       1     fingerprint bits f
//	7       1     stash entries n (at most 4)
//	8       8     eviction walk state (nonzero)
//	16      ...   uvarints: buckets, seed, max kicks, count
//	        ...   n stash entries: uvarint bucket, uvarint fingerprint
//	        ...   table: the packed buckets without padding, a snappy block
//	              (github.com/golang/snappy, block format) or raw
//	end-8   8     xxhash64 of every byte before it
//
// The table packs buckets of four s-bit slots, s = max(f, 4), back to back
// from bit 0 of a little-endian bit stream, slot j of bucket i at bit
// (4i+j)*s; 0 is an empty slot. A semi-sorted bucket is 4f-4 bits: a 12-bit
// code naming the sorted multiset of the four fingerprints' low nibbles (one
// of the C(19,4) = 3876 multisets, numbered in lexicographic order), then the
// four (f-4)-bit high parts in the order of their nibbles, ties by the high
// parts, so that an empty slot comes first.
//
// A zero Filter encodes with buckets, f, seed, max kicks, count and stash all
// zero, flags raw, walk state 1 and an empty table. UnmarshalBinary refuses
// anything else that is inconsistent: an unknown version or flags, a width
// outside the layout's range, an odd, too large or zero bucket count, a table
// whose (decoded) length is not the one the bucket count implies, a snappy
// block that claims more than snappy can expand to, slots that are not f-bit
// fingerprints or semi-sorted buckets that are not as the encoder writes
// them, stash entries out of range or not in canonical form (the lower bucket
// of the pair), and a count other than the number of fingerprints stored.
//
// Growing.MarshalBinary writes, all integers little-endian:
//
//	offset  size  field
//	0       4     magic "CKDG"
//	4       1     version (1)
//	5       1     flags: bit 0 semi-sorted
//	6       2     zero
//	8       8     false-positive bound (NewGrowing's maxFPR), IEEE 754 binary64
//	16      ...   uvarints: the first stage's capacity, max kicks, seed,
//	              stages k, count
//	        ...   k stages, each: one byte (1 if the stage is marked full,
//	              else 0), a uvarint length, the stage's Filter encoding
//	        ...   uvarint e, then e side-table entries in increasing order of
//	              (stage, bucket, fingerprint), each four uvarints: stage,
//	              the lower bucket of the class, fingerprint, copies
//	end-8   8     xxhash64 of every byte before it
//
// A zero Growing encodes with every field zero and no stages.
// UnmarshalBinary refuses anything else that is inconsistent: a bound outside
// (0, 0.5], a capacity below 1 or above what the first stage's buckets
// hold, max kicks outside [1, MaxKicksLimit], more than 62 stages, a stage
// that does not decode, whose seed is not seed+k, whose layout or max kicks
// are not the chain's, or whose buckets and width bound its false-positive
// rate above its share of the bound, maxFPR/2^(k+1); side-table entries out of
// order, out of range, with no copies or for a class the stage does not hold;
// and a count other than the stages' counts plus the side table's copies. A
// stage's bucket count and width need not be the ones the current sizing gives
// stage k, so that encodings stay readable when the sizing changes.
package cuckoo
