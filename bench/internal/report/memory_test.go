package report

import (
	"encoding/binary"
	"math/bits"
	"testing"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/keys"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/cuckoo"
)

// memWords is the size of BenchmarkMemoryLoads's buffer in 8-byte words:
// 128 MB, beyond the last-level cache (see bench/NOTES.md).
const memWords = 1 << 24

var memSink uint64

// memIndex is the word that op i reads first: the top bits of a Fibonacci
// hash, so consecutive ops land far apart, and the hardware prefetchers
// cannot guess the next line.
func memIndex(i uint64) uint64 { return i * 0x9e3779b97f4a7c15 >> (64 - 24) }

// BenchmarkMemoryLoads separates what a filter lookup far beyond the cache
// pays for, without any filter: one op is one "lookup" made of random 8-byte
// loads from a 128 MB buffer. Sub-benchmarks are named
// lookups=independent or lookups=dependent, then loads= one of the cases
// below.
//
//   - independent: op i+1 does not wait for op i, as in MayContain's
//     benchmark loops, so the processor overlaps the misses of several ops
//     and the time per op is a throughput. one is a bloom filter's single
//     line (read once); two-same-16B reads a second word beside the first,
//     in the same line; two-far reads a second line anywhere, as a cuckoo
//     lookup's second bucket; six-same-line reads six words of one line, as
//     Pebble's bloom reads its six probes; one-plus-alu adds to one the
//     arithmetic of a version 1 trailer check (below).
//   - dependent: op i+1's address needs op i's loaded value, so nothing
//     overlaps across ops and the time per op is the latency of one lookup.
//     two-far issues both loads before either returns, as a cuckoo lookup
//     does.
//
// The key cases (below) add what every filter lookup does before its
// loads: read a 16-byte key and hash it. What the cases measured, and what
// follows for a lookup's second line and its hash: see bench/NOTES.md.
func BenchmarkMemoryLoads(b *testing.B) {
	buf := make([]uint64, memWords)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range buf {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		buf[i] = x
	}
	// Each case spells out its own loop: an op passed as a function value
	// would add a call to every op and change what is measured.
	benchIndependentLoads(b, buf)
	benchKeyLoads(b, buf)
	benchDependentLoads(b, buf)
}

const memMask = memWords - 1

// benchIndependentLoads runs the independent cases without keys.
func benchIndependentLoads(b *testing.B, buf []uint64) {
	const mask = memMask
	b.Run("lookups=independent/loads=one", func(b *testing.B) {
		var s, i uint64
		for b.Loop() {
			s += buf[memIndex(i)&mask]
			i++
		}
		memSink = s
	})
	b.Run("lookups=independent/loads=two-same-16B", func(b *testing.B) {
		var s, i uint64
		for b.Loop() {
			w := memIndex(i) & mask
			s += buf[w] ^ buf[w^1]
			i++
		}
		memSink = s
	})
	b.Run("lookups=independent/loads=two-far", func(b *testing.B) {
		var s, i uint64
		for b.Loop() {
			s += buf[memIndex(i)&mask] ^ buf[memIndex(^i)&mask]
			i++
		}
		memSink = s
	})
	b.Run("lookups=independent/loads=six-same-line", func(b *testing.B) {
		var s, i uint64
		for b.Loop() {
			w := memIndex(i) & mask &^ 7
			s += buf[w] ^ buf[w|1] ^ buf[w|2] ^ buf[w|3] ^ buf[w|4] ^ buf[w|5]
			i++
		}
		memSink = s
	})
	// one-plus-alu adds to each op the arithmetic of the trailer check of
	// cuckoopolicy's block format version 1 (version 2 replaced it with a
	// fold of XORs for this reason): four words read from one hot line,
	// folded by shifts, rotations and XORs, and a compare.
	trailer := [4]uint64{1 << 20, 3, 5<<32 | 7, 9}
	b.Run("lookups=independent/loads=one-plus-alu", func(b *testing.B) {
		var s, i uint64
		for b.Loop() {
			m, seed, kc, w := trailer[0], trailer[1], trailer[2], trailer[3]
			x := uint32(m) ^ uint32(m>>32)
			x ^= bits.RotateLeft32(uint32(seed)^uint32(seed>>32), 7)
			x ^= bits.RotateLeft32(uint32(kc), 13) ^ bits.RotateLeft32(uint32(w), 19)
			if uint32(kc>>32) == x^0x5bd1e995 {
				s++
			}
			s += buf[memIndex(i)&mask]
			i++
		}
		memSink = s
	})
}

// benchKeyLoads runs the key cases.
func benchKeyLoads(b *testing.B, buf []uint64) {
	const mask = memMask
	// The key cases read one 16-byte key per op from a flat buffer (a
	// sequential stream the prefetchers follow) and hash it as MayContain
	// does (cuckoo.Hash, XXH64): key-then-one adds the key's words to the
	// sum; hash-then-one adds its hash, off the load's path; one-at-hash
	// and two-far-at-hash load at addresses taken from the hash, so each
	// load waits for the hash's chain of multiplies, as a lookup's do.
	ks := keys.Gen{Seed: 1, Width: keys.ShortLen}.Set(0, 1<<20)
	const keyMask = 1<<20 - 1
	b.Run("lookups=independent/loads=key-then-one", func(b *testing.B) {
		var s, i uint64
		for b.Loop() {
			k := ks.At(int(i & keyMask))
			s += binary.LittleEndian.Uint64(k) ^ binary.LittleEndian.Uint64(k[8:]) + buf[memIndex(i)&mask]
			i++
		}
		memSink = s
	})
	b.Run("lookups=independent/loads=hash-then-one", func(b *testing.B) {
		var s, i uint64
		for b.Loop() {
			s += cuckoo.Hash(ks.At(int(i&keyMask))) + buf[memIndex(i)&mask]
			i++
		}
		memSink = s
	})
	b.Run("lookups=independent/loads=one-at-hash", func(b *testing.B) {
		var s, i uint64
		for b.Loop() {
			h := cuckoo.Hash(ks.At(int(i & keyMask)))
			s += buf[h>>(64-24)]
			i++
		}
		memSink = s
	})
	b.Run("lookups=independent/loads=two-far-at-hash", func(b *testing.B) {
		var s, i uint64
		for b.Loop() {
			h := cuckoo.Hash(ks.At(int(i & keyMask)))
			s += buf[h>>(64-24)] ^ buf[h*0x9e3779b97f4a7c15>>(64-24)]
			i++
		}
		memSink = s
	})
}

// benchDependentLoads runs the dependent cases.
func benchDependentLoads(b *testing.B, buf []uint64) {
	const mask = memMask
	b.Run("lookups=dependent/loads=one", func(b *testing.B) {
		var j, i uint64
		for b.Loop() {
			j = buf[memIndex(i+j)&mask] & 1
			i++
		}
		memSink = j
	})
	b.Run("lookups=dependent/loads=two-far", func(b *testing.B) {
		var j, i uint64
		for b.Loop() {
			j = (buf[memIndex(i+j)&mask] ^ buf[memIndex(^(i+j))&mask]) & 1
			i++
		}
		memSink = j
	})
}
