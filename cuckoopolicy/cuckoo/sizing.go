package cuckoo

import (
	"math"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
)

// walkLoad is the load New sizes a table for when the eviction walk is
// what limits it: below the load at which the first insert fails (see
// TestFillToFull and TestCapacityGuarantee, and the loads measured in
// bench/NOTES.md).
func walkLoad(f int) float64 {
	switch f {
	case 2, 3, 4:
		return 0.93
	case 5:
		return 0.94
	default:
		return 0.95
	}
}

// kicksLoads bounds the load New sizes a table for when few kicks are what
// limit it: a walk of k kicks (each with its one-step lookahead) fails more
// often the fuller the table, and the more inserts a table takes, the sooner
// one of them fails, so the load at the first failure falls with both fewer
// kicks and more buckets. From 2^8 to 2^20 buckets it fell by 0.21 at 1
// kick, 0.08 at 8 and 0.02 at 64, by less with every doubling, and from 2^20
// to 2^22 by 0.002 at 100 to 500 kicks. Each entry is the lowest load at the
// first ErrFull over two runs of a 12-bit filter of 2^20 buckets, less a
// margin for larger tables (0.06 up to 16 kicks, less above; the loads
// measured are in bench/NOTES.md). From 200 kicks on, walkLoad is the lower
// bound. TestCapacityGuaranteeShortWalks checks New's promise with it.
var kicksLoads = [...]struct {
	kicks int
	load  float64
}{
	{1, 0.53}, {2, 0.56}, {3, 0.62}, {4, 0.66}, {6, 0.72}, {8, 0.77},
	{12, 0.80}, {16, 0.83}, {24, 0.85}, {32, 0.87}, {48, 0.89}, {64, 0.90},
	{100, 0.92}, {150, 0.935}, {200, 1},
}

// kicksLoad returns the load bound of kicksLoads for walks of at most kicks
// evictions: that of the largest entry not above kicks.
func kicksLoad(kicks int) float64 {
	load := kicksLoads[0].load
	for _, e := range kicksLoads {
		if kicks >= e.kicks {
			load = e.load
		}
	}
	return load
}

// saturationLoad is the load New sizes a table of m buckets for when narrow
// fingerprints are what limit it: a fingerprint and a pair of buckets (a
// class, of which there are (2^f-1)*m/2) hold at most eight keys, and a key
// whose class is full cannot be placed. At load a a class holds a Poisson
// number of keys with mean 8a/(2^f-1) (simulation agrees with that model);
// saturationLoad is the highest load, in steps of 0.01, at which a filter
// has less than a 10^-6 chance of a class being asked for a ninth key. It
// matters for f <= 6: f = 2 to 4 always, f = 5 beyond about 10^4 buckets,
// f = 6 beyond about 10^6.
func saturationLoad(f int, m float64) float64 {
	vals := float64(uint64(1)<<f - 1)
	classes := vals * m / 2
	a := walkLoad(f)
	for ; a > 0.01; a -= 0.01 {
		if classes*poissonTail9(8*a/vals) <= 1e-6 {
			break
		}
	}
	return a
}

// poissonTail9 returns P(X >= 9) for X Poisson with mean lam <= 8, summed
// from the tail's side so that small values keep their precision.
func poissonTail9(lam float64) float64 {
	term := math.Exp(-lam)
	for k := 1; k <= 9; k++ {
		term *= lam / float64(k)
	}
	sum := 0.0
	for k := 10; k < 60 && term > sum*1e-17; k++ {
		sum += term
		term *= lam / float64(k)
	}
	return sum
}

// maxTableBytes bounds the table New and NewBuckets allocate (64 TiB), so
// that an absurd capacity is an error rather than a panic in make.
const maxTableBytes = 1 << 46

// minBuckets is the smallest table New makes.
const minBuckets = 2

// sizedLoad bounds from above the load bucketsFor sized a table of m buckets
// for: below it, a filter holds fewer keys than New can have promised room
// for. bucketsFor settles on its load at a bucket count one less than m, or m
// itself, before rounding m up to even; saturationLoad does not rise with
// the bucket count, so it is taken at m-1.
func sizedLoad(f, kicks int, m uint64) float64 {
	return min(walkLoad(f), kicksLoad(kicks), saturationLoad(f, float64(max(m, 2)-1)))
}

// bucketsFor returns the bucket count New uses for capacity keys of width f,
// placed by walks of at most kicks evictions: enough slots for capacity at
// the lowest of walkLoad, kicksLoad and saturationLoad,
// plus two standard deviations' worth (small tables vary more in the load
// they reach), rounded up to an even count so that the alternate bucket is
// an involution without fixed points.
func bucketsFor(capacity, f, kicks int) (uint64, bool) {
	if capacity < 1 {
		return 0, false
	}
	size := func(load float64) float64 {
		n := float64(capacity) / load
		n += 2 * math.Sqrt(n)
		return math.Ceil(n / cuckoohash.Slots)
	}
	// A lower load means more buckets and so more classes: iterate to a
	// fixed point (it takes two or three rounds).
	load := min(walkLoad(f), kicksLoad(kicks))
	m := size(load)
	for range 8 {
		l := saturationLoad(f, m)
		if l >= load {
			break
		}
		load = l
		m = size(load)
	}
	if m > MaxBuckets {
		return 0, false
	}
	b := uint64(m)
	b += b & 1
	return max(b, minBuckets), true
}
