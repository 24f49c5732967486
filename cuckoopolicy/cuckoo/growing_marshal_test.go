package cuckoo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"unsafe"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// marshalGrowing is MarshalBinary that fails the test on an error.
func marshalGrowing(t testing.TB, g *Growing) []byte {
	t.Helper()
	data, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// sameGrowing compares two growing filters field by field.
func sameGrowing(a, b *Growing) error {
	switch {
	case a.capacity != b.capacity || a.maxFPR != b.maxFPR || a.cfg != b.cfg || a.count != b.count:
		return fmt.Errorf("parameters %d/%v/%+v/%d vs %d/%v/%+v/%d",
			a.capacity, a.maxFPR, a.cfg, a.count, b.capacity, b.maxFPR, b.cfg, b.count)
	case len(a.stages) != len(b.stages):
		return fmt.Errorf("%d stages vs %d", len(a.stages), len(b.stages))
	case !maps.Equal(a.extra, b.extra):
		return fmt.Errorf("side tables differ: %v vs %v", a.extra, b.extra)
	}
	for k := range a.stages {
		if a.stages[k].full != b.stages[k].full {
			return fmt.Errorf("stage %d: full %v vs %v", k, a.stages[k].full, b.stages[k].full)
		}
		if err := sameFilter(a.stages[k].f, b.stages[k].f); err != nil {
			return fmt.Errorf("stage %d: %v", k, err)
		}
	}
	return nil
}

// fillGrowing grows a chain through several stages with random inserts,
// copies and deletes (growOracle), then adds copies of one key until one
// goes to the side table: a stage holds eight in the key's two buckets and
// up to four more in its stash, so the thirteenth does at the latest. It
// returns the keys held.
func fillGrowing(t *testing.T, maxFPR float64, cfg Config, seed uint64, ops int) (*Growing, map[uint64]int) {
	t.Helper()
	g, err := NewGrowing(16, maxFPR, cfg)
	if err != nil {
		t.Fatal(err)
	}
	held := growOracle(t, g, rand.New(rand.NewPCG(seed, 7)), seed, ops, 0.55)
	buf := make([]byte, 16)
	sideCopies := func() (n int) {
		for _, c := range g.extra {
			n += c
		}
		return n
	}
	for before := sideCopies(); sideCopies() == before; held[1<<62]++ {
		if held[1<<62] == 8+stashSize+1 {
			t.Fatalf("%d copies of one key and none in the side table", held[1<<62])
		}
		if err := g.Insert(testkit.Key(buf, seed, 1<<62)); err != nil {
			t.Fatal(err)
		}
	}
	if g.Stages() < 3 {
		t.Fatalf("want three stages: %d", g.Stages())
	}
	return g, held
}

// TestGrowingMarshalRoundTrip checks that a decoded Growing is the one
// encoded, field for field, holds every key, and goes on exactly as the
// original does: the same operations give the same encodings.
func TestGrowingMarshalRoundTrip(t *testing.T) {
	seed := testkit.Seed(t)
	for i, tc := range []struct {
		maxFPR float64
		cfg    Config
	}{
		{0.5, Config{}}, {0.3, Config{SemiSort: true}}, {0.05, Config{MaxKicks: 20}}, {0.001, Config{}},
	} {
		tc.cfg.Seed = seed + uint64(i)
		g, held := fillGrowing(t, tc.maxFPR, tc.cfg, seed+uint64(i), 3000)
		data := marshalGrowing(t, g)
		var h Growing
		if err := h.UnmarshalBinary(data); err != nil {
			t.Fatalf("maxFPR %v: %v", tc.maxFPR, err)
		}
		if err := sameGrowing(g, &h); err != nil {
			t.Fatalf("maxFPR %v: decoded filter differs from the original: %v", tc.maxFPR, err)
		}
		if again := marshalGrowing(t, &h); !bytes.Equal(again, data) {
			t.Fatalf("maxFPR %v: re-encoding differs", tc.maxFPR)
		}
		buf := make([]byte, 16)
		for k := range held {
			if !h.Contains(testkit.Key(buf, seed+uint64(i), k)) {
				t.Fatalf("maxFPR %v: decoded filter lost key %d", tc.maxFPR, k)
			}
		}
		// Both go on alike: new keys (growing new stages), copies, deletes.
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		for step := range 2000 {
			k := r.Uint64N(uint64(len(held)) + 4000)
			key := testkit.Key(buf, seed+uint64(i), k)
			if held[k] > 0 && r.IntN(2) == 0 {
				if !g.Delete(key) || !h.Delete(key) {
					t.Fatalf("step %d: delete of a held key failed", step)
				}
				held[k]--
				continue
			}
			e1, e2 := g.Insert(key), h.Insert(key)
			if e1 != nil || e2 != nil {
				t.Fatalf("step %d: Insert: %v, %v", step, e1, e2)
			}
			held[k]++
		}
		if !bytes.Equal(marshalGrowing(t, g), marshalGrowing(t, &h)) {
			t.Fatalf("maxFPR %v: after the same operations the encodings differ", tc.maxFPR)
		}
		t.Logf("maxFPR %v: %d stages, %d side-table entries, %d bytes encoded", tc.maxFPR, g.Stages(), len(g.extra), len(data))
	}
}

// goldenGrowing is the Growing of testdata/growing.golden: three stages, a
// side table (ten copies of one key), a delete.
func goldenGrowing() *Growing {
	g, _ := NewGrowing(8, 0.1, Config{Seed: 3})
	for i := range 100 {
		g.Insert([]byte("key-" + strconv.Itoa(i)))
	}
	for range 10 {
		g.Insert([]byte("copied"))
	}
	g.Delete([]byte("key-7"))
	return g
}

// TestGrowingMarshalGolden pins the encoding, and checks that the golden
// file decodes to a filter that holds its keys. Run with -update-filter after
// a deliberate format change (and bump growVersion); a change to how stages
// are sized also changes the bytes, and the old file must still decode.
func TestGrowingMarshalGolden(t *testing.T) {
	g := goldenGrowing()
	if len(g.extra) == 0 || g.Stages() < 3 {
		t.Fatalf("golden Growing has %d side-table entries, %d stages", len(g.extra), g.Stages())
	}
	got := marshalGrowing(t, g)
	path := filepath.Join("testdata", "growing.golden")
	if *updateDyn {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGrowingMarshalGolden -update-filter to create it)", err)
	}
	var h Growing
	if err := h.UnmarshalBinary(want); err != nil {
		t.Fatalf("golden file does not decode: %v", err)
	}
	for i := range 100 {
		if k := "key-" + strconv.Itoa(i); i != 7 && !h.Contains([]byte(k)) {
			t.Errorf("golden file lost %s", k)
		}
	}
	if h.Count() != 109 || !h.Contains([]byte("copied")) {
		t.Errorf("golden file decodes to count %d", h.Count())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("encoding differs from the golden file (got %d bytes, want %d)", len(got), len(want))
	}
}

