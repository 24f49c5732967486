package cuckoohash

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// rawWord returns bucket i of a fast table as stored (not expanded).
func (t *Table) rawWord(i uint64) uint64 {
	pos := i * uint64(t.BucketBits)
	return t.load(pos>>3) >> (pos & 7) & (math.MaxUint64 >> (64 - t.BucketBits))
}

// TestTableEveryWidth fills tables of every width and layout with random
// buckets (empty slots included) and checks that every read path agrees with
// an oracle: bucket, contains (fast and slow), and lookup on random probes.
func TestTableEveryWidth(t *testing.T) {
	seed := testkit.Seed(t)
	r := rand.New(rand.NewPCG(seed, 2))
	for f := uint(MinFingerprintBits); f <= MaxFingerprintBits; f++ {
		for _, semi := range []bool{false, true} {
			m := uint64(1 + r.IntN(300))
			tb, err := NewTable(m, f, semi)
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
				tb.SetBucket(uint64(i), oracle[i])
			}
			// Overwrite some buckets to exercise clearing.
			for range m / 3 {
				i := r.Uint64N(m)
				oracle[i] = [4]uint32{1 + r.Uint32()%uint32(1<<f-1)}
				tb.SetBucket(i, oracle[i])
			}
			for i := range m {
				if got := tb.Bucket(i); multiset(got) != multiset(oracle[i]) {
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
				if got := tb.Contains(i1, i2, fp); got != want {
					t.Fatalf("f=%d semi=%v contains(%d,%d,%x) = %v", f, semi, i1, i2, fp, got)
				}
				if got := tb.ContainsSlow(i1, i2, fp); got != want {
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
	r := rand.New(rand.NewPCG(testkit.Seed(t), 3))
	for f := uint(MinFingerprintBits); f <= 16; f++ {
		for _, semi := range []bool{false, true} {
			m := uint64(2 + r.IntN(200))
			fast, err := NewTable(m, f, semi)
			if err != nil {
				t.Fatal(err)
			}
			slow, _ := NewTable(m, f, semi)
			if !fast.Fast {
				t.Fatalf("f=%d: table not fast", f)
			}
			// Random bytes everywhere, padding included: a write must leave
			// its neighbours' bits alone.
			for i := range fast.Data {
				fast.Data[i] = byte(r.Uint32())
			}
			copy(slow.Data, fast.Data)
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
				if !bytes.Equal(fast.Data, slow.Data) {
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
				ok := fast.PutWord(i, fast.Word(i), fp)
				want := slow.bucketSlow(i)
				free := slices.Index(want[:], 0)
				if free >= 0 {
					want[free] = fp
					slow.setBucketSlow(i, want)
				}
				if ok != (free >= 0) || !bytes.Equal(fast.Data, slow.Data) {
					t.Fatalf("f=%d semi=%v: putWord(%d, %#x) = %v into %x; slot-by-slot: free slot %d", f, semi, i, fp, ok, b, free)
				}
			}
		}
	}
}

func TestFingerprintRange(t *testing.T) {
	for f := uint(MinFingerprintBits); f <= MaxFingerprintBits; f++ {
		for _, y := range []uint64{0, 1 << 32, 1<<63 - 1, 1 << 63, ^uint64(0)} {
			fp := Fingerprint(y, f)
			if fp == 0 || uint64(fp) >= 1<<f {
				t.Fatalf("fingerprint(%x, %d) = %d", y, f, fp)
			}
		}
	}
}
