package cuckoopolicy

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite the golden filter blocks in testdata/golden")

// goldenCases are built from fixed keys; their bytes pin the block format,
// the hashing and the placement. A change to the format or the hashing breaks
// every filter already on disk: it needs a new format version, not -update.
// A change to the placement alone (the same keys in other slots, as when the
// builder's eviction search came in) leaves older blocks readable: keep them
// beside the new ones, as below, then -update.
//
// testdata/golden holds the blocks the writer writes (format version 3, the
// short trailer); testdata/golden/v2 those it wrote before, with the
// padding and the long trailer (version 2) and bloom.FilterPolicy's bytes
// less 40 for them; testdata/golden/budget those it wrote before
// FilterPolicy sized tables to bloom.FilterPolicy's bytes (B bits a key, 40
// bytes of fixed cost);
// testdata/golden/search those of the builder before its walks were led by
// labels (afcae42), testdata/golden/walk those of the builder before its
// breadth-first eviction search (07e9797), and testdata/golden/v1 the
// walk blocks as format version 1 wrote them. Readers accept them all.
var goldenCases = []struct {
	name string
	p    pebble.FilterPolicy
	n    int
}{
	{"empty", FilterPolicy(10), 0},
	{"one-key-b10", FilterPolicy(10), 1},
	{"b10-1000", FilterPolicy(10), 1000},
	{"b16-300", FilterPolicy(16), 300},
	{"b4-100", FilterPolicy(4), 100},
	{"b4-70000", FilterPolicy(4), 70000}, // more than 16384 buckets: the windowed second bucket
	{"plain-f12-500", Policy{FingerprintBits: 12, LoadFactor: 0.95}, 500},
	{"plain-f16-200", Policy{FingerprintBits: 16}, 200},
	{"semi-f13-1000", Policy{FingerprintBits: 13, SemiSort: true, LoadFactor: 0.975}, 1000},
	{"semi-f24-100", Policy{FingerprintBits: 24, SemiSort: true}, 100},
	{"plain-f32-64", Policy{FingerprintBits: 32}, 64},
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			keys := testkit.SequentialKeys(tc.n)
			got := build(tc.p, keys)
			path := filepath.Join("testdata", "golden", tc.name+".block")
			matchGolden(t, path, got)
			// Blocks on disk stay readable: every key of the golden block is found.
			_, info := readGolden(t, path, keys)
			if tc.n > 0 && !isShort(got) {
				t.Fatalf("%d keys: the writer wrote a long trailer", tc.n)
			}

			// The blocks of version 2 read as well, and have a long
			// trailer, except the empty table's, which is written as
			// before.
			v2, v2Info := readGolden(t, filepath.Join("testdata", "golden", "v2", tc.name+".block"), keys)
			if isShort(v2) || blockTrailer(v2).version != formatVersion {
				t.Fatalf("v2 block of version %d", blockTrailer(v2).version)
			}
			if tc.n == 0 && (!bytes.Equal(v2, got) || v2Info != info) {
				t.Fatalf("the empty table's block changed: %x, was %x", got, v2)
			}

			// The blocks of the earlier sizing and builders read as well,
			// and the last builder's before the sizing changed has the
			// parameters of that sizing.
			_, wantInfo := readGolden(t, filepath.Join("testdata", "golden", "budget", tc.name+".block"), keys)
			_, info = readGolden(t, filepath.Join("testdata", "golden", "search", tc.name+".block"), keys)
			if info != wantInfo {
				t.Fatalf("search block: Inspect %+v; the budget block %+v", info, wantInfo)
			}
			walk, info := readGolden(t, filepath.Join("testdata", "golden", "walk", tc.name+".block"), keys)

			// Their version 1 blocks differ only in the check and version
			// bytes, and read the same.
			old, oldInfo := readGolden(t, filepath.Join("testdata", "golden", "v1", tc.name+".block"), keys)
			if len(old) != len(walk) {
				t.Fatalf("v1 block is %d bytes, v2 %d", len(old), len(walk))
			}
			tr := len(old) - trailerLen
			if old[tr+27] != formatV1 || walk[tr+27] != formatVersion {
				t.Fatalf("versions %d and %d, want %d and %d", old[tr+27], walk[tr+27], formatV1, formatVersion)
			}
			for i := range old {
				if (i < tr+20 || i >= tr+24) && i != tr+27 && old[i] != walk[i] {
					t.Fatalf("v1 and v2 blocks differ at offset %d of %d, outside the check and version", i, len(old))
				}
			}
			if oldInfo != info {
				t.Fatalf("v1 block: Inspect %+v, v2 block %+v", oldInfo, info)
			}
			absent := testkit.RandomKeys(testkit.Rand(uint64(tc.n), 0), 2000)
			for i := range absent.Len() {
				if FilterPolicy(10).MayContain(pebble.TableFilter, old, absent.At(i)) !=
					FilterPolicy(10).MayContain(pebble.TableFilter, walk, absent.At(i)) {
					t.Fatalf("v1 and v2 blocks answer differently for %x", absent.At(i))
				}
			}
		})
	}
}

// TestGoldenRawBloom pins the raw bloom block FilterPolicy(10) writes for 40
// keys: Pebble's bloom table of bloom.FilterPolicy(10), byte for byte.
func TestGoldenRawBloom(t *testing.T) {
	keys := testkit.SequentialKeys(40)
	got := build(FilterPolicy(10), keys)
	path := filepath.Join("testdata", "golden", "raw-bloom-b10-40.block")
	matchGolden(t, path, got)
	if b := build(bloom.FilterPolicy(10), keys); !bytes.Equal(got, b) {
		t.Fatalf("raw bloom block differs from bloom.FilterPolicy(10)'s: %s", firstDiff(got, b))
	}
	if _, info := readGolden(t, path, keys); !info.RawBloom || info.Keys != 0 || info.FingerprintBits != 0 {
		t.Fatalf("Inspect: %+v", info)
	}
}

// matchGolden checks got against the golden block at path, which -update
// rewrites first.
func matchGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("block differs from %s: %s", path, firstDiff(got, want))
	}
}

// readGolden reads a golden block, checks that every key is found in it and
// that Inspect reads it, and returns the block and what Inspect says.
func readGolden(t *testing.T, path string, keys *testkit.Keys) ([]byte, Info) {
	t.Helper()
	block, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	requireAll(t, FilterPolicy(10), block, keys)
	info, err := Inspect(block)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return block, info
}

func firstDiff(got, want []byte) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("first difference at offset %d of %d (got %#02x, want %#02x)", i, len(want), got[i], want[i])
		}
	}
	return fmt.Sprintf("lengths differ: got %d bytes, want %d", len(got), len(want))
}
