package cuckoo

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/binomial"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

func TestNewGrowingErrors(t *testing.T) {
	for _, tc := range []struct {
		capacity int
		maxFPR   float64
		cfg      Config
	}{
		{0, 0.01, Config{}}, {-5, 0.01, Config{}}, {10, 0, Config{}}, {10, -0.1, Config{}}, {10, 0.6, Config{}},
		{10, math.NaN(), Config{}}, {10, 0.01, Config{FingerprintBits: 12}}, {10, 0.01, Config{MaxKicks: -1}},
		{math.MaxInt, 0.01, Config{}},
	} {
		if g, err := NewGrowing(tc.capacity, tc.maxFPR, tc.cfg); !errors.Is(err, ErrConfig) || g != nil {
			t.Errorf("NewGrowing(%d, %v, %+v) = %v, %v; want ErrConfig", tc.capacity, tc.maxFPR, tc.cfg, g, err)
		}
	}
	var z Growing
	if z.Contains([]byte("a")) || z.Delete([]byte("a")) || z.Count() != 0 || z.Stages() != 0 || z.FalsePositiveBound() != 0 {
		t.Error("zero Growing is not empty")
	}
	if err := z.Insert([]byte("a")); err != ErrFull {
		t.Errorf("Insert on a zero Growing: %v", err)
	}
	z.Reset()
}

// growOracle runs random inserts (new keys and copies) and deletes of held
// keys on g against a multiset, across many stages, checking Count after
// every step and every held key often: no key may ever be lost.
func growOracle(t *testing.T, g *Growing, r *rand.Rand, stream uint64, ops int, grow float64) map[uint64]int {
	t.Helper()
	o := newKeyOracle()
	next := uint64(0)
	buf := make([]byte, 16)
	for step := range ops {
		switch x := r.Float64(); {
		case x < grow+0.1 || len(o.keys) == 0: // a new key, or another copy of a held one
			k := next
			if x >= grow && len(o.keys) > 0 {
				_, k = o.pick(r)
			} else {
				next++
			}
			if err := g.Insert(testkit.Key(buf, stream, k)); err != nil {
				t.Fatalf("step %d: Insert: %v", step, err)
			}
			o.add(k)
		default:
			j, k := o.pick(r)
			if !g.Delete(testkit.Key(buf, stream, k)) {
				t.Fatalf("step %d: Delete of held key %d (%d copies) found nothing", step, k, o.held[k])
			}
			o.remove(j)
		}
		if g.Count() != o.total {
			t.Fatalf("step %d: Count %d, oracle %d", step, g.Count(), o.total)
		}
		if step%256 == 0 || step == ops-1 {
			for k := range o.held {
				if !g.Contains(testkit.Key(buf, stream, k)) {
					t.Fatalf("step %d (%d stages): key %d (%d copies) lost", step, g.Stages(), k, o.held[k])
				}
			}
		}
	}
	return o.held
}

