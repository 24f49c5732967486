package cuckoo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/golang/snappy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

var updateDyn = flag.Bool("update-filter", false, "rewrite the Filter and Growing encoding golden files in testdata/")

// sameFilter compares two filters field by field.
func sameFilter(a, b *Filter) error {
	switch {
	case a.t.M != b.t.M || a.t.F != b.t.F || a.t.Semi != b.t.Semi || a.fbits != b.fbits || a.half != b.half:
		return fmt.Errorf("shape %d/%d/%v/%d vs %d/%d/%v/%d", a.t.M, a.t.F, a.t.Semi, a.fbits, b.t.M, b.t.F, b.t.Semi, b.fbits)
	case a.seed != b.seed || a.maxKicks != b.maxKicks || a.rng != b.rng:
		return fmt.Errorf("seed/kicks/rng %d/%d/%d vs %d/%d/%d", a.seed, a.maxKicks, a.rng, b.seed, b.maxKicks, b.rng)
	case a.count != b.count || a.nstash != b.nstash || a.stash != b.stash:
		return fmt.Errorf("count/stash %d/%v vs %d/%v", a.count, a.stash, b.count, b.stash)
	case !bytes.Equal(a.t.Data, b.t.Data):
		return errors.New("tables differ")
	}
	return nil
}

// TestMarshalRoundTrip encodes filters of every layout at several loads,
// decodes them into zero Filters and into used ones, and checks the copies
// are the same filter: same fields, same answers, and the same bytes after
// the same further operations.
func TestMarshalRoundTrip(t *testing.T) {
	seed := testkit.Seed(t)
	buf := make([]byte, 16)
	for ci, c := range dynConfigs {
		c.Seed = seed + uint64(ci)
		for _, fill := range []float64{0, 0.005, 0.5, 2} { // 2: until ErrFull
			f, _ := New(1000, c)
			n := uint64(0)
			for ; f.LoadFactor() < fill; n++ {
				if f.Insert(testkit.Key(buf, seed, n)) != nil {
					break
				}
			}
			data, err := f.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var g Filter
			if err := g.UnmarshalBinary(data); err != nil {
				t.Fatalf("%s fill %v: %v", cfgName(c), fill, err)
			}
			if err := sameFilter(f, &g); err != nil {
				t.Fatalf("%s fill %v: %v", cfgName(c), fill, err)
			}
			h, _ := New(10, Config{FingerprintBits: 20, SemiSort: true})
			h.Insert([]byte("old"))
			if err := h.UnmarshalBinary(data); err != nil || sameFilter(f, h) != nil {
				t.Fatalf("%s fill %v: decoding into a used filter: %v", cfgName(c), fill, err)
			}
			if g.Config() != f.Config() {
				t.Fatalf("config %+v, want %+v", g.Config(), f.Config())
			}
			for i := range n + 2000 {
				k := testkit.Key(buf, seed, i)
				if f.Contains(k) != g.Contains(k) {
					t.Fatalf("%s fill %v: answers differ for key %d", cfgName(c), fill, i)
				}
			}
			for i := range uint64(300) {
				k := testkit.Key(buf, seed+1, i)
				e1, e2 := f.Insert(k), g.Insert(k)
				if e1 != e2 {
					t.Fatalf("insert after round trip: %v vs %v", e1, e2)
				}
				if i%3 == 0 {
					f.Delete(testkit.Key(buf, seed, i))
					g.Delete(testkit.Key(buf, seed, i))
				}
			}
			if err := sameFilter(f, &g); err != nil {
				t.Fatalf("%s fill %v: after the same operations: %v", cfgName(c), fill, err)
			}
		}
	}
}

