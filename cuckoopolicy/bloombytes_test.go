package cuckoopolicy

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// TestBloomBytesModel checks by the byte model, for every n from 1 to
// 20,000 (to 5,000 with -short) and then every 1% up to 1M, B from 9 to 32,
// that FilterPolicy(B) takes no more bytes than bloom.FilterPolicy(B); that
// it spends them: never less than them by more than a bucket and its
// rounding; and that wherever bloom's bytes are at least what the budget
// rule took before it followed them (oldLayout), it has no more false
// positives than that layout.
func TestBloomBytesModel(t *testing.T) {
	every := uint64(20_000)
	if testing.Short() {
		every = 5_000
	}
	for b := 9; b <= MaxBitsPerKey; b++ {
		c := FilterPolicy(b).config()
		for n := uint64(1); n <= 1_000_000; {
			got, bl := c.blockBytes(n), bloomBlockBytes(b, n)
			f, _ := c.tableBuckets(n)
			if got > bl {
				t.Fatalf("B=%d, %d keys: %.0f bytes, bloom %.0f", b, n, got, bl)
			}
			if floor := bl - float64(4*f+7)/8 - 1; got < floor {
				t.Fatalf("B=%d, %d keys: %.0f bytes, bloom %.0f: more than a bucket unspent", b, n, got, bl)
			}
			of, om := oldLayout(b, n)
			ob, _ := cuckoohash.TableBytes(om, uint(of), true)
			r, or := c.rate(n), cuckooRate(of, float64(n)/(4*float64(om)))
			if bl >= float64(ob+trailerLen) && r > or*(1+1e-9) {
				t.Fatalf("B=%d, %d keys: rate %.4g, the budget rule's %.4g (f=%d, %d buckets)", b, n, r, or, of, om)
			}
			if n < every {
				n++
			} else {
				n += n / 100
			}
		}
	}
}

// oldLayout is the budget rule's table for n keys at B bits a key, as it was
// before FilterPolicy followed bloom's bytes: width budgetWidth(B), and the
// buckets B bits a key pay for after the block's 40 bytes and 7 bits of
// rounding, at least enough for load 0.97.
func oldLayout(b int, n uint64) (f int, m uint64) {
	f = budgetWidth(b, true)
	bb := uint64(4*f - 4)
	const overhead = 8*(8+trailerLen) + 7
	if total := uint64(b) * n; total > overhead {
		m = (total - overhead) / bb
	}
	return f, max(m, uint64(math.Ceil(float64(n)/(4*maxLoad))), 1)
}

// TestBloomBytesRates checks that FilterPolicy(B) at bloom's bytes has
// fewer false positives than bloom.FilterPolicy(B) by the model on every
// table from 64 keys and 10 bits a key up: every n up to 1,000, then every
// 0.1% up to 1M. TestBloomBytesBuilt measures the rates apart.
func TestBloomBytesRates(t *testing.T) {
	for b := 10; b <= MaxBitsPerKey; b++ {
		c := FilterPolicy(b).config()
		for n := uint64(64); n <= 1_000_000; n += max(1, n/1000) {
			if c.rate(n) >= bloomRate(b, n) {
				t.Errorf("B=%d, %d keys: %.3g false positives, bloom %.3g", b, n, c.rate(n), bloomRate(b, n))
			}
		}
	}
}

