package bench

import "testing"

// memWords is the size of BenchmarkMemoryLoads's buffer in 8-byte words:
// 128 MB, four times the largest last-level cache of the machines this was
// measured on.
const memWords = 1 << 24

var memSink uint64

// memIndex is the word that op i reads first: the top bits of a Fibonacci
// hash, so consecutive ops land far apart, and the hardware prefetchers
// cannot guess the next line.
func memIndex(i uint64) uint64 { return i * 0x9e3779b97f4a7c15 >> (64 - 24) }

// BenchmarkMemoryLoads separates what a filter lookup far beyond the cache
// pays for, without any filter: one op is one "lookup" made of random 8-byte
// loads from a 128 MB buffer.
//
//   - independent: op i+1 does not wait for op i, as in MayContain's
//     benchmark loops, so the processor overlaps the misses of several ops
//     and the time per op is a throughput. one is a bloom filter's single
//     line (read once); two-same-16B reads a second word beside the first,
//     in the same line; two-far reads a second line anywhere, as a cuckoo
//     lookup's second bucket; six-same-line reads six words of one line, as
//     Pebble's bloom reads its six probes.
//   - dependent: op i+1's address needs op i's loaded value, so nothing
//     overlaps across ops and the time per op is the latency of one lookup.
//     two-far issues both loads before either returns, as a cuckoo lookup
//     does.
//
// On the 2-core development VM (AMD EPYC, family 26; `-count 3`,
// 2026-11-23), independent: one 11.8-12.0 ns, two-same-16B 12.9-13.3,
// two-far 22.1-22.3, six-same-line 22.6-23.1; dependent: one 154-175 ns,
// two-far 155-183. A second line costs a lookup nothing in latency (both
// misses are in flight together) but about 0.85 of a lookup in throughput,
// where the misses the processor can keep waiting at once run out; a second
// word of the same line costs about 0.1.
func BenchmarkMemoryLoads(b *testing.B) {
	buf := make([]uint64, memWords)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range buf {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		buf[i] = x
	}
	const mask = memWords - 1
	b.Run("independent/one", func(b *testing.B) {
		var s, i uint64
		for b.Loop() {
			s += buf[memIndex(i)&mask]
			i++
		}
		memSink = s
	})
	b.Run("independent/two-same-16B", func(b *testing.B) {
		var s, i uint64
		for b.Loop() {
			w := memIndex(i) & mask
			s += buf[w] ^ buf[w^1]
			i++
		}
		memSink = s
	})
	b.Run("independent/two-far", func(b *testing.B) {
		var s, i uint64
		for b.Loop() {
			s += buf[memIndex(i)&mask] ^ buf[memIndex(^i)&mask]
			i++
		}
		memSink = s
	})
	b.Run("independent/six-same-line", func(b *testing.B) {
		var s, i uint64
		for b.Loop() {
			w := memIndex(i) & mask &^ 7
			s += buf[w] ^ buf[w|1] ^ buf[w|2] ^ buf[w|3] ^ buf[w|4] ^ buf[w|5]
			i++
		}
		memSink = s
	})
	b.Run("dependent/one", func(b *testing.B) {
		var j, i uint64
		for b.Loop() {
			j = buf[memIndex(i+j)&mask] & 1
			i++
		}
		memSink = j
	})
	b.Run("dependent/two-far", func(b *testing.B) {
		var j, i uint64
		for b.Loop() {
			j = (buf[memIndex(i+j)&mask] ^ buf[memIndex(^(i+j))&mask]) & 1
			i++
		}
		memSink = j
	})
}
