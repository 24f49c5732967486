package static

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

func fixed(m uint64) func(int) uint64 { return func(int) uint64 { return m } }

// TestBuildNeverFails asks for tables too small to hold the keys, for tiny
// key counts and pathological duplicates, and checks every key is found.
func TestBuildNeverFails(t *testing.T) {
	seed := testkit.Seed(t)
	r := rand.New(rand.NewPCG(seed, 4))
	var b Builder
	for _, tc := range []struct {
		n, distinct int
		m           uint64
	}{
		{1, 1, 1}, {4, 4, 1}, {5, 5, 1}, {9, 9, 2}, {100, 100, 1}, {1000, 1000, 200}, {100000, 100000, 25000},
		{3000, 1, 1}, {3000, 7, 1}, {12000, 1000, 1},
	} {
		var l HashList
		vals := make([]uint64, tc.distinct)
		for i := range vals {
			vals[i] = r.Uint64()
		}
		for i := range tc.n {
			l.Add(vals[(i*7919)%tc.distinct])
		}
		data, p := b.Build(nil, &l, 12, true, fixed(tc.m))
		// Distinct hashes with the same buckets and fingerprint share an
		// entry: rare (well under one in a hundred builds here), never more
		// than a few.
		if int(p.Keys) > tc.distinct || int(p.Keys)+3 < tc.distinct {
			t.Errorf("n=%d distinct=%d: placed %d", tc.n, tc.distinct, p.Keys)
		}
		for i := range tc.n {
			if !Lookup(data, p.Buckets, p.Seed, uint(p.FingerprintBits), p.SemiSort, l.At(i)) {
				t.Fatalf("n=%d m=%d: key %d lost", tc.n, tc.m, i)
			}
		}
		l.Reset()
	}
}

// TestBuildLoadThreshold: the builder reaches 97.5% load for f >= 8 without
// growing the table, at sizes from a few thousand keys up to millions, where
// the last strays take a dozen rounds of walks.
func TestBuildLoadThreshold(t *testing.T) {
	seed := testkit.FixedSeed(t, 1) // statistical: fresh with PEBBLE_CUCKOO_LONG=1
	r := rand.New(rand.NewPCG(seed, 5))
	cases := []struct{ n, f int }{{400000, 8}, {400000, 13}, {400000, 16}, {4000000, 13}}
	if testing.Short() {
		cases = []struct{ n, f int }{{100000, 8}, {100000, 13}, {100000, 16}}
	}
	var b Builder
	for _, tc := range cases {
		n, f := tc.n, tc.f
		var l HashList
		for range n {
			l.Add(r.Uint64())
		}
		m := uint64(float64(n)/(4*0.975)) + 1
		data, p := b.Build(nil, &l, f, true, fixed(m))
		load := float64(p.Keys) / float64(4*p.Buckets)
		t.Logf("n=%d f=%d: load %.4f after %d seeds", n, f, load, p.Seed+1)
		if load < 0.975-1e-3 {
			t.Errorf("n=%d f=%d: load %.4f, table grew from %d to %d buckets", n, f, load, m, p.Buckets)
		}
		for i := range n {
			if !Lookup(data, p.Buckets, p.Seed, uint(f), true, l.At(i)) {
				t.Fatalf("n=%d f=%d: key %d lost", n, f, i)
			}
		}
		l.Reset()
	}
}

func TestBuildDeterministicAndAppends(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	var l HashList
	for range 10000 {
		l.Add(r.Uint64())
	}
	var b1, b2 Builder
	a, pa := b1.Build([]byte("prefix"), &l, 10, true, fixed(2600))
	c, pc := b2.Build(nil, &l, 10, true, fixed(2600))
	if pa != pc || !bytes.Equal(a[6:], c) || string(a[:6]) != "prefix" {
		t.Fatal("builds of the same keys differ, or dst was not kept")
	}
}

