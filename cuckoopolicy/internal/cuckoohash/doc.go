// Package cuckoohash holds what the static filters (package static) and the
// dynamic ones (package cuckoo) share: the key hash and how a hash becomes
// buckets and a fingerprint, and the packed table of four-slot buckets,
// plain or semi-sorted.
//
// # Hashing
//
// Hash is the 64-bit xxhash of a key. Mix folds a seed into it with one
// multiply, so that a rebuild under another seed needs no key; Reduce maps a
// value to [0, m) for any m without division; Fingerprint maps bits of a
// second value (Remix) that no bucket index uses to [1, 2^f).
//
// # Table
//
// A Table is m buckets of four f-bit fingerprints (MinFingerprintBits <= f
// <= MaxFingerprintBits), packed back to back from bit 0 of a little-endian
// bit stream: bucket i starts at bit i*b, with b = 4f for a plain bucket
// (slot j at bit i*b + j*f) and b = 4f-4 for a semi-sorted one.
// Fingerprint 0 marks an empty slot. PadBytes zero bytes follow the last
// bucket, so that every bucket (or, beyond 16 bits, every slot) is read with
// one unaligned 8-byte load.
//
// A semi-sorted bucket (Fan et al., section 5.2) sorts its four fingerprints
// by their low 4 bits. The sorted multiset of four nibbles is one of C(19,4)
// = 3876 values, stored as a 12-bit code (multisets numbered in
// lexicographic order, DecodeTable); the four (f-4)-bit high parts follow in
// the sorted order, ties by the high parts, so that an empty slot comes
// first.
//
// Nothing here is safe for concurrent writes; reads of a Table no goroutine
// writes are.
package cuckoohash
