package cuckoopolicy

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/family"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/static"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// docRawBloomMaxKeys is the most keys a raw bloom block is written for, as
// FilterPolicy's doc and FORMAT.md state it ("a table of at most 64 keys").
const docRawBloomMaxKeys = 64

// TestSmallTableBlocks checks the small tables, 0 to 70 keys, at every
// budget from 1 to 16 bits a key, against Pebble's bloom writer:
//   - the cost plan reaches through family.TableCost is, for
//     bloom.FilterPolicy(b), the bytes bloom's writer writes;
//   - FilterPolicy(b) writes the raw bloom block, byte for byte
//     bloom.FilterPolicy(B)'s (B the budget after clamping), exactly where
//     the table has at most 64 keys and the model gives bloom's table fewer
//     false positives than the cuckoo table in its bytes, and a cuckoo
//     table elsewhere, in no more than bloom's bytes from one key and 9
//     bits a key up;
//   - the cost of FilterPolicy(b) is the block's bytes and rate, and its
//     width the block's, unless the builder alone (buildAt) took another
//     size: placement failed at the model's, or keys merged into shared
//     entries and it sized the table again for fewer.
func TestSmallTableBlocks(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	var sb static.Builder
	for n := 0; n <= 70; n++ {
		keys := testkit.RandomKeys(r, n)
		for b := 1; b <= 16; b++ {
			if got, fpr := family.TableCost(bloom.FilterPolicy(b), uint64(n)); got != float64(len(build(bloom.FilterPolicy(b), keys))) {
				t.Errorf("bloom(%d), %d keys: the model %.0f bytes (rate %.4g), the writer %d", b, n, got, fpr, len(build(bloom.FilterPolicy(b), keys)))
			}
			bb := clampBudget(b)
			c := FilterPolicy(b).config()
			block, want := build(FilterPolicy(b), keys), build(bloom.FilterPolicy(bb), keys)
			info, err := Inspect(block)
			if err != nil {
				t.Fatalf("B=%d, %d keys: %v", b, n, err)
			}
			requireAll(t, FilterPolicy(b), block, keys)
			cost, rate := family.TableCost(FilterPolicy(b), uint64(n))
			if n >= 1 && n <= docRawBloomMaxKeys && bloomRate(bb, uint64(n)) < c.cuckooRate(uint64(n)) {
				if !info.RawBloom || !bytes.Equal(block, want) || cost != float64(len(want)) || rate != bloomRate(bb, uint64(n)) {
					t.Errorf("B=%d, %d keys: %d bytes (raw bloom %v), the model %.0f bytes at rate %.4g; want bloom(%d)'s %d bytes at rate %.4g",
						b, n, len(block), info.RawBloom, cost, rate, bb, len(want), bloomRate(bb, uint64(n)))
				}
				continue
			}
			if info.RawBloom || (n >= 1 && bb >= 9 && len(block) > len(want)) || rate != c.cuckooRate(uint64(n)) {
				t.Errorf("B=%d, %d keys: %d bytes (raw bloom %v) at the model's rate %.4g; want a cuckoo table in at most bloom's %d bytes at rate %.4g",
					b, n, len(block), info.RawBloom, rate, len(want), c.cuckooRate(uint64(n)))
				continue
			}
			f, m := c.tableBuckets(uint64(n))
			if _, p := buildAt(&sb, c, keys, f); p.Buckets != m {
				t.Logf("B=%d, %d keys: the builder took %d buckets for %d entries, the model %d", b, n, p.Buckets, p.Keys, m)
				continue
			}
			if cost != float64(len(block)) || (n > 0 && info.FingerprintBits != f) {
				t.Errorf("B=%d, %d keys: %d bytes at f=%d, the model %.0f bytes at f=%d", b, n, len(block), info.FingerprintBits, cost, f)
			}
		}
	}
}
