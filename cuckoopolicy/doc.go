// Package cuckoopolicy is a Pebble filter policy that stores a cuckoo filter
// with semi-sorted buckets in every sstable's filter block, in place of
// Pebble's bloom filter. At the same bits per key it admits fewer false
// positives, so point lookups (Get, SeekPrefixGE) read fewer data blocks for
// keys a table does not hold.
//
// # Use
//
// FilterPolicy(10) takes the place of bloom.FilterPolicy(10). Configure a
// database with Apply, which sets it on every level and registers the
// readers of both bloom and cuckoo blocks:
//
//	opts := &pebble.Options{}
//	cuckoopolicy.Apply(opts, cuckoopolicy.FilterPolicy(10))
//
// In Pebble v2.1.7 no level has a filter unless its options give one, and a
// level whose FilterPolicy is nil copies the level above's: options that set
// bloom on L0 to L5 and leave L6 nil write bloom filters on L6 too. Apply sets
// all seven levels; ApplyPlan sets a policy per level, with
// pebble.NoFilterPolicy where a plan has none.
//
// Pebble reads a table's filter only if Options.Filters holds the name of the
// policy that wrote it; a database whose levels are switched without Apply
// reads its older tables with no filter until compactions rewrite them.
// FilterUsage shows how far compactions have carried a switch, Mismatches
// which tables do not yet carry what the options write, and Usage.ReadBy
// whether given options read each table's filters. Pebble stores
// the policy's name in the OPTIONS file; to parse one, use ParseHooks, then
// Apply or ApplyPlan on the parsed options.
//
// db.Get never reads L6 filters, and L6 holds most of a steady LSM's keys. A
// Plan spends the filter bytes where lookups read them: Progressive is a
// preset for the usual LSM shape; FitPlan (and PlanFor) fits one to a
// database within a ceiling on the filter bytes the lookups load, and
// reports it beside the current filters and the best bloom-only plan at the
// same bytes; a LivePlan, set on the options before Open, refits itself as
// the database grows, with no reopen.
//
// Use Policy for other layouts (plain buckets, a chosen fingerprint width or
// load). Below 9 bits per key a bloom filter has fewer false positives than
// this policy: use it from 9 bits up, or let FitPlan choose.
//
// # The budget rule
//
// A semi-sorted bucket of four f-bit fingerprints takes 4f-4 bits, so at load
// α (the share of slots filled) a key costs (f-1)/α bits, and a lookup, which
// compares against the 8α fingerprints of its two buckets, is a false positive
// with probability 1-(1-1/(2^f-1))^(8α), about 8α/2^f. FilterPolicy(B), B
// clamped to [MinBitsPerKey, MaxBitsPerKey] = [4, 32], gives each table the
// bytes bloom.FilterPolicy(B) would spend on it: B bits a key rounded up to
// an odd number of 64-byte lines, plus 5 bytes, never less than B bits a
// key. In those bytes it takes the width whose table (the most buckets that
// fit, at a load of at most 0.97, the highest the builder reaches at every
// size) has the fewest false positives. On large tables that is f = B, and
// the headroom left below 0.97 lowers the load and with it the
// false-positive rate (the table below); on small ones bloom's rounding
// leaves more bytes, spent on a wider fingerprint or a lower load (a width
// past 16 bits only at a budget past 16 bits a key: tables of 16-bit slots
// build and read faster). So the
// block never takes more bytes than bloom's on the same keys, from 9 bits a
// key up at every size. It has fewer false positives from 14 bits a key up,
// and at 10 to 13 bits a key except on tables of about 110 to 360 keys,
// where bloom's lines leave no slack and the block's fixed 40 bytes
// (padding and trailer, against bloom's 5) cost it up to 2.4 times bloom's
// rate. Below 9 bits a key a small table may fit no width at load 0.97 in
// bloom's bytes; it is sized for that load and takes more. Where placement
// fails at the planned load (rarely, in small tables), the writer takes the
// next narrower width in the same bytes. (When keys merge into shared
// entries, the table of a few hundred keys or fewer is sized again for
// fewer and can end up fuller, up to load 1.)
//
//	B (bits/key)   f    load    FPR (theory)   bloom.FilterPolicy(B)
//	   4           4    0.750   33.9%
//	   8           8    0.875    2.7%
//	  10          10    0.900    0.70%         1.16%
//	  12          12    0.917    0.18%         0.68%
//	  14          14    0.929    0.045%
//	  16          16    0.938    0.011%        0.36%
//	  20          20    0.950    0.0007%
//	  24          24    0.958    0.00005%
//	  32          32    0.969    < 1e-8
//
// The bloom column is measured on random keys: Pebble's
// bloom filter stalls near 0.3% above 16 bits per key because of its 32-bit
// hash, while a cuckoo filter halves its rate with every bit.
//
// # Lookups
//
// MayContain hashes the key once (64-bit xxhash), derives two bucket indexes
// and a fingerprint from a seeded mix of the hash (formulas below), issues both
// bucket loads, then compares four fingerprints at once in each: two cache
// lines (one more for each bucket whose 8-byte load straddles a line boundary),
// no allocation, no locks. The second bucket lies within 16384 buckets after
// the first, so that the builder can keep each entry's other bucket as a 16-bit
// offset and its eviction walks stay local; the window still lets the table
// reach the (2,4) cuckoo load threshold. MayContain is safe for concurrent use
// and never modifies or retains the block.
//
// On anything it cannot vouch for MayContain answers true ("may contain"):
// a block too short, a wrong magic, an unknown version or flag, a nonzero
// reserved byte, a trailer whose check field does not match, a width outside
// [4, 32], a table length that does not match the bucket count, a key count
// above the table's 4m slots, or a filter type other than
// pebble.TableFilter. Answering "absent" for a present key would lose data;
// answering "present" costs one block read.
//
// # Writing
//
// The writer hashes each key as Pebble adds it, skipping consecutive repeats
// (Pebble adds every version of a key), and builds the table in Finish:
// duplicates in any order are placed once; each key goes to the emptier of
// its two buckets, and the keys that find both full are placed by eviction
// walks. When placement fails the builder retries with another seed, on a
// slightly larger table unless only a few keys were left over: a build never
// fails and never drops a key. The same keys in the same order give the same
// bytes.
//
// Temporary memory, pooled across tables, is 8 bytes per key for the hashes
// (in chunks of 8 KiB), a scratch table of 17 bytes per bucket for
// fingerprints of up to 16 bits and 25 beyond, and 12 bytes for each key the
// greedy pass leaves to the walks (room for as many as the table's load
// leaves, at most a thirteenth of the keys, is made at once). With n keys in
// m buckets that is at most about 8 + 17m/n + 12/13 bytes per key up to 16
// bits (about 14 at the loads FilterPolicy builds) and 8 + 25m/n + 12/13
// beyond (about 16; more for a Policy at a low load).
//
// # Block format
//
// A filter block is the packed bucket array, 8 zero bytes of padding (so that
// every bucket is read with one 8-byte load), and a 32-byte trailer. All
// integers are little-endian.
//
//	+-------------------------------+---------+-----------------+
//	| buckets: m * bb bits, packed  | padding | trailer         |
//	| (rounded up to a whole byte)  | 8 bytes | 32 bytes        |
//	+-------------------------------+---------+-----------------+
//
//	trailer
//	offset  size  field
//	     0     8  m, the number of buckets (at most 2^48)
//	     8     8  seed mixed into every hash before addressing
//	    16     4  number of distinct key hashes placed (entries in the table)
//	    20     4  check (below)
//	    24     1  f, fingerprint width in bits, 4 to 32
//	    25     1  flags: bit 0 = semi-sorted buckets, bit 1 = unfiltered, bit 2 = bloom; other bits zero
//	    26     1  reserved, zero
//	    27     1  format version, 2
//	    28     4  magic "CKOO"
//
// The check makes the trailer fold to 0x5bd1e995: XOR the trailer's four
// 8-byte words (offsets 0, 8, 16, 24), then XOR the high and low 32-bit
// halves of the result. A flipped bit anywhere in the trailer flips one bit
// of the fold, so any single flipped bit is detected.
//
// Version 1 differs only in the check, which was, over 32-bit halves and
// rotations rotl32: lo(m)^hi(m) ^ rotl32(lo(seed)^hi(seed), 7) ^
// rotl32(keys, 13) ^ rotl32(bytes 24..27 as a little-endian word, 19) ^
// 0x5bd1e995. Readers accept both versions; the writer writes version 2,
// whose check costs a lookup fewer instructions.
//
// Bucket i starts at bit i*bb of the array (bit k of the array is bit k%8 of
// byte k/8). A plain bucket is four f-bit fingerprints, slot 0 in the lowest
// bits: bb = 4f. A semi-sorted bucket is bb = 4f-4 bits: its four
// fingerprints sorted by their low 4 bits, the sorted nibbles stored as a
// 12-bit code (their rank among the 3876 sorted 4-tuples of nibbles, in
// lexicographic order) in the lowest bits, then the four high parts of f-4
// bits each, in sorted order. Slot 0 holds the smallest nibble, and tuples
// are ranked by slot 0's nibble first, then slot 1's, and so on: code 0 is
// (0, 0, 0, 0), code 1 (0, 0, 0, 1), code 15 (0, 0, 0, 15), code 16
// (0, 0, 1, 1), code 3875 (15, 15, 15, 15). Fingerprints with equal nibbles
// may come in any order (the writer orders them by their high parts; readers
// compare all four). Fingerprint 0 marks an empty slot. Codes 3876 to 4095
// are never written: a bucket that holds one is damaged, like any other
// damage to the bucket array (see below), and what a lookup finds in it is
// unspecified (this package finds no fingerprint there at widths up to 16
// bits).
//
// For a key with 64-bit xxhash h (arithmetic mod 2^64; hi64(a*b) is the high
// word of the 128-bit product):
//
//	x  = (h ^ seed*0x9e3779b97f4a7c15) * 0xff51afd7ed558ccd;  x ^= x >> 32
//	y  = x * 0xc4ceb9fe1a85ec53
//	i1 = hi64(x * m)
//	i2 = hi64(rotl64(y, 32) * m)                              if m <= 16384
//	i2 = (i1 + 1 + (((y mod 2^32) * 16383) >> 32)) mod m      otherwise
//	fp = (((y >> 32) * (2^f - 1)) >> 32) + 1, in [1, 2^f)
//
// The key may be present if bucket i1 or bucket i2 holds fp.
//
// A table with no keys is the trailer alone (m = 0, 0 keys) and answers false
// for every key. Lookups read the key count only to reject a block that
// cannot be (below); a table with buckets and a count of 0 is read like any
// other. A trailer with keys and no buckets marks a table too large
// to filter (2^32-1 distinct keys or more): it holds no filter, so it answers
// true for every key and Inspect reports it as invalid. So does a key count
// above 4m, which no table can hold. An unfiltered block (flag bit 1) is the
// trailer alone with m = 0, f in [4, 32] and the table's key count: it holds
// no filter by design (a LivePlan writes it on a level its plan leaves
// without one), answers true for every key, and Inspect reports it as valid
// with Info.Unfiltered set. Readers that predate the flag answer true for
// it too, as for any unknown flag. A bloom block (flag bit 2 alone) is a
// Pebble bloom filter table, exactly as bloom.FilterPolicy writes it (whole
// 64-byte lines, then a byte of probe count, 1 to 30, and the line count as
// a 4-byte little-endian word, at least 1), followed by the trailer with
// m = 0, f = 4, seed 0 and the table's key count, at least 1: a LivePlan
// writes it on a level its plan gives fewer bits per key than a cuckoo
// filter takes. A key may be present if bloom.FilterPolicy's reader says so
// of the table; a table whose probe or line count is out of range or does
// not match its length answers true for every key. Readers that predate the
// flag answer true for every key.
//
// Example: FilterPolicy(10) over 1000 distinct keys has bloom(10)'s 1349
// bytes: 10,000 bits round up to 21 lines, 1344 bytes, plus 5. Less 40 bytes
// of padding and trailer, 1309 bytes hold 261 semi-sorted buckets of f = 11
// (bb = 40 bits; load 0.958, 0.37% false positives) or 290 of f = 10 (load
// 0.862, 0.67%): f = 11, 261*40/8 = 1305 bytes of buckets, 8 of padding and
// 32 of trailer, 1345 bytes, 10.76 bits per key. The trailer ends
// 0b 01 00 02 43 4b 4f 4f.
//
// The trailer's check field catches any single flipped bit in the trailer,
// which could misdirect every lookup. It is a fold, not a checksum: two
// flipped bits that land on the same bit of the fold (bit k or k+32 of any of
// the four words) cancel, and a seed damaged that way can turn most lookups
// into false negatives. Damage to the bucket array is not detected by the
// block itself either: a flipped bit there can turn the few fingerprints it
// touches into false negatives. Pebble's block checksum, verified when the
// block is read, is what protects the whole block, as it protects bloom
// filters and data blocks.
//
// The golden blocks in testdata/golden pin this format.
package cuckoopolicy
