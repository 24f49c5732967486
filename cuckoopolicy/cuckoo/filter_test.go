package cuckoo

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/binomial"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// dynConfigs covers both layouts, every kind of width (sub-4-bit plain, the
// SWAR widths up to 16, the two-load widths above) and both ends.
var dynConfigs = []Config{
	{FingerprintBits: 2}, {FingerprintBits: 3}, {FingerprintBits: 4}, {FingerprintBits: 4, SemiSort: true},
	{FingerprintBits: 5, SemiSort: true}, {FingerprintBits: 7}, {FingerprintBits: 8, SemiSort: true},
	{FingerprintBits: 12}, {FingerprintBits: 13, SemiSort: true}, {FingerprintBits: 15}, {FingerprintBits: 16},
	{FingerprintBits: 16, SemiSort: true}, {FingerprintBits: 17}, {FingerprintBits: 17, SemiSort: true},
	{FingerprintBits: 24, SemiSort: true}, {FingerprintBits: 31}, {FingerprintBits: 32},
	{FingerprintBits: 32, SemiSort: true},
}

func cfgName(c Config) string {
	s := "f=" + strconv.Itoa(c.FingerprintBits)
	if c.SemiSort {
		s += "/semi"
	}
	return s
}

// TestAltInvolution checks the alternate bucket at small, odd-half and
// beyond-2^32 bucket counts: in range, an involution, never a fixed point.
func TestAltInvolution(t *testing.T) {
	r := rand.New(rand.NewPCG(testkit.Seed(t), 1))
	for _, m := range []uint64{2, 4, 6, 52, 78, 1000, 1 << 20, 1<<33 + 2, 3 << 40, MaxBuckets} {
		f := Filter{t: cuckoohash.Table{M: m}, half: m / 2}
		for range 2000 {
			i := r.Uint64N(m)
			fp := uint32(r.Uint64N(1<<32-1)) + 1
			a := f.alt(i, fp)
			if a >= m || a == i || f.alt(a, fp) != i {
				t.Fatalf("m=%d i=%d fp=%d: alt %d, back %d", m, i, fp, a, f.alt(a, fp))
			}
			// The documented formula, (m - i - r) mod m: saved filters
			// depend on these exact values.
			if r := 2*cuckoohash.Reduce(fpHash(fp), m/2) + 1; a != (2*m-i-r)%m {
				t.Fatalf("m=%d i=%d fp=%d: alt %d, want %d", m, i, fp, a, (2*m-i-r)%m)
			}
		}
	}
}

// TestAltReach checks that at small widths the alternate offsets of all
// fingerprints reach both odd and even steps of the bucket index: a weak hash
// of the fingerprint once kept every offset r in one residue class for some
// bucket counts (m = 52, 78, 104...), which cut the load such tables reached.
func TestAltReach(t *testing.T) {
	for _, fb := range []uint{4, 5, 6} {
		for m := uint64(8); m <= 400; m += 2 {
			f := Filter{t: cuckoohash.Table{M: m}, half: m / 2}
			var odd, even bool
			for fp := uint32(1); fp < 1<<fb; fp++ {
				k := cuckoohash.Reduce(fpHash(fp), f.half)
				odd, even = odd || k%2 == 1, even || k%2 == 0
			}
			if !odd || !even {
				t.Errorf("f=%d m=%d: the offsets of all fingerprints share a parity", fb, m)
			}
		}
	}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		capacity int
		cfg      Config
	}{
		{0, Config{}}, {-1, Config{}}, {math.MaxInt, Config{}},
		{10, Config{FingerprintBits: 1}}, {10, Config{FingerprintBits: 33}}, {10, Config{FingerprintBits: -4}},
		{10, Config{FingerprintBits: 3, SemiSort: true}}, {10, Config{MaxKicks: -1}},
		{10, Config{MaxKicks: MaxKicksLimit + 1}}, {min(1<<47, math.MaxInt), Config{FingerprintBits: 32}},
	} {
		if f, err := New(tc.capacity, tc.cfg); !errors.Is(err, ErrConfig) || f != nil {
			t.Errorf("New(%d, %+v) = %v, %v; want ErrConfig", tc.capacity, tc.cfg, f, err)
		}
	}
	for _, m := range []uint64{0, MaxBuckets} {
		if f, err := NewBuckets(m, Config{}); !errors.Is(err, ErrConfig) || f != nil {
			t.Errorf("NewBuckets(%d) = %v, %v; want ErrConfig", m, f, err)
		}
	}
	if f, err := NewBuckets(1<<10+1, Config{FingerprintBits: 5}); err != nil || f.Buckets() != 1<<10+2 {
		t.Errorf("NewBuckets(1025): %v", err)
	}
	f, err := New(1, Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{FingerprintBits: DefaultFingerprintBits, MaxKicks: DefaultMaxKicks}
	if f.Config() != want || f.Buckets() != minBuckets {
		t.Errorf("New(1, Config{}): config %+v, %d buckets", f.Config(), f.Buckets())
	}
}