// TestBloomBytesBuilt builds FilterPolicy(B) and bloom.FilterPolicy(B) on
// the same random keys, B from 9 to 32 and n from 1 to 300 and at sizes up
// to 65,536: the cuckoo block takes at most bloom's bytes, its bytes and
// width are the model's, and from 64 keys and 10 bits a key up, wherever
// the expected counts lie 6 standard deviations apart, it admits fewer of
// 100,000 absent keys than bloom.
func TestBloomBytesBuilt(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	absent := testkit.RandomKeys(r, 100_000)
	sizes := []int{400, 500, 1_000, 1_587, 3_000, 8_000, 65_536}
	for n := 1; n <= 300; n++ {
		sizes = append(sizes, n)
	}
	if testing.Short() {
		sizes = append(sizes[:5], 1, 2, 7, 8, 50, 64, 100, 200, 256)
	}
	compared := 0
	defer func() {
		if t.Logf("%d tables compared with bloom's", compared); compared < 30 {
			t.Errorf("only %d tables compared with bloom's", compared)
		}
	}()
	for _, n := range sizes {
		keys := testkit.RandomKeys(r, n)
		for b := 9; b <= MaxBitsPerKey; b++ {
			cb, bb := build(FilterPolicy(b), keys), build(bloom.FilterPolicy(b), keys)
			if len(cb) > len(bb) {
				t.Fatalf("B=%d, %d keys: %d bytes, bloom %d", b, n, len(cb), len(bb))
			}
			info, err := Inspect(cb)
			if err != nil {
				t.Fatal(err)
			}
			c := FilterPolicy(b).config()
			if c.rawBloom(uint64(n)) {
				if !info.RawBloom || string(cb) != string(bb) {
					t.Errorf("B=%d, %d keys: %+v; want the raw bloom block, bloom's %d bytes", b, n, info, len(bb))
				}
				continue
			}
			// Where placement fails at the model's size (rarely) the writer
			// takes a narrower width in the same bytes.
			f, m := c.tableBuckets(uint64(n))
			switch {
			case info.FingerprintBits < f:
				t.Logf("B=%d, %d keys: placement failed at f=%d; f=%d, %d buckets", b, n, f, info.FingerprintBits, info.Buckets)
			case info.FingerprintBits == f && uint64(info.Buckets) < m:
				// Keys that share both buckets and the fingerprint share an
				// entry, and the builder sizes the table again for the
				// entries it placed (in the new table they may no longer
				// share one).
				t.Logf("B=%d, %d keys: sized again for shared entries: %d buckets, the model %d", b, n, info.Buckets, m)
			case info.FingerprintBits != f || uint64(info.Buckets) != m || float64(len(cb)) != c.blockBytes(uint64(n)):
				t.Errorf("B=%d, %d keys: f=%d, %d buckets, %d bytes; the model f=%d, %d buckets, %.0f bytes", b, n, info.FingerprintBits, info.Buckets, len(cb), f, m, c.blockBytes(uint64(n)))
			}
			// Where the expected counts (the block's rate by its width and
			// load, bloom's by the model) lie 6 standard deviations of
			// their difference apart, the measurement must tell them apart.
			if n < 64 || b < 10 || (b != 10 && n%10 != 0) || (b != 10 && b != 12 && b != 16 && n%50 != 0) {
				continue
			}
			q := float64(absent.Len())
			ec, eb := q*cuckooRate(info.FingerprintBits, info.LoadFactor), q*bloomRate(b, uint64(n))
			if eb-ec < 6*math.Sqrt(eb+ec) {
				continue
			}
			compared++
			fc, fb := falsePositives(FilterPolicy(b), cb, absent), falsePositives(bloom.FilterPolicy(b), bb, absent)
			if fc >= fb && fb > 0 {
				t.Errorf("B=%d, %d keys: cuckoo %d false positives of %d, bloom %d (%d and %d bytes)", b, n, fc, absent.Len(), fb, len(cb), len(bb))
			}
		}
	}
}

