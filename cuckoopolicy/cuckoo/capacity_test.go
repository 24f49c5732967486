package cuckoo

import (
	"math/rand/v2"
	"testing"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// fillUntilFull inserts distinct keys of stream s until ErrFull and returns
// how many went in. Once the stash is full (when an eviction walk can fail)
// it checks that the failed insert changed nothing.
func fillUntilFull(t *testing.T, f *Filter, s uint64) int {
	t.Helper()
	buf := make([]byte, 16)
	var before []byte
	for i := uint64(0); ; i++ {
		full := f.nstash == stashSize
		if full {
			before = append(before[:0], f.t.Data...)
		}
		stash, count := f.stash, f.count
		if err := f.Insert(testkit.Key(buf, s, i)); err != nil {
			if err != ErrFull {
				t.Fatal(err)
			}
			if stash != f.stash || count != f.count || full && string(before) != string(f.t.Data) {
				t.Fatalf("a failed insert changed the filter: stash %v -> %v, count %d -> %d, table changed %v", stash, f.stash, count, f.count, full && string(before) != string(f.t.Data))
			}
			return int(i)
		}
	}
}

// TestFillToFull fills filters until the first ErrFull: every key inserted
// before is still there, the failure changed nothing, at least capacity keys
// went in, and for f >= 7 the load passed 95%. Then it keeps inserting past
// failures: whatever succeeds is found too.
func TestFillToFull(t *testing.T) {
	seed := testkit.Seed(t)
	capacity := 10000
	if testing.Short() {
		capacity = 3000
	}
	if testkit.Long() {
		capacity = 1 << 20
	}
	for ci, c := range dynConfigs {
		c.Seed = seed + uint64(ci)
		f, err := New(capacity, c)
		if err != nil {
			t.Fatal(err)
		}
		n := fillUntilFull(t, f, seed)
		lf := f.LoadFactor()
		t.Logf("%s: %d buckets, first ErrFull after %d inserts (capacity %d), load %.4f, stash %d",
			cfgName(c), f.Buckets(), n, capacity, lf, f.nstash)
		if n < capacity {
			t.Errorf("%s: ErrFull after %d inserts, capacity %d", cfgName(c), n, capacity)
		}
		if c.FingerprintBits >= 7 && lf < 0.95 {
			t.Errorf("%s: full at load %.4f < 0.95", cfgName(c), lf)
		}
		buf := make([]byte, 16)
		held := map[uint64]bool{}
		for i := range uint64(n) {
			held[i] = true
		}
		for i := uint64(n + 1); i < uint64(n+1000); i++ {
			if f.Insert(testkit.Key(buf, seed, i)) == nil {
				held[i] = true
			}
		}
		for i := range held {
			if !f.Contains(testkit.Key(buf, seed, i)) {
				t.Fatalf("%s: key %d lost", cfgName(c), i)
			}
		}
		if f.Count() != len(held) {
			t.Fatalf("%s: Count %d, want %d", cfgName(c), f.Count(), len(held))
		}
	}
}

// TestCapacityGuarantee is the evidence for New's promise: for many
// capacities (every one up to 300, then a geometric sweep) and seeds, the
// first capacity distinct inserts all succeed.
func TestCapacityGuarantee(t *testing.T) {
	seed := testkit.Seed(t)
	maxCap, seeds := 3000, 3
	if testing.Short() {
		maxCap, seeds = 500, 1
	}
	if testkit.Long() {
		maxCap, seeds = 300000, 20
	}
	widths := []int{2, 3, 4, 5, 6, 7, 8, 12, 16}
	if !testkit.Long() {
		widths = []int{4, 6, 12}
	}
	buf := make([]byte, 16)
	for _, fb := range widths {
		for c := 1; c <= maxCap; {
			for s := range uint64(seeds) {
				ks := seed + uint64(c)<<8 + s
				f, err := New(c, Config{FingerprintBits: fb, Seed: ks})
				if err != nil {
					t.Fatal(err)
				}
				for i := range uint64(c) {
					if err := f.Insert(testkit.Key(buf, ks, i)); err != nil {
						t.Fatalf("f=%d capacity %d seed %d: insert %d failed: %v", fb, c, ks, i, err)
					}
				}
			}
			if c < 300 {
				c++
			} else {
				c += c/20 + 1
			}
		}
	}
}

// TestCapacityGuaranteeShortWalks: New's promise holds with few kicks too,
// where it sizes for kicksLoad. Without that sizing, 1 kick fails at about
// 0.7 of capacity at these sizes.
func TestCapacityGuaranteeShortWalks(t *testing.T) {
	seed := testkit.Seed(t)
	caps := []int{50, 1000, 20000}
	if !testing.Short() {
		caps = append(caps, 200000)
	}
	if testkit.Long() {
		caps = append(caps, 1<<22)
	}
	buf := make([]byte, 16)
	for _, cfg := range []Config{{FingerprintBits: 12}, {FingerprintBits: 13, SemiSort: true}, {FingerprintBits: 6}} {
		for _, k := range []int{1, 2, 4, 8, 16, 32, 64, 100, 150, 199} {
			for _, c := range caps {
				cfg.MaxKicks, cfg.Seed = k, seed+uint64(c)<<8+uint64(k)
				f, err := New(c, cfg)
				if err != nil {
					t.Fatal(err)
				}
				for i := range uint64(c) {
					if err := f.Insert(testkit.Key(buf, cfg.Seed, i)); err != nil {
						t.Fatalf("%s kicks=%d capacity %d: insert %d failed: %v", cfgName(cfg), k, c, i, err)
					}
				}
			}
		}
	}
	for i := 1; i < len(kicksLoads); i++ {
		if a, b := kicksLoads[i-1], kicksLoads[i]; a.kicks >= b.kicks || a.load > b.load {
			t.Errorf("kicksLoads not increasing at %+v, %+v", a, b)
		}
	}
}

// TestStashDrains fills a filter until it fails, so that its stash is in
// use, then deletes keys: the stash empties into freed slots and nothing is
// lost.
func TestStashDrains(t *testing.T) {
	seed := testkit.Seed(t)
	for _, c := range []Config{{FingerprintBits: 12}, {FingerprintBits: 9, SemiSort: true}, {FingerprintBits: 20}} {
		c.Seed = seed
		f, _ := New(2000, c)
		n := fillUntilFull(t, f, seed)
		if f.nstash != stashSize {
			t.Fatalf("%s: stash holds %d at the first ErrFull", cfgName(c), f.nstash)
		}
		buf := make([]byte, 16)
		deleted := map[uint64]bool{}
		r := rand.New(rand.NewPCG(seed, 3))
		for f.nstash > 0 {
			k := r.Uint64N(uint64(n))
			if deleted[k] {
				continue
			}
			deleted[k] = true
			if !f.Delete(testkit.Key(buf, seed, k)) {
				t.Fatalf("%s: delete of key %d failed", cfgName(c), k)
			}
		}
		t.Logf("%s: stash drained after %d deletes", cfgName(c), len(deleted))
		for k := range uint64(n) {
			if !deleted[k] && !f.Contains(testkit.Key(buf, seed, k)) {
				t.Fatalf("%s: key %d lost", cfgName(c), k)
			}
		}
	}
}

// TestCapacityAfterOverfill fills filters to their first ErrFull, which
// leaves the stash full, then deletes keys back below capacity, none from a
// stashed entry's pair of buckets, so that the stash stays full, and inserts
// new keys up to capacity: New's promise holds however the filter got there.
// (Before drainStash, every insert that found its buckets full then failed.)
func TestCapacityAfterOverfill(t *testing.T) {
	seed := testkit.Seed(t)
	capacity := 20000
	if testing.Short() {
		capacity = 5000
	}
	buf := make([]byte, 16)
	for _, c := range []Config{{FingerprintBits: 12}, {FingerprintBits: 9, SemiSort: true}, {FingerprintBits: 13, SemiSort: true}, {FingerprintBits: 20}, {FingerprintBits: 12, MaxKicks: 1}, {FingerprintBits: 12, MaxKicks: 8}, {FingerprintBits: 12, MaxKicks: 32}} {
		c.Seed = seed
		f, _ := New(capacity, c)
		n := fillUntilFull(t, f, seed)
		if f.nstash != stashSize {
			t.Fatalf("%s: stash holds %d at the first ErrFull", cfgName(c), f.nstash)
		}
		pairs := map[uint64]bool{}
		for _, e := range f.stash {
			pairs[e.b], pairs[f.alt(e.b, e.fp)] = true, true
		}
		held := map[uint64]bool{}
		for k := range uint64(n) {
			held[k] = true
		}
		r := rand.New(rand.NewPCG(seed, 4))
		for _, k := range r.Perm(n) {
			if len(held) <= capacity*99/100 {
				break
			}
			key := testkit.Key(buf, seed, uint64(k))
			if i1, i2, _ := f.addr(Hash(key)); pairs[i1] || pairs[i2] {
				continue
			}
			if !f.Delete(key) {
				t.Fatalf("%s: delete of key %d failed", cfgName(c), k)
			}
			delete(held, uint64(k))
		}
		if f.nstash != stashSize {
			t.Fatalf("%s: stash holds %d after the deletes, want it full", cfgName(c), f.nstash)
		}
		load := f.LoadFactor()
		for k := uint64(1 << 40); len(held) < capacity; k++ {
			if err := f.Insert(testkit.Key(buf, seed, k)); err != nil {
				t.Fatalf("%s: insert with %d keys held (capacity %d, load %.4f, stash %d): %v",
					cfgName(c), len(held), capacity, f.LoadFactor(), f.nstash, err)
			}
			held[k] = true
		}
		t.Logf("%s: first ErrFull after %d keys; refilled from load %.4f to capacity, stash %d", cfgName(c), n, load, f.nstash)
		if f.Count() != len(held) {
			t.Fatalf("%s: Count %d, holding %d", cfgName(c), f.Count(), len(held))
		}
		for k := range held {
			if !f.Contains(testkit.Key(buf, seed, k)) {
				t.Fatalf("%s: key %d lost", cfgName(c), k)
			}
		}
	}
}

// TestSizedLoadCoversCapacity checks drainStash's threshold against New's
// sizing: for every capacity New accepts, a filter holding fewer keys than
// the capacity is below sizedLoad of the table New made. (Taken at the final,
// even bucket count, saturationLoad fell below the load New sized for at
// some capacities of narrow widths, such as 44092 at f = 5.)
func TestSizedLoadCoversCapacity(t *testing.T) {
	r := rand.New(rand.NewPCG(testkit.Seed(t), 5))
	caps := []int{44092}
	for c := 1; c <= 3000; c++ {
		caps = append(caps, c)
	}
	for range 3000 {
		caps = append(caps, 3000+int(r.Uint64N(1e7)))
	}
	if testing.Short() {
		caps = caps[:1500]
	}
	for _, f := range []int{2, 3, 4, 5, 6, 8, 12} {
		for _, kicks := range []int{1, 8, 32, DefaultMaxKicks} {
			for _, c := range caps {
				m, ok := bucketsFor(c, f, kicks)
				if !ok {
					t.Fatalf("bucketsFor(%d, %d, %d) failed", c, f, kicks)
				}
				if l := sizedLoad(f, kicks, m); l*float64(cuckoohash.Slots*m) < float64(c) {
					t.Fatalf("f=%d, %d kicks, capacity %d: %d buckets, sizedLoad %.2f holds %.1f keys", f, kicks, c, m, l, l*float64(cuckoohash.Slots*m))
				}
			}
		}
	}
}

// TestFailedDrainChangesNothing sets up a full stash in a filter whose count
// is below the load New sizes for (as after deletes), with every slot of the
// table taken so that no walk can succeed: each Insert tries to walk a
// stashed entry home, fails, and returns ErrFull with the encoded filter,
// the walks' random state included, as it was.
func TestFailedDrainChangesNothing(t *testing.T) {
	buf := make([]byte, 16)
	for _, c := range []Config{{FingerprintBits: 12}, {FingerprintBits: 10, SemiSort: true}, {FingerprintBits: 12, MaxKicks: 1}} {
		f, _ := NewBuckets(64, c)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range f.t.M {
			for range cuckoohash.Slots {
				if !f.t.Put(i, uint32(r.Uint64N(1<<f.fbits-1))+1) {
					t.Fatal("setup: put failed")
				}
			}
		}
		for k := range stashSize {
			fp := uint32(k + 1)
			f.stash[k] = stashEntry{b: min(uint64(k), f.alt(uint64(k), fp)), fp: fp}
		}
		f.nstash, f.count = stashSize, 10
		before, _ := f.MarshalBinary()
		for i := range uint64(100) {
			if err := f.Insert(testkit.Key(buf, 7, i)); err != ErrFull {
				t.Fatalf("%s: insert %d into a full table: %v, want ErrFull", cfgName(c), i, err)
			}
			if after, _ := f.MarshalBinary(); string(after) != string(before) {
				t.Fatalf("%s: insert %d failed but changed the filter", cfgName(c), i)
			}
		}
	}
}
