package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/keys"
)

// BenchmarkDynamicFill fills a dynamic cuckoo filter of capacity n to
// capacity per op (a fresh filter each op, allocation included), ours beside
// the Go libraries at the same fingerprint size. Reports ns/insert.
//
//	go test ./bench/report -run '^$' -bench 'Dynamic' -count 10 > dyn.txt
//	benchstat -col /impl dyn.txt
func BenchmarkDynamicFill(b *testing.B) {
	const n = 1 << 20
	capacity := n * 95 / 100
	ks := keys.Gen{Seed: 201, Width: keys.ShortLen}.Set(0, capacity)
	for _, pk := range peerKinds() {
		b.Run(fmt.Sprintf("n=%s/f=%s/impl=%s", nName(n), pk.fbits, implName(pk.name)), func(b *testing.B) {
			if _, err := pk.new(16); err != nil {
				b.Skip(err)
			}
			failed := 0
			for b.Loop() {
				f, _ := pk.new(capacity)
				ks.Each(func(k []byte) {
					if !f.insert(k) {
						failed++
					}
				})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*capacity), "ns/insert")
			b.ReportMetric(float64(failed)/float64(b.N), "failed/op")
		})
	}
}

// BenchmarkDynamicContains times one lookup per op in a filter filled to
// 95% of 2^20 slots, p = share of member queries.
func BenchmarkDynamicContains(b *testing.B) {
	const n, queries = 1 << 20, 1 << 16
	capacity := n * 95 / 100
	members := keys.Gen{Seed: 202, Width: keys.ShortLen}
	absent := keys.Gen{Seed: 203, Width: keys.ShortLen}
	for _, p := range []float64{0, 1} {
		q, _ := keys.Mixed(members, capacity, absent, queries, p, 9)
		for _, pk := range peerKinds() {
			b.Run(fmt.Sprintf("n=%s/p=%g/f=%s/impl=%s", nName(n), p, pk.fbits, implName(pk.name)), func(b *testing.B) {
				f, err := pk.new(capacity)
				if err != nil {
					b.Skip(err)
				}
				members.First(capacity).Each(func(k []byte) { f.insert(k) })
				i := 0
				for b.Loop() {
					f.contains(q.At(i & (queries - 1)))
					i++
				}
			})
		}
	}
}

// implName shortens a peer's name to a benchmark name element.
func implName(s string) string {
	if strings.HasPrefix(s, "ours") {
		return "ours"
	}
	owner, _, _ := strings.Cut(s, "/")
	return owner
}
