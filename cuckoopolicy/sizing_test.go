package cuckoopolicy

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// configOf is the writer configuration of this package's policy p.
func configOf(p pebble.FilterPolicy) config {
	switch v := p.(type) {
	case FilterPolicy:
		return v.config()
	case Policy:
		return v.config()
	}
	panic("configOf: not a cuckoo policy")
}

// TestSizingMatchesWriter checks the one byte model against the writers:
// for tables of 1 key to 65,536, this package's blocks at every budget and
// Pebble's bloom blocks take the bytes blockBytes and bloomBlockBytes say.
func TestSizingMatchesWriter(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 2)
	for _, n := range []int{1, 2, 7, 50, 64, 100, 200, 500, 3_000, 65_536} {
		keys := testkit.RandomKeys(r, n)
		for b := 1; b <= MaxBitsPerKey; b++ {
			if got, want := len(build(bloom.FilterPolicy(b), keys)), bloomBlockBytes(b, uint64(n)); float64(got) != want {
				t.Errorf("bloom(%d), %d keys: %d bytes, the model %.0f", b, n, got, want)
			}
			if b < MinBitsPerKey {
				continue
			}
			for _, p := range []pebble.FilterPolicy{FilterPolicy(b), Policy{FingerprintBits: b, SemiSort: true, LoadFactor: 0.9}} {
				block := build(p, keys)
				c := configOf(p)
				info, err := Inspect(block)
				if err != nil {
					t.Fatal(err)
				}
				if c.rawBloom(uint64(n)) {
					// A raw bloom block: bloom's table itself.
					if want := build(bloom.FilterPolicy(c.bitsPerKey), keys); !info.RawBloom || !bytes.Equal(block, want) {
						t.Errorf("%v, %d keys: %+v, %d bytes; want bloom(%d)'s %d bytes", p, n, info, len(block), c.bitsPerKey, len(want))
					}
					continue
				}
				// The builder grows a table only when placement fails.
				f, m := c.tableBuckets(uint64(n))
				if info.FingerprintBits != f {
					t.Errorf("%v, %d keys: width %d, the model %d", p, n, info.FingerprintBits, f)
				}
				if uint64(info.Buckets) != m {
					t.Logf("%v, %d keys: the builder grew the table to %d buckets from %d", p, n, info.Buckets, m)
					continue
				}
				if got, want := float64(len(block)), c.blockBytes(uint64(n)); got != want {
					t.Errorf("%v, %d keys: %.0f bytes, the model %.0f", p, n, got, want)
				}
			}
		}
	}
}