// TestMarshalSize checks the size targets: a filter filled to its capacity
// encodes in at most 13.2 bits per capacity key at f=12 plain and f=13
// semi-sorted (the table is not compressible and is stored raw), and one at
// 0.5% load in at most a tenth of that.
func TestMarshalSize(t *testing.T) {
	seed := testkit.Seed(t)
	n := 1000000
	if testing.Short() {
		n = 100000
	}
	buf := make([]byte, 16)
	for _, c := range []Config{{FingerprintBits: 12}, {FingerprintBits: 13, SemiSort: true}, {FingerprintBits: 16}} {
		c.Seed = seed
		f, _ := New(n, c)
		sparse := 0
		for i := range uint64(n) {
			if err := f.Insert(testkit.Key(buf, seed, i)); err != nil {
				t.Fatal(err)
			}
			if sparse == 0 && f.LoadFactor() >= 0.005 {
				data, _ := f.MarshalBinary()
				sparse = len(data)
			}
		}
		dense, _ := f.MarshalBinary()
		bits := float64(8*len(dense)) / float64(n)
		t.Logf("%s: capacity %d, load %.4f: dense %d bytes (%.3f bits/key, raw %v), 0.5%% load %d bytes (%.4f of dense)",
			cfgName(c), n, f.LoadFactor(), len(dense), bits, dense[5]&flagRaw != 0, sparse, float64(sparse)/float64(len(dense)))
		if c.FingerprintBits <= 13 && bits > 13.2 {
			t.Errorf("%s: dense encoding %.3f bits per capacity key > 13.2", cfgName(c), bits)
		}
		if sparse*10 > len(dense) {
			t.Errorf("%s: 0.5%% load encodes to %d bytes, more than a tenth of %d", cfgName(c), sparse, len(dense))
		}
	}
}

// resign replaces the checksum at the end of data (which must be at least 8
// bytes) with the right one, so that a test reaches the checks behind it.
func resign(data []byte) []byte {
	d := append([]byte(nil), data...)
	body := d[:len(d)-checksumLen]
	binary.LittleEndian.PutUint64(d[len(body):], xxhash.Sum64(body))
	return d
}

// encodingParts splits an encoding into its header (through the stash), its
// table payload and its checksum.
func encodingParts(t *testing.T, data []byte) (hdr, payload []byte) {
	t.Helper()
	rest := data[fixedHeader : len(data)-checksumLen]
	for range 4 + 2*int(data[7]) {
		_, n := binary.Uvarint(rest)
		if n <= 0 {
			t.Fatal("bad test encoding")
		}
		rest = rest[n:]
	}
	h := len(data) - checksumLen - len(rest)
	return data[:h], rest
}

// assemble assembles an encoding from a header and a payload, with a good
// checksum.
func assemble(hdr, payload []byte) []byte {
	d := append(append(append([]byte(nil), hdr...), payload...), make([]byte, checksumLen)...)
	return resign(d)
}

// hdrOf builds the fixed header and uvarints of an encoding by hand.
func hdrOf(flags, f, nstash byte, rng, m, seed, kicks, count uint64, stash ...uint64) []byte {
	h := []byte(marshalMagic)
	h = append(h, marshalVersion, flags, f, nstash)
	h = binary.LittleEndian.AppendUint64(h, rng)
	for _, v := range append([]uint64{m, seed, kicks, count}, stash...) {
		h = binary.AppendUvarint(h, v)
	}
	return h
}