// TestGrowingOracle interleaves inserts, copies and deletes while the chain
// grows through many stages, with a loose bound so that keys often match
// stages they were not inserted into: the case where deleting from the first
// stage that matches would delete another key.
func TestGrowingOracle(t *testing.T) {
	seed := testkit.Seed(t)
	ops := 30000
	if testing.Short() {
		ops = 10000
	}
	for i, tc := range []struct {
		maxFPR float64
		cfg    Config
	}{
		{0.5, Config{}}, {0.3, Config{SemiSort: true}}, {0.05, Config{MaxKicks: 20}}, {0.001, Config{}},
	} {
		tc.cfg.Seed = seed + uint64(i)
		g, err := NewGrowing(16, tc.maxFPR, tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		held := growOracle(t, g, r, seed+uint64(i), ops, 0.55)
		extra := 0
		for _, n := range g.extra {
			extra += n
		}
		t.Logf("maxFPR %v: %d stages, %d keys held, %d copies counted in the side table, bound %.4g",
			tc.maxFPR, g.Stages(), g.Count(), extra, g.FalsePositiveBound())
		if g.FalsePositiveBound() > tc.maxFPR {
			t.Errorf("maxFPR %v: bound %v exceeds it", tc.maxFPR, g.FalsePositiveBound())
		}
		// Emptying it removes everything, side table included.
		buf := make([]byte, 16)
		for k, n := range held {
			for range n {
				if !g.Delete(testkit.Key(buf, seed+uint64(i), k)) {
					t.Fatalf("final delete of key %d failed", k)
				}
			}
		}
		if g.Count() != 0 || len(g.extra) != 0 {
			t.Fatalf("after deleting everything: count %d, side table %d", g.Count(), len(g.extra))
		}
		for _, s := range g.stages {
			if s.f.Count() != 0 {
				t.Fatalf("after deleting everything a stage holds %d", s.f.Count())
			}
		}
	}
}

// TestNaiveChainLosesKeys shows why Growing keeps a key's copies in the
// first stage that matches it: a chain that inserts into the newest stage
// and deletes from the first stage that matches loses keys under the same
// operations.
func TestNaiveChainLosesKeys(t *testing.T) {
	var chain []*Filter
	add := func() {
		f, _ := New(16<<len(chain), Config{FingerprintBits: 4 + len(chain), Seed: uint64(len(chain))})
		chain = append(chain, f)
	}
	add()
	buf := make([]byte, 16)
	r := rand.New(rand.NewPCG(1, 1))
	held := map[uint64]bool{}
	next := uint64(0)
	for step := range 20000 {
		if r.IntN(2) == 0 || len(held) == 0 {
			k := testkit.Key(buf, 9, next)
			if chain[len(chain)-1].Insert(k) != nil {
				add()
				chain[len(chain)-1].Insert(k)
			}
			held[next] = true
			next++
		} else {
			for k := range held {
				for _, f := range chain {
					if f.Delete(testkit.Key(buf, 9, k)) {
						break
					}
				}
				delete(held, k)
				break
			}
		}
		for k := range held {
			found := false
			for _, f := range chain {
				found = found || f.Contains(testkit.Key(buf, 9, k))
			}
			if !found {
				t.Logf("the naive chain lost key %d at step %d", k, step)
				return
			}
		}
	}
	t.Fatal("the naive chain lost no key; this test no longer shows the hazard")
}

// TestGrowingFPR grows a chain through several stages and measures its
// false-positive rate against its bound.
func TestGrowingFPR(t *testing.T) {
	seed := testkit.FixedSeed(t, 1) // statistical: fresh with PEBBLE_CUCKOO_LONG=1
	n, queries := 100000, 500000
	if testing.Short() {
		n, queries = 30000, 200000
	}
	for _, maxFPR := range []float64{0.01, 0.001} {
		g, err := NewGrowing(1000, maxFPR, Config{Seed: seed, SemiSort: maxFPR < 0.005})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 16)
		for i := range uint64(n) {
			if err := g.Insert(testkit.Key(buf, seed, i)); err != nil {
				t.Fatal(err)
			}
		}
		fp := 0
		for i := range uint64(queries) {
			if g.Contains(testkit.Key(buf, ^seed, i)) {
				fp++
			}
		}
		got := float64(fp) / float64(queries)
		bound := g.FalsePositiveBound()
		t.Logf("maxFPR %v: %d keys, %d stages, fpr %.4f%%, bound now %.4f%%", maxFPR, n, g.Stages(), 100*got, 100*bound)
		if _, ge := binomial.Tails(queries, bound, fp); bound > maxFPR || ge < 1e-9 {
			t.Errorf("maxFPR %v: fpr %v, bound %v", maxFPR, got, bound)
		}
		for i := range uint64(n) {
			if !g.Contains(testkit.Key(buf, seed, i)) {
				t.Fatalf("key %d lost", i)
			}
		}
	}
}

