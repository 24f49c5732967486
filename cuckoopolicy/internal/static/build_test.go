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

// walkOne runs the walk of e to its end, alone, in lane 0.
func walkOne[F uint16 | uint32](b *Builder, bs []slotSet[F], m uint64, e stray) (int, *walks[F]) {
	var ws walks[F]
	ws.start(0, bs, e, true)
	for {
		if res := ws.step(0, b, bs, m); res != walkGoing {
			return res, &ws
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
			res, ws := walkOne(&b, bs, m, stray{uint32(fp), uint32(i1), uint32(i2)})
			if ws.kicks[0] > 0 {
				kicks[ws.kicks[0] > 1]++
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
				delete(entries, uint16(ws.fp[0]))
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

// TestAddrs checks the addressing that the greedy pass spells out (addrs)
// against addr and offset, at every width, in tables smaller and larger than
// the window and up to the largest static table.
func TestAddrs(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	ms := []uint64{1, 2, 3, 250, window - 1, window, window + 1, 2*window - 1, 2*window + 5, 1e6, maxStaticBuckets - 3}
	var hs [greedyBatch]uint64
	var b16 batch[uint16]
	var b32 batch[uint32]
	for range 2000 {
		m, seed, f := ms[r.IntN(len(ms))], r.Uint64N(64), uint(cuckoohash.MinFingerprintBits+r.IntN(cuckoohash.MaxFingerprintBits-cuckoohash.MinFingerprintBits+1))
		for j := range hs {
			hs[j] = r.Uint64()
		}
		n := 1 + r.IntN(greedyBatch)
		ii, offs := &b32.ii, &b32.offs
		if f <= 16 {
			b16.addrs(hs[:n], m, seed, f)
			ii, offs = &b16.ii, &b16.offs
		} else {
			b32.addrs(hs[:n], m, seed, f)
		}
		for j := range n {
			i1, i2, fp := addr(hs[j], seed, m, f)
			got := b32.fps[j]
			if f <= 16 {
				got = uint32(b16.fps[j])
			}
			if uint64(ii[j][0]) != i1 || uint64(ii[j][1]) != i2 || got != fp || offs[j] != offset(i1, i2, m) {
				t.Fatalf("m=%d seed=%d f=%d hash %#x: addrs gives buckets %d, %d, fingerprint %d, offset %d; addr %d, %d, %d, offset %d",
					m, seed, f, hs[j], ii[j][0], ii[j][1], got, offs[j], i1, i2, fp, offset(i1, i2, m))
			}
		}
	}
}

// entries counts the distinct entries (fingerprint and the unordered pair of
// buckets) the hashes of l make under p: what an exact build places.
func entries(l *HashList, p Params) int {
	type entry struct {
		fp     uint32
		i1, i2 uint64
	}
	set := map[entry]bool{}
	for i := range l.Len() {
		i1, i2, fp := addr(l.At(i), p.Seed, p.Buckets, uint(p.FingerprintBits))
		set[entry{fp, min(i1, i2), max(i1, i2)}] = true
	}
	return len(set)
}

// requireFound fails unless every hash of l is found in the table.
func requireFound(t *testing.T, what string, data []byte, p Params, l *HashList) {
	t.Helper()
	for i := range l.Len() {
		if !Lookup(data, p.Buckets, p.Seed, uint(p.FingerprintBits), p.SemiSort, l.At(i)) {
			t.Fatalf("%s: key %d (%#x) of %d lost", what, i, l.At(i), l.Len())
		}
	}
}

// TestBuildCopies builds lists where hashes come many times each (up to 40,
// more than the 8 slots of an entry's two buckets), in runs, in random order
// and sorted, a few hashes alone or thousands, at every width and at loads
// from low to far past the threshold. Every key is found and every entry
// (fingerprint and buckets) is placed exactly once, whether the greedy pass
// or the walks met its copies.
func TestBuildCopies(t *testing.T) {
	seed := testkit.Seed(t)
	r := rand.New(rand.NewPCG(seed, 16))
	var b Builder
	reps := 60
	if testing.Short() {
		reps = 20
	}
	for rep := range reps {
		distinct := 1 + r.IntN(3000)
		if rep%5 == 0 {
			distinct = 1 + r.IntN(3)
		}
		maxCopies := 2 + r.IntN(39)
		var vals []uint64
		for range distinct {
			v := r.Uint64()
			for range 1 + r.IntN(maxCopies) {
				vals = append(vals, v)
			}
		}
		switch rep % 3 {
		case 0: // runs of copies, as written
		case 1:
			r.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
		case 2:
			slices.Sort(vals)
		}
		counts := map[uint64]int{}
		most := 0
		var l HashList
		for _, v := range vals {
			l.Add(v)
			counts[v]++
			most = max(most, counts[v])
		}
		f := cuckoohash.MinFingerprintBits + r.IntN(cuckoohash.MaxFingerprintBits-cuckoohash.MinFingerprintBits+1)
		load := []float64{0.5, 0.9, 0.97, 1.5, 1e9}[r.IntN(5)]
		m := uint64(float64(distinct)/(4*load)) + 1
		what := fmt.Sprintf("rep %d: %d hashes, %d distinct, up to %d copies, f=%d, m=%d", rep, len(vals), distinct, most, f, m)
		data, p := b.Build(nil, &l, f, r.IntN(2) == 0, fixed(m))
		requireFound(t, what, data, p, &l)
		e := entries(&l, p)
		if int(p.Keys) != e {
			t.Fatalf("%s: %d entries placed, %d distinct", what, p.Keys, e)
		}
	}
}

// greedyRef is the greedy pass written plainly, one key and one slot at a
// time: each key's entry goes in the emptier of its two buckets, the first on
// a tie, unless either holds it already; it is a stray when both are full.
func greedyRef[F uint16 | uint32](bs []slotSet[F], l *HashList, m, seed uint64, f uint) (int, []stray) {
	placed, strays := 0, []stray{}
	for k := range l.Len() {
		i1, i2, fp := addr(l.At(k), seed, m, f)
		o1, o2 := offset(i1, i2, m), offset(i2, i1, m)
		if clash(&bs[i1], F(fp), o1) == 0 || clash(&bs[i2], F(fp), o2) == 0 {
			continue
		}
		i, o := i1, o1
		if fill(&bs[i2]) < fill(&bs[i1]) {
			i, o = i2, o2
		}
		if c := fill(&bs[i]); c < cuckoohash.Slots {
			bs[i].fp[c], bs[i].alt[c] = F(fp), o
			placed++
		} else {
			strays = append(strays, stray{fp, uint32(i1), uint32(i2)})
		}
	}
	return placed, strays
}

// TestGreedyPass: the greedy pass, in a table in the cache and, prefetching,
// in one beyond it, leaves the table and the strays greedyRef does, and
// skips the same copies, for 16- and 32-bit slots, in tables smaller and
// larger than the window.
func TestGreedyPass(t *testing.T) {
	seed := testkit.Seed(t)
	r := rand.New(rand.NewPCG(seed, 17))
	for _, m := range []uint64{1, 3, 250, window, window + 1000} {
		n := int(float64(4*m)*0.97) + 3
		var l HashList
		for i := range n {
			if i > 0 && r.IntN(20) == 0 {
				l.Add(l.At(r.IntN(i))) // a copy, for the test to find
			} else {
				l.Add(r.Uint64())
			}
		}
		seed := r.Uint64N(8)
		for _, f := range []uint{uint(8 + r.IntN(9)), uint(17 + r.IntN(16))} {
			for _, far := range []bool{false, true} {
				var b Builder
				var placed, wantPlaced int
				var same bool
				var wantStrays []stray
				if f <= 16 {
					want := make([]slotSet[uint16], m)
					wantPlaced, wantStrays = greedyRef(want, &l, m, seed, f)
					bs := resetTable(&b, &b.small, m, seed)
					b.far = far
					placed = greedy(&b, bs, &l, m, seed, f)
					same = slices.Equal(bs, want)
				} else {
					want := make([]slotSet[uint32], m)
					wantPlaced, wantStrays = greedyRef(want, &l, m, seed, f)
					bs := resetTable(&b, &b.wide, m, seed)
					b.far = far
					placed = greedy(&b, bs, &l, m, seed, f)
					same = slices.Equal(bs, want)
				}
				if placed != wantPlaced || !same || !slices.Equal(b.todo, wantStrays) {
					t.Fatalf("m=%d f=%d far=%v: greedy placed %d, left %d strays; greedyRef placed %d, left %d (tables equal: %v)",
						m, f, far, placed, len(b.todo), wantPlaced, len(wantStrays), same)
				}
			}
		}
	}
}

// TestBuildFar builds a table too large for the cache (at least
// batchBuckets), where the greedy pass works in batches and the walks
// prefetch, from distinct hashes and copies, at 16- and 32-bit slots: every
// key is found and every entry placed once.
func TestBuildFar(t *testing.T) {
	seed := testkit.Seed(t)
	r := rand.New(rand.NewPCG(seed, 18))
	n := 4*batchBuckets*95/100 + 1000
	var l HashList
	for i := range n {
		if i > 0 && r.IntN(50) == 0 {
			l.Add(l.At(r.IntN(i)))
		} else {
			l.Add(r.Uint64())
		}
	}
	var b Builder
	for _, f := range []int{10, 16, 24} {
		m := uint64(float64(n)/(4*0.95)) + 1
		data, p := b.Build(nil, &l, f, true, fixed(m))
		if p.Buckets < batchBuckets {
			t.Fatalf("f=%d: %d buckets, want at least %d", f, p.Buckets, batchBuckets)
		}
		requireFound(t, fmt.Sprintf("f=%d", f), data, p, &l)
		if e := entries(&l, p); int(p.Keys) != e {
			t.Fatalf("f=%d: %d entries placed, %d distinct", f, p.Keys, e)
		}
	}
}

// TestEncodeSemi16 checks encodeSemi16 against cuckoohash.SemiWord, through
// encodeStream, at every width of 16-bit slots, on buckets with every number
// of empty slots and with fingerprints that share nibbles and high bits.
func TestEncodeSemi16(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for f := cuckoohash.MinFingerprintBits; f <= 16; f++ {
		for _, m := range []uint64{1, 2, 3, 7, 100, 1001} {
			bs := make([]slotSet[uint16], m)
			for i := range bs {
				pool := [2]uint16{uint16(1 + r.IntN(1<<f-1)), uint16(1 + r.IntN(1<<f-1))}
				for j := range r.IntN(cuckoohash.Slots + 1) {
					fp := uint16(1 + r.IntN(1<<f-1))
					switch r.IntN(4) {
					case 0:
						fp = pool[r.IntN(2)]
					case 1:
						fp = fp&^15 | pool[0]&15
					}
					bs[i].fp[j] = fp
				}
			}
			size, _ := cuckoohash.TableBytes(m, uint(f), true)
			want, got := make([]byte, size), make([]byte, size)
			tw, _ := cuckoohash.TableOn(want, m, uint(f), true)
			tg, _ := cuckoohash.TableOn(got, m, uint(f), true)
			encodeStream(&tw, bs, true)
			encodeSemi16(&tg, bs)
			if !bytes.Equal(got, want) {
				t.Fatalf("f=%d m=%d: encodeSemi16 differs from SemiWord", f, m)
			}
		}
	}
}
