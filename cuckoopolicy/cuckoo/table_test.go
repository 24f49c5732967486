package cuckoo

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// rawWord returns bucket i of a fast table as stored (not expanded).
func (t *table) rawWord(i uint64) uint64 {
	pos := i * uint64(t.bucketBits)
	return t.load(pos>>3) >> (pos & 7) & (math.MaxUint64 >> (64 - t.bucketBits))
}

// count returns the number of nonempty slots in bucket i.
func (t *table) count(i uint64) int {
	n := 0
	for _, v := range t.bucket(i) {
		if v != 0 {
			n++
		}
	}
	return n
}

// TestTableEveryWidth fills tables of every width and layout with random
// buckets (empty slots included) and checks that every read path agrees with
// an oracle: bucket, contains (fast and slow), and lookup on random probes.
func TestTableEveryWidth(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	for f := uint(MinFingerprintBits); f <= MaxFingerprintBits; f++ {
		for _, semi := range []bool{false, true} {
			m := uint64(1 + r.IntN(300))
			tb, err := newTable(m, f, semi)
			if err != nil {
				t.Fatal(err)
			}
			oracle := make([][4]uint32, m)
			for i := range oracle {
				for j := range 4 {
					if r.IntN(5) > 0 {
						oracle[i][j] = 1 + r.Uint32()%uint32(1<<f-1)
					}
				}
				tb.setBucket(uint64(i), oracle[i])
			}
			// Overwrite some buckets to exercise clearing.
			for range m / 3 {
				i := r.Uint64N(m)
				oracle[i] = [4]uint32{1 + r.Uint32()%uint32(1<<f-1)}
				tb.setBucket(i, oracle[i])
			}
			for i := range m {
				if got := tb.bucket(i); multiset(got) != multiset(oracle[i]) {
					t.Fatalf("f=%d semi=%v bucket %d: got %x want %x", f, semi, i, got, oracle[i])
				}
			}
			for range 3000 {
				i1, i2 := r.Uint64N(m), r.Uint64N(m)
				var fp uint32
				if r.IntN(2) == 0 {
					fp = oracle[i1][r.IntN(4)]
				}
				if fp == 0 {
					fp = 1 + r.Uint32()%uint32(1<<f-1)
				}
				want := false
				for _, v := range append(oracle[i1][:], oracle[i2][:]...) {
					want = want || v == fp
				}
				if got := tb.contains(i1, i2, fp); got != want {
					t.Fatalf("f=%d semi=%v contains(%d,%d,%x) = %v", f, semi, i1, i2, fp, got)
				}
				if got := tb.containsSlow(i1, i2, fp); got != want {
					t.Fatalf("f=%d semi=%v containsSlow(%d,%d,%x) = %v", f, semi, i1, i2, fp, got)
				}
			}
		}
	}
}