func TestZeroFilter(t *testing.T) {
	var f Filter
	if f.Contains([]byte("a")) || f.Delete([]byte("a")) || f.Count() != 0 || f.LoadFactor() != 0 || f.Buckets() != 0 {
		t.Error("zero Filter is not empty")
	}
	if err := f.Insert([]byte("a")); err != ErrFull {
		t.Errorf("Insert on a zero Filter: %v", err)
	}
	f.Reset()
	data, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	g, _ := New(10, Config{})
	if err := g.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if g.Buckets() != 0 || g.Config() != (Config{}) {
		t.Errorf("zero round trip gave %d buckets, %+v", g.Buckets(), g.Config())
	}
}

// keyOracle is the multiset oracle of the randomized filter tests: copies held per
// key index, the indexes with copies (to pick one), and the total.
type keyOracle struct {
	held  map[uint64]int
	keys  []uint64
	total int
}

func newKeyOracle() *keyOracle { return &keyOracle{held: map[uint64]int{}} }

// add records one more copy of k.
func (o *keyOracle) add(k uint64) {
	if o.held[k] == 0 {
		o.keys = append(o.keys, k)
	}
	o.held[k]++
	o.total++
}

// pick returns the position in keys and the index of a random held key.
func (o *keyOracle) pick(r *rand.Rand) (int, uint64) {
	j := r.IntN(len(o.keys))
	return j, o.keys[j]
}

// remove drops one copy of the key at position j of keys.
func (o *keyOracle) remove(j int) {
	k := o.keys[j]
	o.total--
	if o.held[k]--; o.held[k] == 0 {
		delete(o.held, k)
		o.keys[j] = o.keys[len(o.keys)-1]
		o.keys = o.keys[:len(o.keys)-1]
	}
}

// dynOracle runs random inserts (new keys and copies), deletes of held keys
// and lookups on f against a multiset, checking Count after every step and
// every held key now and then. Inserts that fail must leave the filter as it
// was; ops is the number of steps.
func dynOracle(t *testing.T, f *Filter, r *rand.Rand, stream uint64, ops int) {
	t.Helper()
	o := newKeyOracle()
	next := uint64(0)
	buf := make([]byte, 16)
	checkAll := func(step int) {
		for k := range o.held {
			if !f.Contains(testkit.Key(buf, stream, k)) {
				t.Fatalf("step %d: false negative for key %d (%d copies)", step, k, o.held[k])
			}
		}
	}
	failed := false // the last insert failed: delete next
	for step := range ops {
		op := r.IntN(10)
		if failed && len(o.keys) > 0 {
			op, failed = 9, false
		}
		switch {
		case op < 7 || len(o.keys) == 0: // a new key, or another copy of a held one
			k := next
			if op >= 5 && len(o.keys) > 0 {
				_, k = o.pick(r)
			} else {
				next++
			}
			if err := f.Insert(testkit.Key(buf, stream, k)); err == nil {
				o.add(k)
			} else if err != ErrFull {
				t.Fatalf("step %d: Insert: %v", step, err)
			} else {
				failed = true
			}
		default: // delete a copy of a held key
			j, k := o.pick(r)
			if !f.Delete(testkit.Key(buf, stream, k)) {
				t.Fatalf("step %d: Delete of held key %d (%d copies) found nothing", step, k, o.held[k])
			}
			o.remove(j)
		}
		if f.Count() != o.total {
			t.Fatalf("step %d: Count %d, oracle %d", step, f.Count(), o.total)
		}
		if step%512 == 0 {
			checkAll(step)
		}
	}
	checkAll(ops)
	// Deleting everything empties the filter.
	for k, n := range o.held {
		for range n {
			if !f.Delete(testkit.Key(buf, stream, k)) {
				t.Fatalf("final delete of key %d found nothing", k)
			}
		}
	}
	if f.Count() != 0 || f.nstash != 0 {
		t.Fatalf("after deleting everything: count %d, stash %d", f.Count(), f.nstash)
	}
	for i := range f.t.M {
		if f.t.Bucket(i) != [4]uint32{} {
			t.Fatalf("after deleting everything: bucket %d holds %v", i, f.t.Bucket(i))
		}
	}
}

