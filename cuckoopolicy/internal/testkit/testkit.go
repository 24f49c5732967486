// Package testkit is what the tests of cuckoopolicy, cuckoopolicy/cuckoo and
// the internal packages share: replayable seeds, the switch for long runs,
// key sets and the theoretical false-positive rate.
//
// Two environment variables steer the randomized tests, here as in the
// tests of bench and sstable_integration (package pebbletest):
//
//	PEBBLE_CUCKOO_SEED=n  replays a run with the seed a failing test logged
//	PEBBLE_CUCKOO_LONG=1  widens sweeps and sizes, and lets the statistical
//	                      tests draw fresh seeds (minutes)
//
// PEBBLE_CUCKOO_LONG means long only with the value 1; any other value is
// the default run. There, statistical tests (those whose verdict depends on
// the draw, such as false-positive rates against a bound) run on a fixed
// seed, so that the default run cannot fail by chance; the property tests (no
// false negatives, round trips) draw a fresh seed every run.
package testkit

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// Long reports whether long runs are asked for: PEBBLE_CUCKOO_LONG=1, the
// same switch as pebbletest.Long.
func Long() bool { return os.Getenv("PEBBLE_CUCKOO_LONG") == "1" }

// Seed returns a fresh seed for a randomized test, or PEBBLE_CUCKOO_SEED's value
// when it is set, and logs it with the command line that replays it. The log
// shows when the test fails (or with -v).
func Seed(t testing.TB) uint64 {
	t.Helper()
	return logSeed(t, rand.Uint64())
}

// FixedSeed is Seed for a statistical test: def in the default run, so that
// its verdict is the same every run, and a fresh seed in long runs.
// PEBBLE_CUCKOO_SEED overrides both.
func FixedSeed(t testing.TB, def uint64) uint64 {
	t.Helper()
	if Long() {
		def = rand.Uint64()
	}
	return logSeed(t, def)
}

func logSeed(t testing.TB, seed uint64) uint64 {
	t.Helper()
	if s := os.Getenv("PEBBLE_CUCKOO_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PEBBLE_CUCKOO_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with PEBBLE_CUCKOO_SEED=%d)", seed, seed)
	return seed
}

// Rand returns a generator for seed; stream separates the draws of one seed.
func Rand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))
}

// Key writes the i-th key of stream s, 16 bytes, into buf (at least 16
// bytes) and returns it. Distinct (s, i) give distinct keys.
func Key(buf []byte, s, i uint64) []byte {
	binary.LittleEndian.PutUint64(buf[0:], s)
	binary.LittleEndian.PutUint64(buf[8:], i)
	return buf[:16]
}

// Keys holds keys back to back in one buffer. The zero Keys is empty.
type Keys struct {
	buf  []byte
	offs []int // Len()+1 offsets once a key is added
}

// Len returns the number of keys.
func (k *Keys) Len() int { return max(len(k.offs)-1, 0) }

// At returns the i-th key; it aliases the set's buffer.
func (k *Keys) At(i int) []byte { return k.buf[k.offs[i]:k.offs[i+1]] }

// Add appends a copy of key.
func (k *Keys) Add(key []byte) {
	if k.offs == nil {
		k.offs = []int{0}
	}
	k.buf = append(k.buf, key...)
	k.offs = append(k.offs, len(k.buf))
}

// RandomKeys returns n random 16-byte keys.
func RandomKeys(r *rand.Rand, n int) *Keys {
	k := &Keys{offs: []int{0}}
	var b [16]byte
	for range n {
		binary.LittleEndian.PutUint64(b[:], r.Uint64())
		binary.LittleEndian.PutUint64(b[8:], r.Uint64())
		k.Add(b[:])
	}
	return k
}

// SequentialKeys returns the keys "key-%08d" for 0 <= i < n, in order.
func SequentialKeys(n int) *Keys {
	k := &Keys{offs: []int{0}}
	for i := range n {
		var b [12]byte
		copy(b[:], "key-")
		for j := 11; j >= 4; j-- {
			b[j] = byte('0' + i%10)
			i /= 10
		}
		k.Add(b[:])
	}
	return k
}

// VarKeys returns n random keys of random lengths in [0, maxLen].
func VarKeys(r *rand.Rand, n, maxLen int) *Keys {
	k := &Keys{offs: []int{0}}
	b := make([]byte, maxLen)
	for range n {
		l := r.IntN(maxLen + 1)
		for j := range l {
			b[j] = byte(r.Uint32())
		}
		k.Add(b[:l])
	}
	return k
}

// FPR is the false-positive rate of a cuckoo filter with f-bit fingerprints
// (uniform over the 2^f-1 nonzero values) at the given load: a lookup
// compares against the 8*load fingerprints of its two buckets, so the rate
// is 1 - (1 - 1/(2^f-1))^(8*load), about 8*load/2^f (Fan et al., section 4).
// Semi-sorting changes the size of a bucket, not which fingerprints it holds,
// so the rate is the same for both layouts.
func FPR(f int, load float64) float64 {
	return -math.Expm1(8 * load * math.Log1p(-1/(math.Exp2(float64(f))-1)))
}