// TestBucketFastMatchesSlow checks that a fast table's one-word bucket reads
// and writes (bucketFast, setBucketFast, putWord) produce the same bytes and
// the same fingerprints, in the same order, as the slot-by-slot ones, for
// every fast width and layout, fingerprints at their extremes included.
func TestBucketFastMatchesSlow(t *testing.T) {
	r := rand.New(rand.NewPCG(dynSeed(t), 3))
	for f := uint(MinFingerprintBits); f <= 16; f++ {
		for _, semi := range []bool{false, true} {
			m := uint64(2 + r.IntN(200))
			fast, err := newTable(m, f, semi)
			if err != nil {
				t.Fatal(err)
			}
			slow, _ := newTable(m, f, semi)
			if !fast.fast {
				t.Fatalf("f=%d: table not fast", f)
			}
			// Random bytes everywhere, padding included: a write must leave
			// its neighbours' bits alone.
			for i := range fast.data {
				fast.data[i] = byte(r.Uint32())
			}
			copy(slow.data, fast.data)
			top := uint32(1)<<f - 1
			for range 20 * m {
				i := r.Uint64N(m)
				var b [4]uint32
				for j := range b {
					switch r.IntN(4) {
					case 0: // empty
					case 1:
						b[j] = top
					case 2:
						b[j] = 1 + r.Uint32()%4
					default:
						b[j] = 1 + r.Uint32()%top
					}
				}
				fast.setBucketFast(i, b)
				slow.setBucketSlow(i, b)
				if !bytes.Equal(fast.data, slow.data) {
					t.Fatalf("f=%d semi=%v: setBucket(%d, %x) wrote different bytes", f, semi, i, b)
				}
				k := r.Uint64N(m)
				if got, want := fast.bucketFast(k), slow.bucketSlow(k); got != want {
					t.Fatalf("f=%d semi=%v: bucket %d = %x, slow read %x", f, semi, k, got, want)
				}
				// putWord takes the first free slot, as the slot-by-slot
				// put does, and says whether there was one; bucket i, as
				// every bucket a table writes, is in canonical order.
				fp := 1 + r.Uint32()%top
				ok := fast.putWord(i, fast.word(i), fp)
				want := slow.bucketSlow(i)
				free := slices.Index(want[:], 0)
				if free >= 0 {
					want[free] = fp
					slow.setBucketSlow(i, want)
				}
				if ok != (free >= 0) || !bytes.Equal(fast.data, slow.data) {
					t.Fatalf("f=%d semi=%v: putWord(%d, %#x) = %v into %x; slot-by-slot: free slot %d", f, semi, i, fp, ok, b, free)
				}
			}
		}
	}
}

// TestLookupMatchesTable checks the hot path (Lookup) against the table for
// every width and layout on a built filter, on present and absent hashes.
func TestLookupMatchesTable(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	var b Builder
	for f := MinFingerprintBits; f <= MaxFingerprintBits; f++ {
		for _, semi := range []bool{false, true} {
			var l HashList
			n := 2000
			for range n {
				l.Add(r.Uint64())
			}
			data, p := b.Build(nil, &l, f, semi, func(n int) uint64 { return uint64(float64(n) / (4 * 0.95)) })
			tb, err := tableOn(data, p.Buckets, uint(f), semi)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 * n {
				h := r.Uint64()
				if i < n {
					h = l.At(i)
				}
				i1, i2, fp := staticAddr(h, p.Seed, p.Buckets, uint(f))
				want := tb.containsSlow(i1, i2, fp)
				if i < n && !want {
					t.Fatalf("f=%d semi=%v: key %d not in its buckets", f, semi, i)
				}
				if got := Lookup(data, p.Buckets, p.Seed, uint(f), semi, h); got != want {
					t.Fatalf("f=%d semi=%v: Lookup = %v, table says %v", f, semi, got, want)
				}
			}
			l.Reset()
		}
	}
}

func TestLookupRejectsBadParams(t *testing.T) {
	data := make([]byte, 64)
	for _, tc := range []struct {
		m    uint64
		f    uint
		semi bool
	}{
		{1, 3, false}, {1, 33, false}, {1, 10, false}, {MaxBuckets + 1, 10, true}, {1 << 63, 16, false}, {0, 10, true},
	} {
		if !Lookup(data, tc.m, 0, tc.f, tc.semi, 42) {
			t.Errorf("Lookup(%d buckets, f=%d, semi=%v) on 64 bytes answered false", tc.m, tc.f, tc.semi)
		}
	}
	if Lookup(nil, 0, 0, 10, true, 42) {
		t.Error("empty table answered true")
	}
	// Every width, in and out of range, both layouts: a width out of range
	// or a length that does not match m answers true, the empty filter of a
	// valid width false.
	widths := []uint{64, 255, 1 << 20, ^uint(0)}
	for f := range uint(MaxFingerprintBits + 8) {
		widths = append(widths, f)
	}
	for _, f := range widths {
		valid := f >= MinFingerprintBits && f <= MaxFingerprintBits
		for _, semi := range []bool{false, true} {
			for _, m := range []uint64{1, 3, 1000} {
				if !Lookup(data, m, 0, f, semi, 42) {
					t.Errorf("Lookup(%d buckets, f=%d, semi=%v) on 64 bytes answered false", m, f, semi)
				}
			}
			if !Lookup(data, 0, 0, f, semi, 42) {
				t.Errorf("Lookup(0 buckets, f=%d, semi=%v) on 64 bytes answered false", f, semi)
			}
			if got := Lookup(nil, 0, 0, f, semi, 42); got == valid {
				t.Errorf("Lookup(empty, f=%d, semi=%v) = %v", f, semi, got)
			}
		}
	}
}