// TestOracle runs random operations on every layout, on a roomy filter and
// on one kept near full, where evictions, the stash and failed inserts
// happen.
func TestOracle(t *testing.T) {
	seed := testkit.Seed(t)
	ops := 4000
	if testing.Short() {
		ops = 1500
	}
	if testkit.Long() {
		ops = 100000
	}
	for ci, c := range dynConfigs {
		for _, capacity := range []int{300, 4000} {
			t.Run(cfgName(c)+"/cap="+strconv.Itoa(capacity), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, uint64(ci)))
				c := c
				c.Seed = seed
				f, err := New(capacity, c)
				if err != nil {
					t.Fatal(err)
				}
				dynOracle(t, f, r, seed^uint64(ci), ops)
			})
		}
	}
}

// TestDuplicates: eight copies of a key fit, the ninth is refused, Delete
// takes them out one at a time.
func TestDuplicates(t *testing.T) {
	for _, c := range dynConfigs {
		f, err := New(100, c)
		if err != nil {
			t.Fatal(err)
		}
		key := []byte("duplicate")
		for i := range 8 {
			if err := f.Insert(key); err != nil {
				t.Fatalf("%s: copy %d: %v", cfgName(c), i+1, err)
			}
		}
		if err := f.Insert(key); err != ErrFull {
			t.Fatalf("%s: ninth copy: %v", cfgName(c), err)
		}
		for i := range 8 {
			if !f.Contains(key) || !f.Delete(key) {
				t.Fatalf("%s: delete %d failed", cfgName(c), i+1)
			}
		}
		if f.Contains(key) || f.Delete(key) || f.Count() != 0 {
			t.Fatalf("%s: key still there after 8 deletes", cfgName(c))
		}
	}
}

// TestDeleteNeverInserted pins the documented hazard: deleting a key that
// was never inserted removes another key's fingerprint when the two share a
// fingerprint and buckets.
func TestDeleteNeverInserted(t *testing.T) {
	f, err := New(8, Config{FingerprintBits: 4})
	if err != nil {
		t.Fatal(err)
	}
	a := []byte("a")
	ha := Hash(a)
	loA, fpA := f.class(ha)
	var b []byte
	for i := 0; b == nil; i++ {
		k := []byte("b" + strconv.Itoa(i))
		if lo, fp := f.class(Hash(k)); lo == loA && fp == fpA {
			b = k
		}
	}
	if err := f.Insert(a); err != nil {
		t.Fatal(err)
	}
	if !f.Delete(b) || f.Contains(a) {
		t.Fatalf("deleting %q, never inserted, should have removed %q", b, a)
	}
}