// TestPrefetch calls the builder's prefetch on every index of a table, from
// the first line to the last, with counts from 0 to a full batch: it must
// return and leave memory as it was.
func TestPrefetch(t *testing.T) {
	bs := make([]slotSet[uint16], 1000)
	r := rand.New(rand.NewPCG(5, 5))
	for i := range bs {
		bs[i].fp[0], bs[i].alt[3] = uint16(r.Uint32()), int16(r.Uint32())
	}
	want := slices.Clone(bs)
	idx := make([]uint32, len(bs))
	for i := range bs {
		idx[i] = uint32(i)
	}
	r.Shuffle(len(bs), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	for n := 0; n <= 32; n++ {
		for k := 0; k+n <= len(bs); k += 32 {
			prefetch(unsafe.Pointer(&bs[0]), &idx[k], n, int(unsafe.Sizeof(bs[0])))
		}
	}
	if !slices.Equal(bs, want) {
		t.Fatal("prefetch changed memory")
	}
}

// TestSlotWords checks the word-at-a-time bucket reads of the 16-bit build
// path (fill16, holds16) against the slot-by-slot ones (fill, clash) on
// buckets filled from the front, with fingerprints and offsets at their
// extremes, queried for entries they hold and entries that differ from one
// of them only in the fingerprint or only in the offset.
func TestSlotWords(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	fps := []uint16{1, 2, 0x7fff, 0x8000, 0x8001, 0xfffe, 0xffff}
	alts := []int16{0, 1, -1, window - 1, -(window - 1), 0x7fff, -0x8000}
	pick := func() (uint16, int16) {
		fp, alt := uint16(1+r.IntN(0xffff)), int16(r.Uint32())
		if r.IntN(2) == 0 {
			fp = fps[r.IntN(len(fps))]
		}
		if r.IntN(2) == 0 {
			alt = alts[r.IntN(len(alts))]
		}
		return fp, alt
	}
	for range 200000 {
		var s slotSet[uint16]
		n := r.IntN(cuckoohash.Slots + 1)
		for j := range n {
			s.fp[j], s.alt[j] = pick()
		}
		if got, want := fill16(&s), fill(&s); got != want {
			t.Fatalf("fill16(%v) = %d, fill = %d", s, got, want)
		}
		fp, alt := pick()
		switch j := r.IntN(cuckoohash.Slots + 1); {
		case j < n && r.IntN(3) == 0:
			fp, alt = s.fp[j], s.alt[j]
		case j < n && r.IntN(2) == 0:
			fp = s.fp[j] // same fingerprint, maybe another offset
		case j < n:
			alt = s.alt[j] // same offset, maybe another fingerprint
		}
		if got, want := holds16(&s, fp, alt) != 0, clash(&s, fp, alt) == 0; got != want {
			t.Fatalf("holds16(%v, %#x, %d) = %v, clash says %v", s, fp, alt, got, want)
		}
	}
}

// walkOne runs the walk of e to its end, alone.
func walkOne[F uint16 | uint32](b *Builder, bs []slotSet[F], m uint64, e stray) (int, walker[F]) {
	w := newWalker(bs, e)
	for {
		if res := w.step(b, bs, m); res != walkGoing {
			return res, w
		}
	}
}

// TestWalkKeepsEntries fills small tables to the brim, entry by entry, each
// by a walk. After every step each entry placed so far must sit exactly once
// in one of its two buckets, with the offset to the other, in a bucket
// filled from the front. Walks of one kick and of several must have been
// taken.
func TestWalkKeepsEntries(t *testing.T) {
	type entry struct{ i1, i2 uint32 }
	kicks := map[bool]int{} // walks of one kick (false) and of more (true)
	for _, m := range []uint64{1, 2, 7, 64, 1000, window + 300} {
		r := rand.New(rand.NewPCG(m, 9))
		b := Builder{rng: 1, labels: make([]uint8, m)}
		bs := make([]slotSet[uint16], m)
		entries := map[uint16]entry{}
		check := func(step string) {
			seen := map[uint16]bool{}
			for i := range bs {
				for j, fp := range bs[i].fp {
					if fp == 0 {
						if j < cuckoohash.Slots-1 && bs[i].fp[j+1] != 0 {
							t.Fatalf("m=%d %s: bucket %d has a hole: %v", m, step, i, bs[i])
						}
						continue
					}
					e, ok := entries[fp]
					a := uint32(other(uint64(i), bs[i].alt[j], m))
					if !ok || seen[fp] || !(uint32(i) == e.i1 && a == e.i2 || uint32(i) == e.i2 && a == e.i1) {
						t.Fatalf("m=%d %s: bucket %d slot %d holds %d with other bucket %d; entry %+v (known %v, seen before %v)",
							m, step, i, j, fp, a, e, ok, seen[fp])
					}
					seen[fp] = true
				}
			}
			if len(seen) != len(entries) {
				t.Fatalf("m=%d %s: %d entries placed, %d in the table", m, step, len(entries), len(seen))
			}
		}
		full := false
		for fp := uint16(1); fp < 0xffff; fp++ {
			i1 := r.Uint64N(m)
			i2 := i1
			if m > window {
				i2 = (i1 + 1 + r.Uint64N(window-1)) % m
			} else if r.IntN(50) != 0 { // now and then both buckets the same
				i2 = r.Uint64N(m)
			}
			res, w := walkOne(&b, bs, m, stray{uint32(fp), uint32(i1), uint32(i2)})
			if w.kicks > 0 {
				kicks[w.kicks > 1]++
			}
			switch res {
			case walkDup:
				t.Fatalf("m=%d: entry %d found before it was placed", m, fp)
			case walkFailed:
				// The table is full. fp may have taken the place of the
				// entry left a stray: that one is out now.
				if len(entries) < int(4*m)*9/10 && m > 2 {
					t.Errorf("m=%d: full at %d entries", m, len(entries))
				}
				full = true
				entries[fp] = entry{uint32(i1), uint32(i2)}
				delete(entries, uint16(w.fp))
			}
			if full {
				break
			}
			entries[fp] = entry{uint32(i1), uint32(i2)}
			if len(entries) < 200 || uint64(fp)%(m/8+1) == 0 {
				check(fmt.Sprintf("after entry %d", fp))
			}
		}
		check("at the end")
	}
	t.Logf("walks of one kick: %d, of more: %d", kicks[false], kicks[true])
	if kicks[false] == 0 || kicks[true] == 0 {
		t.Errorf("walks of one kick: %d, of more: %d; want both", kicks[false], kicks[true])
	}
}

// TestBuildDuplicatesInWalks builds tables near the load threshold from
// keys that come many times each, in random order, so that copies of one
// key wait for the walks together and walk side by side. Each entry must be
// placed once: the count must equal the distinct (fingerprint, buckets)
// entries the keys make, computed here from the build's parameters.
func TestBuildDuplicatesInWalks(t *testing.T) {
	seed := testkit.Seed(t)
	r := rand.New(rand.NewPCG(seed, 10))
	var b Builder
	for rep := range 20 {
		distinct := 2000 + r.IntN(4000)
		copies := 2 + r.IntN(12)
		vals := make([]uint64, 0, distinct*copies)
		for range distinct {
			v := r.Uint64()
			for range copies {
				vals = append(vals, v)
			}
		}
		r.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
		var l HashList
		for _, v := range vals {
			l.Add(v)
		}
		f := 8 + r.IntN(9)
		m := uint64(float64(distinct)/(4*0.97)) + 1
		data, p := b.Build(nil, &l, f, true, fixed(m))
		type entry struct {
			fp     uint32
			i1, i2 uint64
		}
		want := map[entry]bool{}
		for _, v := range vals {
			i1, i2, fp := addr(v, p.Seed, p.Buckets, uint(f))
			want[entry{fp, min(i1, i2), max(i1, i2)}] = true
		}
		if int(p.Keys) != len(want) {
			t.Errorf("rep %d: %d keys x %d copies, f=%d, %d buckets: placed %d entries, want %d",
				rep, distinct, copies, f, p.Buckets, p.Keys, len(want))
		}
		for _, v := range vals {
			if !Lookup(data, p.Buckets, p.Seed, uint(f), true, v) {
				t.Fatalf("rep %d: key %x lost", rep, v)
			}
		}
	}
}