// TestRawBloomBlock checks the raw bloom block FilterPolicy(B) writes on the
// tables where the model gives bloom's table fewer false positives than the
// cuckoo table in its bytes: bloom.FilterPolicy(B)'s block itself, so every
// key, present or absent, gets the answer Pebble's own bloom filter gives it
// (the oracle), and the model costs its bytes and rate as bloom's. Damaged
// raw bloom blocks (a zero line count, which Pebble's reader would divide
// by; a line count beyond the block; probe counts out of range; a partial
// line) are answered "may contain" and rejected by Inspect.
func TestRawBloomBlock(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	absent := testkit.RandomKeys(r, 20_000)
	raw := 0
	for b := MinBitsPerKey; b <= MaxBitsPerKey; b++ {
		c := FilterPolicy(b).config()
		for n := 1; n <= rawBloomMaxKeys+1; n++ {
			if !c.rawBloom(uint64(n)) {
				continue
			}
			raw++
			keys := testkit.RandomKeys(r, n)
			block, want := build(FilterPolicy(b), keys), build(bloom.FilterPolicy(b), keys)
			if string(block) != string(want) || c.blockBytes(uint64(n)) != float64(len(want)) ||
				c.rate(uint64(n)) != bloomRate(b, uint64(n)) {
				t.Fatalf("B=%d, %d keys: %d bytes, not bloom's %d (the model %.0f)", b, n, len(block), len(want), c.blockBytes(uint64(n)))
			}
			if info, err := Inspect(block); err != nil || !info.RawBloom || info.Keys != 0 {
				t.Fatalf("B=%d, %d keys: Inspect %+v, %v", b, n, info, err)
			}
			requireAll(t, FilterPolicy(10), block, keys)
			requireBloomAnswers(t, block, want, b, absent)
		}
	}
	if raw == 0 {
		t.Fatal("no table size is written as a raw bloom block")
	}
	// The writer keeps only the first rawBloomMaxKeys keys; a table of more
	// is a cuckoo table at every budget.
	for b := MinBitsPerKey; b <= MaxBitsPerKey; b++ {
		if FilterPolicy(b).config().rawBloom(rawBloomMaxKeys + 1) {
			t.Fatalf("B=%d: a raw bloom block for %d keys", b, rawBloomMaxKeys+1)
		}
	}

	good := build(FilterPolicy(10), testkit.RandomKeys(r, 40))
	if !isRawBloom(good) {
		t.Fatal("40 keys at 10 bits a key: not a raw bloom block")
	}
	n := len(good) - bloomTrailer
	damage := map[string]func(b []byte) []byte{
		"zero lines":        func(b []byte) []byte { binary.LittleEndian.PutUint32(b[n+1:], 0); return b },
		"lines beyond":      func(b []byte) []byte { binary.LittleEndian.PutUint32(b[n+1:], 1<<20); return b },
		"zero probes":       func(b []byte) []byte { b[n] = 0; return b },
		"31 probes":         func(b []byte) []byte { b[n] = 31; return b },
		"a partial line":    func(b []byte) []byte { return append(b[:n-1:n-1], b[n:]...) },
		"the trailer alone": func(b []byte) []byte { return b[n:] },
		"a line added":      func(b []byte) []byte { return append(append(make([]byte, 64), b[:n]...), b[n:]...) },
	}
	for name, edit := range damage {
		b := edit(append([]byte(nil), good...))
		if _, err := Inspect(b); !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("%s: Inspect: %v, want ErrInvalidFilter", name, err)
		}
		for i := range 2000 {
			if !FilterPolicy(10).MayContain(pebble.TableFilter, b, absent.At(i)) {
				t.Fatalf("%s: absent key %d ruled out by a damaged block", name, i)
			}
		}
	}
}

// TestRawBloomMaxBits checks the writer's shortcut: from rawBloomMaxBits+1
// bits a key up the model prefers the cuckoo table on every table of at
// most rawBloomMaxKeys keys, so a writer that keeps no keys there loses no
// raw bloom block; at rawBloomMaxBits it prefers bloom's on some.
func TestRawBloomMaxBits(t *testing.T) {
	for b := MinBitsPerKey; b <= MaxBitsPerKey; b++ {
		c, some := FilterPolicy(b).config(), false
		for n := uint64(1); n <= rawBloomMaxKeys; n++ {
			some = some || c.bloomBetter(n)
		}
		if some != (b <= rawBloomMaxBits) {
			t.Errorf("B=%d: bloom's table better on some table of at most %d keys: %v", b, rawBloomMaxKeys, some)
		}
	}
}
