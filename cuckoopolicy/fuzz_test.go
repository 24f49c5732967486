package cuckoopolicy

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// addGoldenSeeds seeds a fuzz target with the golden blocks of every format
// version and corrupted copies of them.
func addGoldenSeeds(f *testing.F, add func(block []byte)) {
	var paths []string
	for _, dir := range []string{".", "v2", "v1"} {
		p, _ := filepath.Glob(filepath.Join("testdata", "golden", dir, "*.block"))
		paths = append(paths, p...)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		add(b)
		if len(b) > 1 {
			add(b[1:])
			add(b[:len(b)-1])
			c := append([]byte(nil), b...)
			c[len(c)-5] ^= 0x10 // the long trailer's width byte
			add(c)
			c = append([]byte(nil), b...)
			c[len(c)-4] ^= 0x10 // the short trailer's width byte
			add(c)
		}
	}
	add(nil)
	add([]byte("CKOO"))
	// A live plan's blocks without buckets: unfiltered, and bloom.
	for _, p := range []pebble.FilterPolicy{unfilteredPolicy{}, bloomBlocks(2), bloomBlocks(9)} {
		w := p.NewWriter(pebble.TableFilter)
		for i := range 100 {
			w.AddKey(fmt.Appendf(nil, "key-%08d", i))
		}
		b := w.Finish(nil)
		add(b)
		if len(b) > trailerLen+5 {
			c := append([]byte(nil), b...)
			c[len(c)-trailerLen-5] += 30 // the bloom table's probe count
			add(c)
		}
	}
}

// FuzzMayContain: any bytes, any key. MayContain never panics, answers true
// on a block Inspect rejects, and on a block it accepts answers as the
// format FORMAT.md describes says (specMayContain, an independent bit-level
// reader), except where the doc leaves the answer unspecified: a semi-sorted
// bucket with a code the format never writes.
func FuzzMayContain(f *testing.F) {
	addGoldenSeeds(f, func(b []byte) { f.Add(b, []byte("key-00000000")) })
	p := FilterPolicy(10)
	f.Fuzz(func(t *testing.T, block, key []byte) {
		got := p.MayContain(pebble.TableFilter, block, key)
		if _, err := Inspect(block); err != nil {
			if !got {
				t.Fatalf("invalid block (%v) answered absent", err)
			}
			return
		}
		if want, ok := specMayContain(block, key); ok && got != want {
			t.Fatalf("MayContain %v, the format says %v", got, want)
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
		if info == (Info{RawBloom: true}) {
			return // a raw bloom block: no trailer, no parameters of its own
		}
		noTable := info.Unfiltered || info.BloomBlock
		if info.FingerprintBits < 4 || info.FingerprintBits > 32 || info.Buckets < 0 || info.Keys < 0 ||
			(info.Buckets == 0 && info.Keys != 0 && !noTable) || (noTable && (info.Buckets != 0 || info.Keys == 0 && info.BloomBlock)) ||
			info.Unfiltered && info.BloomBlock || info.LoadFactor < 0 || info.LoadFactor > 1 {
			t.Fatalf("inconsistent %+v", info)
		}
	})
}

// FuzzWriter: any keys, duplicates in any order, any budget. The writer's
// block is valid, holds at most as many entries as there are distinct keys,
// and answers "may contain" for every key it was given.
func FuzzWriter(f *testing.F) {
	f.Add([]byte("\x03abcabcabcdefdefghi"), uint8(10), uint8(0))
	f.Add([]byte("\x00aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), uint8(4), uint8(3))
	f.Add([]byte("\x07key-0001key-0002key-0003key-0001"), uint8(32), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, budget, repeat uint8) {
		if len(data) == 0 {
			return
		}
		// data[0] sets the key length (1 to 8 bytes, 0 for empty keys);
		// the rest is cut into keys of that length, the last one shorter.
		// repeat adds that many more passes over the keys, rotated, so that
		// copies of a key come out of order.
		n, rest := int(data[0]%9), data[1:]
		var keys [][]byte
		if n == 0 {
			for range len(rest) + 1 {
				keys = append(keys, []byte{})
			}
		} else {
			for len(rest) > 0 {
				k := min(n, len(rest))
				keys = append(keys, rest[:k])
				rest = rest[k:]
			}
		}
		distinct := map[string]bool{}
		for _, k := range keys {
			distinct[string(k)] = true
		}
		p := FilterPolicy(int(budget))
		w := p.NewWriter(pebble.TableFilter)
		for r := range int(repeat%4) + 1 {
			for i := range keys {
				w.AddKey(keys[(i+r*7)%len(keys)])
			}
		}
		block := w.Finish(nil)
		info, err := Inspect(block)
		if err != nil {
			t.Fatalf("%d keys: the writer's block does not inspect: %v", len(keys), err)
		}
		if info.Keys > len(distinct) {
			t.Fatalf("%d distinct keys, %d entries", len(distinct), info.Keys)
		}
		for _, k := range keys {
			if !p.MayContain(pebble.TableFilter, block, k) {
				t.Fatalf("false negative for %q (%d keys, budget %d)", k, len(keys), budget)
			}
		}
	})
}