// TestUnmarshalCorrupt feeds UnmarshalBinary damaged encodings; each must
// fail with ErrCorrupt and leave the filter as it was. The entries with a
// good checksum reach the checks behind it.
//
// Table-driven: exempt from the 80-line function limit.
func TestUnmarshalCorrupt(t *testing.T) {
	f, _ := New(200, Config{FingerprintBits: 10, Seed: 3})
	fillUntilFull(t, f, 11) // dense, raw, with a stash
	dense, _ := f.MarshalBinary()
	s, _ := New(200, Config{FingerprintBits: 9, SemiSort: true, Seed: 4})
	for i := range 5 {
		s.Insert([]byte{byte(i)})
	}
	sparse, _ := s.MarshalBinary()
	if dense[5] != flagRaw || sparse[5] != flagSemi {
		t.Fatalf("test encodings have flags %#x, %#x", dense[5], sparse[5])
	}
	dh, dp := encodingParts(t, dense)
	sh, sp := encodingParts(t, sparse)
	m := f.Buckets()
	tbl := func(semi bool, fb int) []byte { // an empty raw table for m buckets
		n, _ := cuckoohash.TableBytes(m, uint(fb), semi)
		return make([]byte, n-cuckoohash.PadBytes)
	}
	set := func(b []byte, i int, v byte) []byte { b = append([]byte(nil), b...); b[i] = v; return b }

	cases := []struct {
		name string
		data []byte
	}{
		{"nil", nil},
		{"27 bytes, one short of the smallest encoding", dense[:27]},
		{"magic CKDG", resign(set(dense, 3, 'G'))},
		{"version 2", resign(set(dense, 4, 2))},
		{"version 0", resign(set(dense, 4, 0))},
		{"checksum off by one bit", set(dense, len(dense)-1, dense[len(dense)-1]^1)},
		{"table byte flipped", set(dense, len(dh)+5, dense[len(dh)+5]^0x10)},
		{"flag bit 2", resign(set(dense, 5, flagRaw|4))},
		{"f = 0", resign(set(dense, 6, 0))},
		{"f = 33", resign(set(dense, 6, 33))},
		{"semi-sorted f = 3", assemble(hdrOf(flagSemi|flagRaw, 3, 0, 1, m, 0, 500, 0), tbl(true, 4))},
		{"stash count 5", resign(set(dense, 7, 5))},
		{"walk state 0", assemble(hdrOf(flagRaw, 10, 0, 0, m, 0, 500, 0), tbl(false, 10))},
		{"header ends inside a uvarint", assemble([]byte("CKDF\x01\x02\x0a\x00\x01\x00\x00\x00\x00\x00\x00\x00\x80\x80\x80\x80\x80"), nil)},
		{"odd bucket count 201", assemble(hdrOf(flagRaw, 10, 0, 1, 201, 0, 500, 0), make([]byte, 252))},
		{"bucket count 2^49", assemble(hdrOf(flagRaw, 10, 0, 1, 1<<49, 0, 500, 0), nil)},
		{"bucket count 0 with f = 10", assemble(hdrOf(flagRaw, 10, 0, 1, 0, 0, 0, 0), nil)},
		{"bucket count 0 with a table", assemble(hdrOf(flagRaw, 0, 0, 1, 0, 0, 0, 0), []byte{0})},
		{"max kicks 0", assemble(hdrOf(flagRaw, 10, 0, 1, m, 0, 0, 0), tbl(false, 10))},
		{"max kicks 2^16+1", assemble(hdrOf(flagRaw, 10, 0, 1, m, 0, MaxKicksLimit+1, 0), tbl(false, 10))},
		{"max kicks 2^64-1", assemble(hdrOf(flagRaw, 10, 0, 1, m, 0, 1<<64-1, 0), tbl(false, 10))},
		{"count 1 of an empty table", assemble(hdrOf(flagRaw, 10, 0, 1, m, 0, 500, 1), tbl(false, 10))},
		{"count 2^63", assemble(hdrOf(flagRaw, 10, 0, 1, m, 0, 500, 1<<63), tbl(false, 10))},
		{"stash bucket = m", assemble(hdrOf(flagRaw, 10, 1, 1, m, 0, 500, 1, m, 5), tbl(false, 10))},
		{"stash fingerprint 0", assemble(hdrOf(flagRaw, 10, 1, 1, m, 0, 500, 1, 0, 0), tbl(false, 10))},
		{"stash fingerprint 2^10", assemble(hdrOf(flagRaw, 10, 1, 1, m, 0, 500, 1, 0, 1<<10), tbl(false, 10))},
		{"stash entry names the higher bucket of its pair", func() []byte {
			g := Filter{t: cuckoohash.Table{M: m}, half: m / 2}
			return assemble(hdrOf(flagRaw, 10, 1, 1, m, 0, 500, 1, g.alt(0, 7), 7), tbl(false, 10))
		}()},
		{"stash entry missing", assemble(hdrOf(flagRaw, 10, 1, 1, m, 0, 500, 1), nil)},
		{"stash entry without its fingerprint", assemble(hdrOf(flagRaw, 10, 1, 1, m, 0, 500, 1, 0), nil)},
		{"raw table one byte short", assemble(dh, dp[1:])},
		{"raw table one byte long", assemble(dh, append(append([]byte(nil), dp...), 0))},
		{"raw flag cleared on a raw table", assemble(set(dh, 5, 0), dp)},
		{"snappy table, flag says raw", assemble(set(sh, 5, flagSemi|flagRaw), sp)},
		{"snappy table one byte short", assemble(sh, sp[:len(sp)-1])},
		{"snappy length varint says one byte more", func() []byte {
			n, _ := snappy.DecodedLen(sp)
			_, k := binary.Uvarint(sp)
			p := append(binary.AppendUvarint(nil, uint64(n+1)), sp[k:]...)
			return assemble(sh, p)
		}()},
		{"snappy block of garbage", assemble(sh, append(binary.AppendUvarint(nil, uint64(len(tbl(true, 9)))), 0xff, 0xff, 0xff))},
		{"snappy block claims 1 TB in 6 bytes", assemble(hdrOf(flagSemi, 9, 0, 1, 1<<40, 0, 500, 0), binary.AppendUvarint(nil, 1<<40*32/8))},
		{"semi-sorted code 3876", func() []byte {
			b := tbl(true, 9)
			b[0], b[1] = 3876&0xff, 3876>>8
			return assemble(hdrOf(flagSemi|flagRaw, 9, 0, 1, m, 0, 500, 0), b)
		}()},
		{"semi-sorted slots of one nibble out of order", func() []byte {
			// Code 0 (four low nibbles 0), then the 5-bit rests 5, 0, 0, 0:
			// the encoder writes 0, 0, 0, 5, its empty slots first.
			b := tbl(true, 9)
			b[1] = 5 << 4
			return assemble(hdrOf(flagSemi|flagRaw, 9, 0, 1, m, 0, 500, 1), b)
		}()},
		{"f = 3 slot holding 0b1000", func() []byte {
			b := tbl(false, 4)
			b[0] = 8
			return assemble(hdrOf(flagRaw, 3, 0, 1, m, 0, 500, 1), b)
		}()},
		{"trailing byte after the checksum", append(append([]byte(nil), dense...), 0)},
	}
	for _, tc := range cases {
		g, _ := New(50, Config{Seed: 77})
		g.Insert([]byte("kept"))
		before, _ := g.MarshalBinary()
		err := g.UnmarshalBinary(tc.data)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", tc.name, err)
			continue
		}
		if after, _ := g.MarshalBinary(); !bytes.Equal(before, after) {
			t.Errorf("%s: a failed UnmarshalBinary changed the filter", tc.name)
		}
	}
}

