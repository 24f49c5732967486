package cuckoopolicy

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// TestBloomBlock checks the block a live plan's level writes below a cuckoo
// filter's least bits per key: Pebble's bloom table followed by this
// package's trailer. Its table is the one bloom.FilterPolicy writes for the
// same keys, so every key gets the answer Pebble's own bloom filter gives it
// (the oracle); Inspect reports it; the model costs its bytes exactly.
func TestBloomBlock(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	for _, n := range []int{1, 7, 64, 500, 5_000} {
		keys := testkit.RandomKeys(r, n)
		absent := testkit.RandomKeys(r, 2_000)
		for _, b := range []int{1, 2, 3, 6, 12} {
			block := build(bloomBlocks(b), keys)
			want := build(bloom.FilterPolicy(b), keys)
			if len(block) != len(want)+trailerLen || string(block[:len(want)]) != string(want) {
				t.Fatalf("bloom(%d), %d keys: the block's table is not bloom.FilterPolicy's", b, n)
			}
			if got, model := tableCost(bloomBlocks(b), uint64(n)); float64(len(block)) != got || model <= 0 {
				t.Errorf("bloom(%d), %d keys: %d bytes, the model %.0f (rate %g)", b, n, len(block), got, model)
			}
			info, err := Inspect(block)
			if err != nil || !info.BloomBlock || info.Unfiltered || info.Keys != n || info.Buckets != 0 {
				t.Fatalf("Inspect: %+v, %v; want a bloom block of %d keys", info, err, n)
			}
			requireAll(t, FilterPolicy(10), block, keys)
			requireBloomAnswers(t, block, want, b, absent)
		}
	}
	// Without keys the writer writes an empty block, which rules every key
	// out.
	empty := bloomBlocks(3).NewWriter(pebble.TableFilter).Finish(nil)
	if info, err := Inspect(empty); err != nil || info.BloomBlock || info.Keys != 0 || len(empty) != trailerLen {
		t.Errorf("empty bloom writer: %d bytes, %+v, %v; want the empty trailer", len(empty), info, err)
	}
}

// requireBloomAnswers checks that this package's reader answers for block
// as bloom.FilterPolicy(bits)'s reader answers for its table want, on every
// key of keys.
func requireBloomAnswers(t *testing.T, block, want []byte, bits int, keys *testkit.Keys) {
	t.Helper()
	for i := range keys.Len() {
		k := keys.At(i)
		if got, exp := FilterPolicy(10).MayContain(pebble.TableFilter, block, k),
			bloom.FilterPolicy(bits).MayContain(pebble.TableFilter, want, k); got != exp {
			t.Fatalf("bloom(%d), %d-byte block, key %d: %v, Pebble's bloom %v", bits, len(block), i, got, exp)
		}
	}
}

// TestBloomBlockDamage checks that a bloom block's reader never trusts a
// malformed table or trailer: for each, MayContain answers true without
// panicking (Pebble's bloom reader would divide by a zero line count) and
// Inspect returns ErrInvalidFilter.
func TestBloomBlockDamage(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 1)
	keys := testkit.RandomKeys(r, 300)
	good := build(bloomBlocks(4), keys)
	table := len(good) - trailerLen
	retrail := func(b []byte, edit func(*trailer)) []byte {
		m, seed, kc, w := trailerWords(b)
		tr := trailerOf(m, seed, kc, uint32(w))
		edit(&tr)
		tr.put(b[len(b)-trailerLen:])
		return b
	}
	cases := map[string]func() []byte{
		"zero lines": func() []byte {
			b := append([]byte(nil), good...)
			binary.LittleEndian.PutUint32(b[table-4:], 0)
			return b
		},
		"lines beyond the table": func() []byte {
			b := append([]byte(nil), good...)
			binary.LittleEndian.PutUint32(b[table-4:], 1<<30)
			return b
		},
		"zero probes": func() []byte {
			b := append([]byte(nil), good...)
			b[table-5] = 0
			return b
		},
		"31 probes": func() []byte {
			b := append([]byte(nil), good...)
			b[table-5] = 31
			return b
		},
		"no table": func() []byte { return append([]byte(nil), good[table:]...) },
		"a partial line": func() []byte {
			return append(append([]byte(nil), good[:table-6]...), good[table-5:]...)
		},
		"buckets": func() []byte {
			return retrail(append([]byte(nil), good...), func(tr *trailer) { tr.buckets = 1 })
		},
		"no keys": func() []byte {
			return retrail(append([]byte(nil), good...), func(tr *trailer) { tr.keys = 0 })
		},
		"semi-sorted": func() []byte {
			return retrail(append([]byte(nil), good...), func(tr *trailer) { tr.flags |= flagSemiSort })
		},
		"unfiltered": func() []byte {
			return retrail(append([]byte(nil), good...), func(tr *trailer) { tr.flags |= flagUnfiltered })
		},
	}
	absent := testkit.RandomKeys(r, 200)
	for name, mk := range cases {
		b := mk()
		if _, err := Inspect(b); !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("%s: Inspect: %v, want ErrInvalidFilter", name, err)
		}
		for i := range absent.Len() {
			if !FilterPolicy(10).MayContain(pebble.TableFilter, b, absent.At(i)) {
				t.Fatalf("%s: absent key %d ruled out by a damaged block", name, i)
			}
		}
	}
}
