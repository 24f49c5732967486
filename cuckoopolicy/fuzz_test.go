package cuckoopolicy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// addGoldenSeeds seeds a fuzz target with the golden blocks of both format
// versions and corrupted copies of them.
func addGoldenSeeds(f *testing.F, add func(block []byte)) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.block"))
	old, _ := filepath.Glob(filepath.Join("testdata", "golden", "v1", "*.block"))
	for _, p := range append(paths, old...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		add(b)
		if len(b) > 1 {
			add(b[1:])
			add(b[:len(b)-1])
			c := append([]byte(nil), b...)
			c[len(c)-5] ^= 0x10 // the width byte
			add(c)
		}
	}
	add(nil)
	add([]byte("CKOO"))
}

// FuzzMayContain: any bytes, any key. MayContain never panics, and on a
// block that Inspect accepts it answers true for the keys the block was
// built from (checked on the golden seeds by TestGolden; here the property
// is that a valid block and its re-encoding agree).
func FuzzMayContain(f *testing.F) {
	addGoldenSeeds(f, func(b []byte) { f.Add(b, []byte("key-00000000")) })
	p := FilterPolicy(10)
	f.Fuzz(func(t *testing.T, block, key []byte) {
		got := p.MayContain(pebble.TableFilter, block, key)
		info, err := Inspect(block)
		if err != nil {
			if !got {
				t.Fatalf("invalid block (%v) answered absent", err)
			}
			return
		}
		// The empty filter (no buckets) holds nothing. A block with buckets
		// and a key count of 0 is not one the writer writes; its table
		// answers.
		if info.Buckets == 0 && got {
			t.Fatal("empty filter answered present")
		}
		// A valid block behaves the same after a copy: no aliasing, no state.
		if again := p.MayContain(pebble.TableFilter, append([]byte(nil), block...), key); again != got {
			t.Fatal("answer changed on a copy of the block")
		}
	})
}

// FuzzInspect: Inspect never panics, and what it accepts has consistent
// parameters.
func FuzzInspect(f *testing.F) {
	addGoldenSeeds(f, func(b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, block []byte) {
		info, err := Inspect(block)
		if err != nil {
			return
		}
		if info.FingerprintBits < 4 || info.FingerprintBits > 32 || info.Buckets < 0 || info.Keys < 0 ||
			(info.Buckets == 0 && info.Keys != 0) || info.LoadFactor < 0 {
			t.Fatalf("inconsistent %+v", info)
		}
	})
}