// TestUnmarshalTruncatedAndFlipped: every prefix and every single-bit flip
// of a real encoding is refused.
func TestUnmarshalTruncatedAndFlipped(t *testing.T) {
	for _, c := range []Config{{FingerprintBits: 7}, {FingerprintBits: 14, SemiSort: true}} {
		f, _ := New(300, c)
		fillUntilFull(t, f, 5)
		for i := range 40 {
			f.Delete(testkit.Key(make([]byte, 16), 5, uint64(i)))
		}
		data, _ := f.MarshalBinary()
		var g Filter
		for n := range len(data) {
			if err := g.UnmarshalBinary(data[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: prefix of %d bytes: %v", cfgName(c), n, err)
			}
		}
		for i := range 8 * len(data) {
			d := append([]byte(nil), data...)
			d[i/8] ^= 1 << (i % 8)
			if err := g.UnmarshalBinary(d); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: bit %d flipped: %v", cfgName(c), i, err)
			}
		}
	}
}

// goldenFilters are the filters whose encodings testdata/ pins: a change to
// the format, the hashing or the insert path shows up as a diff.
func goldenFilters() map[string]*Filter {
	out := map[string]*Filter{}
	plain, _ := New(100, Config{FingerprintBits: 12, Seed: 1})
	for i := range 60 {
		plain.Insert([]byte("key-" + strconv.Itoa(i)))
	}
	plain.Delete([]byte("key-7"))
	out["filter-f12-plain.golden"] = plain
	// 14 buckets: what New(40) gave this config before it sized short walks
	// for a lower load.
	full, _ := NewBuckets(14, Config{FingerprintBits: 9, SemiSort: true, MaxKicks: 50, Seed: 2})
	for i := 0; full.Insert([]byte("key-"+strconv.Itoa(i))) == nil; i++ {
	}
	out["filter-f9-semi-full.golden"] = full
	var zero Filter
	out["filter-zero.golden"] = &zero
	return out
}

