package cuckoopolicy

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// keySet holds n keys back to back in one buffer.
type keySet struct {
	buf  []byte
	offs []int // n+1 offsets
}

func (k *keySet) len() int        { return len(k.offs) - 1 }
func (k *keySet) at(i int) []byte { return k.buf[k.offs[i]:k.offs[i+1]] }
func (k *keySet) add(key []byte)  { k.buf = append(k.buf, key...); k.offs = append(k.offs, len(k.buf)) }
func newKeySet() *keySet          { return &keySet{offs: []int{0}} }
func seedFor(t testing.TB) uint64 { s := rand.Uint64(); t.Logf("seed %d", s); return s }
func rng(seed uint64) *rand.Rand  { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// randomKeys returns n random 16-byte keys.
func randomKeys(r *rand.Rand, n int) *keySet {
	k := newKeySet()
	var b [16]byte
	for range n {
		binary.LittleEndian.PutUint64(b[:], r.Uint64())
		binary.LittleEndian.PutUint64(b[8:], r.Uint64())
		k.add(b[:])
	}
	return k
}

// sequentialKeys returns the keys "key-%08d" for 0 <= i < n, in order.
func sequentialKeys(n int) *keySet {
	k := newKeySet()
	for i := range n {
		var b [12]byte
		copy(b[:], "key-")
		for j := 11; j >= 4; j-- {
			b[j] = byte('0' + i%10)
			i /= 10
		}
		k.add(b[:])
	}
	return k
}

// varKeys returns n random keys of random lengths in [0, maxLen], sorted
// order not guaranteed.
func varKeys(r *rand.Rand, n, maxLen int) *keySet {
	k := newKeySet()
	b := make([]byte, maxLen)
	for range n {
		l := r.IntN(maxLen + 1)
		for j := range l {
			b[j] = byte(r.Uint32())
		}
		k.add(b[:l])
	}
	return k
}

// build runs p's writer over keys and returns the block.
func build(p pebble.FilterPolicy, keys *keySet) []byte {
	w := p.NewWriter(pebble.TableFilter)
	for i := range keys.len() {
		w.AddKey(keys.at(i))
	}
	return w.Finish(nil)
}

// requireAll fails on any false negative.
func requireAll(t *testing.T, p pebble.FilterPolicy, block []byte, keys *keySet) {
	t.Helper()
	for i := range keys.len() {
		if !p.MayContain(pebble.TableFilter, block, keys.at(i)) {
			t.Fatalf("false negative: key %d (%x) of %d", i, keys.at(i), keys.len())
		}
	}
}

// falsePositives counts the absent keys the block admits.
func falsePositives(p pebble.FilterPolicy, block []byte, absent *keySet) int {
	n := 0
	for i := range absent.len() {
		if p.MayContain(pebble.TableFilter, block, absent.at(i)) {
			n++
		}
	}
	return n
}

// theoryFPR is the false-positive rate of a cuckoo filter with f-bit
// fingerprints (uniform over 2^f-1 nonzero values) at the given load: a
// lookup compares against the 8*load fingerprints of its two buckets.
func theoryFPR(f int, load float64) float64 {
	return 1 - math.Pow(1-1/(math.Exp2(float64(f))-1), 8*load)
}