// TestGrowingLimit: a bound so tight that stages soon need more than 32
// fingerprint bits ends in ErrFull, with every key still there.
func TestGrowingLimit(t *testing.T) {
	g, err := NewGrowing(8, 1e-8, Config{})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	i := uint64(0)
	for ; ; i++ {
		if err := g.Insert(testkit.Key(buf, 1, i)); err != nil {
			if !errors.Is(err, ErrFull) {
				t.Fatal(err)
			}
			break
		}
	}
	t.Logf("ErrFull after %d keys in %d stages", i, g.Stages())
	for k := range i {
		if !g.Contains(testkit.Key(buf, 1, k)) {
			t.Fatalf("key %d lost", k)
		}
	}
	if g.Count() != int(i) {
		t.Fatalf("count %d, want %d", g.Count(), i)
	}
	g.Reset()
	if g.Count() != 0 || g.Stages() != 1 || g.Contains(testkit.Key(buf, 1, 0)) {
		t.Fatal("Reset left keys or stages")
	}
}

// TestGrowingCopiesStayInStage checks that copies of one key beyond the
// eight a stage holds go to the side table without marking the stage full:
// new keys keep going to it, and no stage is added while it has room.
func TestGrowingCopiesStayInStage(t *testing.T) {
	g, err := NewGrowing(1000, 0.01, Config{})
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) []byte { return []byte{'k', byte(i >> 8), byte(i)} }
	held := map[int]int{}
	insert := func(i int) {
		t.Helper()
		if err := g.Insert(key(i)); err != nil {
			t.Fatalf("Insert(key %d): %v", i, err)
		}
		held[i]++
	}
	// Four keys with 9 to 12 copies each, each followed by a new key. (A
	// key held eight times fills its two buckets for good, so a few of them
	// are enough: see Filter's doc.)
	const copied = 4
	for i := range copied {
		for range 9 + i {
			insert(i)
		}
		insert(100 + i)
	}
	// Then distinct keys until the stage holds 900 fingerprints (eight
	// of each copied key).
	for i := 200; len(held)+7*copied < 900; i++ {
		insert(i)
	}
	if g.Stages() != 1 {
		t.Fatalf("%d stages for %d distinct keys in a Growing whose first stage holds 1000", g.Stages(), len(held))
	}
	total := 0
	for i, n := range held {
		total += n
		if !g.Contains(key(i)) {
			t.Fatalf("key %d lost", i)
		}
	}
	if g.Count() != total {
		t.Fatalf("Count() = %d, want %d", g.Count(), total)
	}
	for i, n := range held {
		for c := range n {
			if !g.Delete(key(i)) {
				t.Fatalf("Delete of copy %d of %d of key %d failed", c+1, n, i)
			}
		}
	}
	if g.Count() != 0 || len(g.extra) != 0 {
		t.Fatalf("after deleting everything: Count() = %d, %d side-table entries", g.Count(), len(g.extra))
	}
}

// TestGrowingFailedInsert: an insert that fails because no stage can be added
// changes nothing, the encoding included, and later keys that find room in
// the newest stage still go in.
func TestGrowingFailedInsert(t *testing.T) {
	g, err := NewGrowing(500, 1e-8, Config{}) // two stages, then no width is wide enough
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	i := uint64(0)
	for ; ; i++ {
		before, _ := g.MarshalBinary()
		err := g.Insert(testkit.Key(buf, 1, i))
		if err == nil {
			continue
		}
		if !errors.Is(err, ErrFull) {
			t.Fatalf("insert into a chain at its limit: %v, want ErrFull", err)
		}
		if after, _ := g.MarshalBinary(); !bytes.Equal(before, after) {
			t.Fatal("a failed insert changed the encoding")
		}
		break
	}
	in := 0
	for j := range uint64(1000) {
		if g.Insert(testkit.Key(buf, 2, j)) == nil {
			in++
		}
	}
	if in == 0 {
		t.Fatal("after a failed insert, no key of 1000 went in")
	}
	t.Logf("ErrFull after %d keys in %d stages; %d of 1000 later keys went in", i, g.Stages(), in)
}