// TestFPR measures the false-positive rate of filters loaded to 95%
// against theory, 1 - (1 - 1/(2^f-1))^(8*load) (about 8*load/2^f): not in a
// tail of the binomial count of probability below 1e-9, and at most 1.3 times
// theory. A statistical test: a fixed seed by default, a fresh one when long.
func TestFPR(t *testing.T) {
	seed := testkit.FixedSeed(t, 1)
	n, queries := 100000, 1000000
	if testing.Short() {
		n, queries = 20000, 200000
	}
	if testkit.Long() {
		n, queries = 1000000, 10000000
	}
	for _, c := range []Config{{FingerprintBits: 8}, {FingerprintBits: 12}, {FingerprintBits: 13, SemiSort: true}, {FingerprintBits: 16}} {
		c.Seed = seed
		f, err := New(n, c)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 16)
		for i := uint64(0); f.LoadFactor() < 0.95; i++ {
			if err := f.Insert(testkit.Key(buf, seed, i)); err != nil {
				t.Fatal(err)
			}
		}
		fp := 0
		for i := range uint64(queries) {
			if f.Contains(testkit.Key(buf, ^seed, i)) {
				fp++
			}
		}
		lf := f.LoadFactor()
		p := testkit.FPR(c.FingerprintBits, lf)
		sd := math.Sqrt(p * (1 - p) / float64(queries))
		got := float64(fp) / float64(queries)
		t.Logf("%s: load %.4f, fpr %.5f%%, theory %.5f%% (8*load/2^f %.5f%%), ratio %.3f, sd %.5f%%",
			cfgName(c), lf, 100*got, 100*p, 100*8*lf/math.Ldexp(1, c.FingerprintBits), got/p, 100*sd)
		if binomial.Unlikely(queries, p, fp, 1e-9) {
			t.Errorf("%s: %d false positives in %d, theory %.1f", cfgName(c), fp, queries, p*float64(queries))
		}
		if got > 1.3*p && 1.3*p-p > 5*sd {
			t.Errorf("%s: fpr %.5f%% above 1.3 x theory %.5f%%", cfgName(c), 100*got, 100*p)
		}
	}
}

// TestSemiSortEquivalence runs the same operations on a plain and a
// semi-sorted filter of each width: every lookup, of held keys and of
// others, answers the same, since membership depends only on which
// fingerprints are stored, not where. Keys are inserted more than once,
// which New's sizing (for distinct keys) does not cover: copies of a key
// can only go in its two buckets. So the filters get room for twice the 900
// entries held at most, and a class (a fingerprint and its pair of buckets)
// can still come to hold the eight entries it has room for: the test skips
// a ninth, which no cuckoo filter can take. Every other insert must succeed.
func TestSemiSortEquivalence(t *testing.T) {
	seed := testkit.Seed(t)
	r := rand.New(rand.NewPCG(seed, 2))
	buf := make([]byte, 16)
	type class struct {
		lo uint64
		fp uint32
	}
	for fb := MinFingerprintBits; fb <= MaxFingerprintBits; fb++ {
		plain, err1 := New(1800, Config{FingerprintBits: fb, Seed: seed})
		semi, err2 := New(1800, Config{FingerprintBits: fb, Seed: seed, SemiSort: true})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		var held []uint64
		entries := map[class]int{}
		classOf := func(k uint64) class {
			lo, fp := plain.class(Hash(testkit.Key(buf, seed, k)))
			return class{lo, fp}
		}
		for step := range 3000 {
			if len(held) < 900 && (r.IntN(3) > 0 || len(held) == 0) {
				k := r.Uint64N(2000)
				if entries[classOf(k)] == 2*cuckoohash.Slots {
					continue
				}
				e1, e2 := plain.Insert(testkit.Key(buf, seed, k)), semi.Insert(testkit.Key(buf, seed, k))
				if e1 != nil || e2 != nil {
					t.Fatalf("f=%d step %d: inserts at load %.3f: %v, %v", fb, step, plain.LoadFactor(), e1, e2)
				}
				held = append(held, k)
				entries[classOf(k)]++
			} else {
				j := r.IntN(len(held))
				k := held[j]
				held[j] = held[len(held)-1]
				held = held[:len(held)-1]
				entries[classOf(k)]--
				if !plain.Delete(testkit.Key(buf, seed, k)) || !semi.Delete(testkit.Key(buf, seed, k)) {
					t.Fatalf("f=%d step %d: delete failed", fb, step)
				}
			}
			q := testkit.Key(buf, seed, r.Uint64N(4000))
			if plain.Contains(q) != semi.Contains(q) {
				t.Fatalf("f=%d step %d: plain and semi-sorted disagree on key %x", fb, step, q)
			}
		}
		for k := range uint64(1 << 14) {
			q := testkit.Key(buf, seed+1, k)
			if plain.Contains(q) != semi.Contains(q) {
				t.Fatalf("f=%d: plain and semi-sorted disagree on probe %d", fb, k)
			}
		}
		if plain.Count() != semi.Count() {
			t.Fatalf("f=%d: counts %d, %d", fb, plain.Count(), semi.Count())
		}
	}
}