func TestFingerprintRange(t *testing.T) {
	for f := uint(MinFingerprintBits); f <= MaxFingerprintBits; f++ {
		for _, y := range []uint64{0, 1 << 32, 1<<63 - 1, 1 << 63, ^uint64(0)} {
			fp := fingerprint(y, f)
			if fp == 0 || uint64(fp) >= 1<<f {
				t.Fatalf("fingerprint(%x, %d) = %d", y, f, fp)
			}
		}
	}
}

// TestFastLookups checks each width-specialized entry of Lookup's fast path
// against the table's slot-by-slot read, on buckets planted around the
// probed fingerprint: copies of it, decoys that differ only in the low
// nibble or only above it, random values and empty slots.
func TestFastLookups(t *testing.T) {
	seed := dynSeed(t)
	r := rand.New(rand.NewPCG(seed, 5))
	for f := uint(MinFingerprintBits); f <= 16; f++ {
		for _, semi := range []bool{false, true} {
			fast := lookups[lookupIndex(f, semi)]
			if fast == nil {
				t.Fatalf("f=%d semi=%v: no fast lookup", f, semi)
			}
			mask := uint32(1)<<f - 1
			for _, m := range []uint64{1, 2, 7, 100, window + 3} {
				tb, err := newTable(m, f, semi)
				if err != nil {
					t.Fatal(err)
				}
				hits := 0
				for range 3000 {
					h, s := r.Uint64(), r.Uint64()
					i1, i2, fp := staticAddr(h, s, m, f)
					slot := func() uint32 {
						var v uint32
						switch r.IntN(6) {
						case 0:
							v = fp
						case 1:
							v = fp ^ uint32(1+r.IntN(15))
						case 2:
							v = fp ^ uint32(1+r.IntN(int(mask>>4)|1))<<4
						case 3:
							v = r.Uint32()
						}
						return v & mask
					}
					for _, i := range []uint64{i1, i2} {
						tb.setBucket(i, [4]uint32{slot(), slot(), slot(), slot()})
					}
					want := tb.containsSlow(i1, i2, fp)
					if got := fast(tb.data, m, s, h); got != want {
						t.Fatalf("f=%d semi=%v m=%d: fast lookup %v, buckets %v %v hold %x: %v",
							f, semi, m, got, tb.bucket(i1), tb.bucket(i2), fp, want)
					}
					if want {
						hits++
					}
				}
				if hits == 0 || hits == 3000 {
					t.Fatalf("f=%d semi=%v m=%d: %d hits of 3000, the test plants nothing", f, semi, m, hits)
				}
			}
		}
	}
}

// TestFastLookupsGenerated checks that lookup_fast.go is what gen_lookup.go
// writes: edit the generator, not its output, and run go generate.
func TestFastLookupsGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool; -short skips it")
	}
	out := filepath.Join(t.TempDir(), "lookup_fast.go")
	cmd := exec.Command("go", "run", "gen_lookup.go", "-o", out)
	// The generator runs on the machine that runs go, also when the tests
	// run for another target (GOARCH=arm64 go test -exec qemu-...).
	cmd.Env = append(os.Environ(), "GOOS=", "GOARCH=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run gen_lookup.go: %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("lookup_fast.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("lookup_fast.go is stale: run go generate in cuckoopolicy/cuckoo")
	}
}
