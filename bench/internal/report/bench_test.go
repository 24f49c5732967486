package report

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	pbloom "github.com/cockroachdb/pebble/v2/bloom"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/filters"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/keys"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// Benchmarks compare the cuckoo policy with Pebble's bloom filter on the same
// keys in the same run; read them with benchstat, policies as columns:
//
//	go test ./bench/report -run '^$' -bench 'MayContain|Build' -count 10 > new.txt
//	benchstat -col /policy new.txt

func nName(n int) string {
	e := int(math.Round(math.Log10(float64(n))))
	if int(math.Pow10(e)) == n {
		return fmt.Sprintf("1e%d", e)
	}
	if n > 0 && n&(n-1) == 0 {
		return fmt.Sprintf("2^%d", bits.TrailingZeros(uint(n)))
	}
	return fmt.Sprint(n)
}

type benchPolicy struct {
	name string
	pol  func(bits int) pebble.FilterPolicy
}

var benchPolicies = []benchPolicy{
	{"cuckoo", func(b int) pebble.FilterPolicy { return cuckoopolicy.FilterPolicy(b) }},
	{"bloom", func(b int) pebble.FilterPolicy { return pbloom.FilterPolicy(b) }},
}

// BenchmarkMayContain times one MayContain per op over a flat buffer of
// queries, p = share of member queries, and reports the block's bits/key and
// the FPR measured on the absent queries.
func BenchmarkMayContain(b *testing.B) {
	// 1e5 keys: a filter in L2; 2^24 (16M) keys: 20-32 MB, far beyond it.
	for _, n := range []int{1e5, 1e6, 1 << 24} {
		// The queries cycle; for the large filter there are enough of them
		// (2^21: a line each for bloom, two for cuckoo, 128 to 256 MB) that
		// the lines they touch do not fit in the last cache level either.
		queries := 1 << 16
		if n > 1e6 {
			queries = 1 << 21
		}
		for _, bits := range []int{10, 16} {
			for _, keyLen := range []int{keys.ShortLen, keys.LongLen} {
				members := keys.Gen{Seed: 101, Width: keyLen}
				absent := keys.Gen{Seed: 102, Width: keyLen}
				neg := absent.Set(0, queries)
				for _, p := range []float64{0, 0.5, 1} {
					q, _ := keys.Mixed(members, n, absent, queries, p, 7)
					for _, bp := range benchPolicies {
						name := fmt.Sprintf("n=%s/bits=%d/keylen=%d/p=%g/policy=%s", nName(n), bits, keyLen, p, bp.name)
						b.Run(name, func(b *testing.B) {
							pol := bp.pol(bits)
							block := filters.BuildPolicy(pol, members.First(n))
							fp := 0
							for i := range neg.Len() {
								if pol.MayContain(pebble.TableFilter, block, neg.At(i)) {
									fp++
								}
							}
							i := 0
							for b.Loop() {
								pol.MayContain(pebble.TableFilter, block, q.At(i&(queries-1)))
								i++
							}
							b.ReportMetric(8*float64(len(block))/float64(n), "bits/key")
							b.ReportMetric(100*float64(fp)/float64(queries), "fpr%")
						})
					}
				}
			}
		}
	}
}

// BenchmarkBuild times a whole filter block (AddKey for every key, Finish)
// per op, and reports ns and bytes allocated per key.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1e4, 1e6} {
		for _, bits := range []int{10, 16} {
			for _, keyLen := range []int{keys.ShortLen, keys.LongLen} {
				ks := keys.Gen{Seed: 103, Width: keyLen}.Set(0, n)
				for _, bp := range benchPolicies {
					name := fmt.Sprintf("n=%s/bits=%d/keylen=%d/policy=%s", nName(n), bits, keyLen, bp.name)
					b.Run(name, func(b *testing.B) { benchBuild(b, bp.pol(bits), ks) })
				}
			}
		}
	}
}

// BenchmarkBuildHighLoad times builds near the load threshold, where keys
// that find both buckets full take most of the time: the paper's
// semi-sorted configuration, Policy{13, semi, 0.975} (12.3 bits a key),
// beside Pebble's bloom(12).
func BenchmarkBuildHighLoad(b *testing.B) {
	const n = 1e6
	ks := keys.Gen{Seed: 103, Width: keys.ShortLen}.Set(0, n)
	for _, bp := range []struct {
		name string
		pol  pebble.FilterPolicy
	}{
		{"cuckoo-f13-semi-0.975", cuckoopolicy.Policy{FingerprintBits: 13, SemiSort: true, LoadFactor: 0.975}},
		{"bloom-12", pbloom.FilterPolicy(12)},
	} {
		b.Run(fmt.Sprintf("n=%s/policy=%s", nName(n), bp.name), func(b *testing.B) { benchBuild(b, bp.pol, ks) })
	}
}

// benchBuild builds a block of keys with pol per op.
func benchBuild(b *testing.B, pol pebble.FilterPolicy, ks *keys.Set) {
	n := ks.Len()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	ops := 0
	var block []byte
	for b.Loop() {
		w := pol.NewWriter(pebble.TableFilter)
		ks.Each(w.AddKey)
		block = w.Finish(block[:0])
		ops++
	}
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(ops*n), "ns/key")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(ops*n), "B/key")
	b.ReportMetric(8*float64(len(block))/float64(n), "bits/key")
}
