package static

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// TestLookupMatchesTable checks the hot path (Lookup) against the table for
// every width and layout on a built filter, on present and absent hashes.
func TestLookupMatchesTable(t *testing.T) {
	seed := testkit.Seed(t)
	r := rand.New(rand.NewPCG(seed, 3))
	var b Builder
	for f := cuckoohash.MinFingerprintBits; f <= cuckoohash.MaxFingerprintBits; f++ {
		for _, semi := range []bool{false, true} {
			var l HashList
			n := 2000
			for range n {
				l.Add(r.Uint64())
			}
			data, p := b.Build(nil, &l, f, semi, func(n int) uint64 { return uint64(float64(n) / (4 * 0.95)) })
			tb, err := cuckoohash.TableOn(data, p.Buckets, uint(f), semi)
			if err != nil {
				t.Fatal(err)
			}
			dirty := append([]byte(nil), data...)
			for i := len(dirty) - cuckoohash.PadBytes; i < len(dirty); i++ {
				dirty[i] = 0xff
			}
			// The last byte of the buckets, past the last bucket's bits.
			if pad := len(dirty) - cuckoohash.PadBytes - 1; (p.Buckets*uint64(tb.BucketBits))%8 != 0 {
				dirty[pad] |= 0xff << ((p.Buckets * uint64(tb.BucketBits)) % 8)
			}
			for i := range 2 * n {
				h := r.Uint64()
				if i < n {
					h = l.At(i)
				}
				i1, i2, fp := addr(h, p.Seed, p.Buckets, uint(f))
				want := tb.ContainsSlow(i1, i2, fp)
				if i < n && !want {
					t.Fatalf("f=%d semi=%v: key %d not in its buckets", f, semi, i)
				}
				if got := Lookup(data, p.Buckets, p.Seed, uint(f), semi, h); got != want {
					t.Fatalf("f=%d semi=%v: Lookup = %v, table says %v", f, semi, got, want)
				}
				// The padding may hold other bytes (the short trailer's
				// first word): lookups read only the buckets' bits.
				if got := Lookup(dirty, p.Buckets, p.Seed, uint(f), semi, h); got != want {
					t.Fatalf("f=%d semi=%v: Lookup over nonzero padding = %v, table says %v", f, semi, got, want)
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
		{1, 3, false}, {1, 33, false}, {1, 10, false}, {cuckoohash.MaxBuckets + 1, 10, true}, {1 << 63, 16, false}, {0, 10, true},
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
	for f := range uint(cuckoohash.MaxFingerprintBits + 8) {
		widths = append(widths, f)
	}
	for _, f := range widths {
		valid := f >= cuckoohash.MinFingerprintBits && f <= cuckoohash.MaxFingerprintBits
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

// TestFastLookups checks each width-specialized entry of Lookup's fast path
// against the table's slot-by-slot read, on buckets planted around the
// probed fingerprint: copies of it, decoys that differ only in the low
// nibble or only above it, random values and empty slots.
func TestFastLookups(t *testing.T) {
	seed := testkit.Seed(t)
	r := rand.New(rand.NewPCG(seed, 5))
	for f := uint(cuckoohash.MinFingerprintBits); f <= 16; f++ {
		for _, semi := range []bool{false, true} {
			fast := lookups[lookupIndex(f, semi)]
			if fast == nil {
				t.Fatalf("f=%d semi=%v: no fast lookup", f, semi)
			}
			mask := uint32(1)<<f - 1
			for _, m := range []uint64{1, 2, 7, 100, window + 3} {
				tb, err := cuckoohash.NewTable(m, f, semi)
				if err != nil {
					t.Fatal(err)
				}
				hits := 0
				for range 3000 {
					h, s := r.Uint64(), r.Uint64()
					i1, i2, fp := addr(h, s, m, f)
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
						tb.SetBucket(i, [4]uint32{slot(), slot(), slot(), slot()})
					}
					want := tb.ContainsSlow(i1, i2, fp)
					if got := fast(tb.Data, m, s, h); got != want {
						t.Fatalf("f=%d semi=%v m=%d: fast lookup %v, buckets %v %v hold %x: %v",
							f, semi, m, got, tb.Bucket(i1), tb.Bucket(i2), fp, want)
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
		t.Fatal("lookup_fast.go is stale: run go generate in cuckoopolicy/internal/static")
	}
}
