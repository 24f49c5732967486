package cuckoopolicy

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/static"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// TestPlacementFallback checks the writer's answer to a table whose
// placement fails at the width the model chose: the static builder, at that
// width and size, grows the table past bloom.FilterPolicy(B)'s bytes on the
// same keys (the premise, from the builder alone). FilterPolicy(B) must
// still write a cuckoo table in at most bloom's bytes (bloom's own writer is
// the oracle), with no false negatives, at the next narrower width that
// places in those bytes (FORMAT.md): every width between it and the model's
// grows past them too, and its block is the builder's at that width.
//
// Such tables are rare (about one of 5,000 key sets of 65 to 300 keys at 10
// and at 12 bits a key), so the test draws key sets until it finds one for
// each budget; 100,000 draws all miss with odds of about 1e-8.
func TestPlacementFallback(t *testing.T) {
	r := testkit.Rand(testkit.FixedSeed(t, 1), 0)
	var b static.Builder
	for _, bits := range []int{10, 12} {
		c := FilterPolicy(bits).config()
		const tries = 100_000
		found := false
		for try := 0; try < tries && !found; try++ {
			n := 65 + try%236
			keys := testkit.RandomKeys(r, n)
			f := c.width(n)
			bl := len(build(bloom.FilterPolicy(bits), keys))
			if l, _ := buildAt(&b, c, keys, f); l <= bl {
				continue
			}
			found = true
			block := build(FilterPolicy(bits), keys)
			info, err := Inspect(block)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("B=%d, %d keys: placement failed at f=%d; written f=%d, %d buckets, %d bytes (bloom %d)",
				bits, n, f, info.FingerprintBits, info.Buckets, len(block), bl)
			if info.RawBloom || info.FingerprintBits >= f || len(block) > bl {
				t.Fatalf("B=%d, %d keys: %+v, %d bytes; want a cuckoo table narrower than f=%d in bloom's %d bytes",
					bits, n, info, len(block), f, bl)
			}
			requireAll(t, FilterPolicy(bits), block, keys)
			for g := info.FingerprintBits + 1; g < f; g++ {
				if l, _ := buildAt(&b, c, keys, g); l <= bl {
					t.Fatalf("B=%d, %d keys: f=%d places in %d bytes (bloom %d), yet the writer took f=%d",
						bits, n, g, l, bl, info.FingerprintBits)
				}
			}
			if l, p := buildAt(&b, c, keys, info.FingerprintBits); l != len(block) || p.Buckets != uint64(info.Buckets) {
				t.Fatalf("B=%d, %d keys: the builder at f=%d gives %d bytes, %d buckets; the writer %d, %d",
					bits, n, info.FingerprintBits, l, p.Buckets, len(block), info.Buckets)
			}
		}
		if !found {
			t.Fatalf("B=%d: no key set of %d failed placement", bits, tries)
		}
	}
}