// TestReset empties a filter and leaves it as New made it.
func TestReset(t *testing.T) {
	f, _ := New(500, Config{FingerprintBits: 10, Seed: 5})
	fresh, _ := f.MarshalBinary()
	fillUntilFull(t, f, 1)
	f.Reset()
	if f.Count() != 0 || f.LoadFactor() != 0 || f.Contains(testkit.Key(make([]byte, 16), 1, 0)) {
		t.Fatal("Reset left keys")
	}
	if got, _ := f.MarshalBinary(); string(got) != string(fresh) {
		t.Fatal("Reset filter encodes differently from a new one")
	}
}

// TestDeterministic: the same operations give the same bytes.
func TestDeterministic(t *testing.T) {
	var enc [2][]byte
	for k := range enc {
		f, _ := New(1000, Config{FingerprintBits: 11, SemiSort: true, Seed: 9})
		fillUntilFull(t, f, 7)
		enc[k], _ = f.MarshalBinary()
	}
	if string(enc[0]) != string(enc[1]) {
		t.Fatal("two runs of the same inserts differ")
	}
}

func TestAllocs(t *testing.T) {
	f, _ := New(10000, Config{})
	fillUntilFull(t, f, 3) // the eviction path's scratch is allocated
	for i := range 100 {
		f.Delete(testkit.Key(make([]byte, 16), 3, uint64(i)))
	}
	key := make([]byte, 16)
	i := uint64(0)
	if n := testing.AllocsPerRun(1000, func() {
		testkit.Key(key, 3, i)
		i++
		f.Contains(key)
		if f.Insert(key) == nil {
			f.Delete(key)
		}
	}); n != 0 {
		t.Errorf("%v allocations per Contains/Insert/Delete", n)
	}
}

// BenchmarkFilter times Insert into a filter of 2^20 keys' capacity (filled
// to capacity, then reset), and Contains of held and absent keys and Delete
// on one filled to capacity; keys are 16 bytes, hashing included.
func BenchmarkFilter(b *testing.B) {
	const n = 1 << 20
	keys := make([]byte, 16*2*n) // n held keys, then n absent ones
	for i := range uint64(2 * n) {
		testkit.Key(keys[16*i:], 42, i)
	}
	key := func(i int) []byte { return keys[16*i : 16*i+16] }
	for _, c := range []Config{{FingerprintBits: 12}, {FingerprintBits: 13, SemiSort: true}, {FingerprintBits: 16}} {
		name := "n=1M/" + cfgName(c)
		b.Run(name+"/op=insert", func(b *testing.B) {
			f, _ := New(n, c)
			i := 0
			for b.Loop() {
				if i == n {
					f.Reset()
					i = 0
				}
				if err := f.Insert(key(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		full, _ := New(n, c)
		for i := range n {
			full.Insert(key(i))
		}
		for _, pos := range []bool{true, false} {
			b.Run(name+"/op=contains/present="+strconv.FormatBool(pos), func(b *testing.B) {
				i, off := 0, 0
				if !pos {
					off = n
				}
				for b.Loop() {
					full.Contains(key(off + i))
					if i++; i == n {
						i = 0
					}
				}
			})
		}
		b.Run(name+"/op=delete+insert", func(b *testing.B) {
			i := 0
			for b.Loop() {
				full.Delete(key(i))
				full.Insert(key(i))
				if i++; i == n {
					i = 0
				}
			}
		})
	}
}

// class returns the identity of the fingerprint the key with hash h stores:
// its fingerprint and the lower of its two buckets. Keys of one class are
// indistinguishable to the filter; t.m > 0.
func (f *Filter) class(h uint64) (lo uint64, fp uint32) {
	i1, i2, fp := f.addr(h)
	return min(i1, i2), fp
}

// TestLimitsMatchTable: the limits this package documents are the packed
// table's.
func TestLimitsMatchTable(t *testing.T) {
	if MinFingerprintBits != cuckoohash.MinFingerprintBits || MaxFingerprintBits != cuckoohash.MaxFingerprintBits ||
		MaxBuckets != cuckoohash.MaxBuckets {
		t.Fatalf("limits %d, %d, %d; the table's are %d, %d, %d", MinFingerprintBits, MaxFingerprintBits, uint64(MaxBuckets),
			cuckoohash.MinFingerprintBits, cuckoohash.MaxFingerprintBits, uint64(cuckoohash.MaxBuckets))
	}
}