// TestMarshalGolden pins the encoding. Run with -update-filter after a
// deliberate format change (and bump marshalVersion).
func TestMarshalGolden(t *testing.T) {
	for name, f := range goldenFilters() {
		got, _ := f.MarshalBinary()
		path := filepath.Join("testdata", name)
		if *updateDyn {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestMarshalGolden -update-filter to create it)", err)
		}
		if !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Errorf("%s: encoding differs from the golden file at offset %d (got %d bytes, want %d)", name, i, len(got), len(want))
		}
		var g Filter
		if err := g.UnmarshalBinary(want); err != nil {
			t.Errorf("%s: golden file does not decode: %v", name, err)
		}
	}
}

// fuzzSeeds are real encodings for FuzzUnmarshal's corpus.
func fuzzSeeds() map[string][]byte {
	out := map[string][]byte{}
	for name, f := range goldenFilters() {
		out[name], _ = f.MarshalBinary()
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []Config{{FingerprintBits: 2}, {FingerprintBits: 4, SemiSort: true}, {FingerprintBits: 17}, {FingerprintBits: 32, SemiSort: true}} {
		f, _ := New(40, c)
		for range 30 {
			f.InsertHash(r.Uint64())
		}
		out[cfgName(c)], _ = f.MarshalBinary()
	}
	return out
}

// FuzzUnmarshal decodes arbitrary bytes: never a panic, an error that wraps
// ErrCorrupt, or a filter that encodes back to an equal filter and works.
// The input is also tried with its checksum fixed, which lets the fuzzer
// reach the checks behind the checksum.
func FuzzUnmarshal(f *testing.F) {
	for _, data := range fuzzSeeds() {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		inputs := [][]byte{data}
		if len(data) >= checksumLen {
			inputs = append(inputs, resign(data))
		}
		for _, in := range inputs {
			var g Filter
			if err := g.UnmarshalBinary(in); err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error %v does not wrap ErrCorrupt", err)
				}
				continue
			}
			enc, err := g.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var h Filter
			if err := h.UnmarshalBinary(enc); err != nil {
				t.Fatalf("re-encoding does not decode: %v", err)
			}
			if err := sameFilter(&g, &h); err != nil {
				t.Fatalf("re-encoding differs: %v", err)
			}
			if g.Buckets() == 0 {
				continue
			}
			checkWorks(t, &g, 20)
		}
	})
}

// hashSet is what Filter and Growing have in common for checkWorks.
type hashSet interface {
	InsertHash(h uint64) error
	ContainsHash(h uint64) bool
	DeleteHash(h uint64) bool
	Count() int
}

// checkWorks checks that a decoded filter works: of keys new keys, those
// that go in (an insert may fail only with ErrFull) are found, and deleting
// them again restores the count.
func checkWorks(t *testing.T, s hashSet, keys int) {
	t.Helper()
	n := s.Count()
	var in []uint64
	for i := range uint64(keys) {
		k := Hash(binary.LittleEndian.AppendUint64(nil, i))
		if err := s.InsertHash(k); err != nil {
			if !errors.Is(err, ErrFull) {
				t.Fatalf("InsertHash: %v", err)
			}
			continue
		}
		in = append(in, k)
	}
	for _, k := range in {
		if !s.ContainsHash(k) {
			t.Fatal("inserted key not found")
		}
	}
	for _, k := range in {
		if !s.DeleteHash(k) {
			t.Fatal("inserted key not deleted")
		}
	}
	if s.Count() != n {
		t.Fatalf("count %d after inserts and deletes, want %d", s.Count(), n)
	}
}