func TestGrowingMarshalZero(t *testing.T) {
	var z Growing
	data := marshalGrowing(t, &z)
	g, _ := NewGrowing(10, 0.01, Config{})
	g.Insert([]byte("a"))
	if err := g.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if err := sameGrowing(g, &z); err != nil || g.extra != nil || g.Stages() != 0 || g.Contains([]byte("a")) {
		t.Fatalf("zero Growing decodes to %+v", g)
	}
	if err := g.Insert([]byte("a")); err != ErrFull {
		t.Fatalf("Insert into a decoded zero Growing: %v", err)
	}
}

// sideTableHeavy encodes a Growing whose first stage is full and whose side
// table has an entry for every class the stage holds: the encoding that
// makes the decoder allocate most per byte (map entries from a few bytes
// each).
func sideTableHeavy(t *testing.T, capacity int) []byte {
	t.Helper()
	g, err := NewGrowing(capacity, 0.5, Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := g.stages[0].f
	for b := range f.t.M {
		for j := range uint32(cuckoohash.Slots) {
			fp := uint32(b%15)*cuckoohash.Slots + j + 1
			if fp>>f.fbits != 0 {
				fp = j + 1
			}
			f.t.Put(b, fp)
			f.count++
		}
	}
	g.count = f.count
	for b := range f.t.M {
		for _, fp := range f.t.Bucket(b) {
			ck := classKey{0, min(b, f.alt(b, fp)), fp}
			if g.extra[ck] == 0 {
				g.extra[ck] = 1
				g.count++
			}
		}
	}
	return marshalGrowing(t, g)
}

// TestGrowingUnmarshalAllocation checks that decoding allocates in
// proportion to the input, on honest encodings and on side-table-heavy ones:
// no more than what the decoded filter keeps (growingBytes), whose tables
// are at most maxSnappyRatio bytes per byte of input and whose side table
// has at most an entry per four bytes.
func TestGrowingUnmarshalAllocation(t *testing.T) {
	inputs := map[string][]byte{}
	for _, c := range []int{1, 40, 397, 2000} {
		inputs[fmt.Sprintf("side table, capacity %d", c)] = sideTableHeavy(t, c)
	}
	for _, n := range []int{0, 100, 10000} {
		g, _ := NewGrowing(16, 0.01, Config{})
		for i := range n {
			g.Insert([]byte{byte(i), byte(i >> 8)})
		}
		inputs[fmt.Sprintf("honest, %d keys", n)] = marshalGrowing(t, g)
	}
	for name, data := range inputs {
		const runs = 20
		var g Growing
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			g = Growing{}
			if err := g.UnmarshalBinary(data); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		runtime.ReadMemStats(&after)
		per := float64(after.TotalAlloc-before.TotalAlloc) / runs
		tables, kept := growingBytes(&g)
		t.Logf("%s: %d bytes, %.0f bytes allocated, %d kept (%.1f per byte of input)", name, len(data), per, kept, per/float64(len(data)))
		// Allocations round up to Go's size classes (at most an eighth
		// more), and the stage list grows by appending.
		if bound := kept*9/8 + 2*cap(g.stages)*int(unsafe.Sizeof(growStage{})) + 1024; per > float64(bound) {
			t.Errorf("%s: decoding allocates %.0f bytes; it keeps %d, which allows %d", name, per, kept, bound)
		}
		if tables > maxSnappyRatio*len(data) || len(g.extra) > len(data)/4 {
			t.Errorf("%s: %d bytes of tables and %d side-table entries from %d bytes", name, tables, len(g.extra), len(data))
		}
	}
}

// growingBytes returns the bytes of g's tables, and the bytes g keeps in
// all: the tables, a Filter and a stage entry per stage, and its side table,
// measured by building a map of as many entries.
func growingBytes(g *Growing) (tables, kept int) {
	for _, s := range g.stages {
		tables += len(s.f.t.Data)
	}
	kept = tables + cap(g.stages)*int(unsafe.Sizeof(growStage{})+unsafe.Sizeof(Filter{}))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m := make(map[classKey]int, len(g.extra))
	for ck, n := range g.extra {
		m[ck] = n
	}
	runtime.ReadMemStats(&after)
	return tables, kept + int(after.TotalAlloc-before.TotalAlloc)
}

// TestGrowingUnmarshalOtherSizing decodes a chain whose first stage is
// larger than the one this version's sizing makes, as an encoding written by
// a version that sized stages otherwise would be: it loads, keeps its keys,
// and grows on within its bound.
func TestGrowingUnmarshalOtherSizing(t *testing.T) {
	g, _ := NewGrowing(16, 0.3, Config{Seed: 5})
	f0 := g.stages[0].f
	big, _ := New(64, Config{FingerprintBits: int(f0.fbits), Seed: 5})
	if big.t.M == f0.t.M {
		t.Fatal("want a first stage of another size")
	}
	buf := make([]byte, 16)
	for k := range 20 {
		if err := big.Insert(testkit.Key(buf, 5, uint64(k))); err != nil {
			t.Fatal(err)
		}
	}
	p := parseGrowing(t, marshalGrowing(t, g))
	p.stages[0], _ = big.MarshalBinary()
	p.count = 20
	var h Growing
	if err := h.UnmarshalBinary(p.encode()); err != nil {
		t.Fatal(err)
	}
	for k := range 2000 {
		if err := h.Insert(testkit.Key(buf, 5, uint64(20+k))); err != nil {
			t.Fatal(err)
		}
	}
	for k := range 2020 {
		if !h.Contains(testkit.Key(buf, 5, uint64(k))) {
			t.Fatalf("key %d lost", k)
		}
	}
	if h.Count() != 2020 || h.Stages() < 3 || h.FalsePositiveBound() > 0.3 {
		t.Fatalf("count %d, %d stages, bound %v", h.Count(), h.Stages(), h.FalsePositiveBound())
	}
	if h.stages[0].f.t.M != big.t.M {
		t.Fatal("first stage not the one encoded")
	}
}

// growOnce inserts new keys into a decoded Growing until it adds a stage
// (or no stage can be added), and fails if that allocates more than a
// bound proportional to the last stage's table: a decoded chain must size
// the stages it adds from what its encoding holds.
func growOnce(t *testing.T, g *Growing, data []byte) {
	t.Helper()
	last := g.stages[len(g.stages)-1].f
	limit := 2*(cuckoohash.Slots*int(last.t.M)+stashSize) + 64
	bound := 256*uint64(len(last.t.Data)) + 4<<20 // besides the table: the walk's undo list
	stages := g.Stages()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range limit {
		err := g.InsertHash(Hash(binary.LittleEndian.AppendUint64([]byte("grow"), uint64(i))))
		if err != nil {
			if !errors.Is(err, ErrFull) {
				t.Fatalf("InsertHash: %v", err)
			}
			break
		}
		if g.Stages() > stages {
			break
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > bound {
		t.Fatalf("growing a decoded chain of %d stages (%d bytes encoded) allocated %d bytes, bound %d",
			stages, len(data), n, bound)
	}
}

// TestGrowingUnmarshalTinyStages decodes a chain of many two-bucket stages,
// each as wide as its share of the bound asks and valid on its own, and
// grows it: the new stage is sized from the last one, not from the first
// stage's capacity doubled once per stage (2^23 keys here).
func TestGrowingUnmarshalTinyStages(t *testing.T) {
	const k, capacity, seed = 20, 8, 3
	out := make([]byte, 16)
	copy(out, growMagic)
	out[4] = growVersion
	binary.LittleEndian.PutUint64(out[8:], math.Float64bits(0.5))
	for _, v := range []uint64{capacity, DefaultMaxKicks, seed, k, 0} {
		out = binary.AppendUvarint(out, v)
	}
	for i := range k {
		var stage []byte
		for fb := MinFingerprintBits; ; fb++ {
			if stageBound(2, fb) <= math.Ldexp(0.5, -(i+1)) {
				f, err := NewBuckets(2, Config{FingerprintBits: fb, Seed: seed + uint64(i)})
				if err != nil {
					t.Fatal(err)
				}
				stage, _ = f.MarshalBinary()
				break
			}
		}
		out = append(out, 0)
		out = binary.AppendUvarint(out, uint64(len(stage)))
		out = append(out, stage...)
	}
	out = binary.AppendUvarint(out, 0)
	data := resign(append(out, make([]byte, checksumLen)...))
	var g Growing
	if err := g.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	growOnce(t, &g, data)
	if g.Stages() != k+1 {
		t.Fatalf("%d stages after growing, want %d", g.Stages(), k+1)
	}
	if m := g.stages[k].f.Buckets(); m > 16 {
		t.Fatalf("stage %d has %d buckets; the last one has 2", k, m)
	}
}
