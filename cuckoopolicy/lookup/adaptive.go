package lookup

import (
	"errors"
	"io"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// DefaultThreshold is Adaptive's Threshold when none is set: the filtered
// path once more than a quarter of recent keys are absent.
//
// A quarter, not a half: with every block cached the two paths cost the same
// near 0.3 absent (BenchmarkLookupInterleaved), and an absent Get whose L6
// block comes from a device costs far more than one from the cache.
const DefaultThreshold = 0.25

// The absent share is an exponentially weighted moving average over about
// the last 1<<weightShift lookups, in fixed point with shareOne for 1.
const (
	shareBits   = 20
	shareOne    = 1 << shareBits
	weightShift = 6
)

// Adaptive takes, lookup by lookup, the cheaper of the reader's own Get and
// Filtered's path for the keys it has been asked lately: while few recent
// keys were absent, Get (which costs less than an iterator for a present
// key); once more were, the iterator that reads L6 filters (which skips the
// L6 data block an absent Get reads). Either path answers alike, with the
// contract of the package's Get.
//
// It learns from every answer, whichever path gave it, so it needs no trial
// lookups: it follows a change in the workload within a few dozen lookups.
//
// The zero value is ready to use: pebble.DefaultComparer, DefaultThreshold,
// and Get until absent keys come. An Adaptive is safe for concurrent use by
// any number of goroutines, over any readers; its estimate describes all the
// keys they ask, so give each workload its own. It must not be copied after
// first use. Concurrent lookups share the estimate, updated without locks: an
// update lost to a race only delays it.
type Adaptive struct {
	// Comparer is the database's comparer, as in Filtered. Nil means
	// pebble.DefaultComparer.
	Comparer *pebble.Comparer

	// Threshold is the share of absent keys above which lookups read the L6
	// filters; 0 means DefaultThreshold. With 1 or more every lookup is the
	// reader's Get, below 0 every one reads the L6 filters. Where an absent Get
	// reads its L6 block from a device rather than the block cache, a lower
	// threshold pays.
	Threshold float64

	absent atomic.Uint32 // share of absent keys among recent lookups, in 1/shareOne
}

// Get returns the value of key in r with the contract of the package's Get
// (and of r.Get), through r.Get or Filtered{Comparer: a.Comparer}.Get.
func (a *Adaptive) Get(r pebble.Reader, key []byte) (value []byte, closer io.Closer, err error) {
	if a.filtered() {
		value, closer, err = Filtered{Comparer: a.Comparer}.Get(r, key)
	} else {
		value, closer, err = r.Get(key)
	}
	a.record(err)
	return value, closer, err
}

// Has reports whether r holds key, through Filtered{Comparer: a.Comparer}.Has
// or r.Get (which also reads the value, as Get always does).
func (a *Adaptive) Has(r pebble.Reader, key []byte) (found bool, err error) {
	if a.filtered() {
		found, err = Filtered{Comparer: a.Comparer}.Has(r, key)
	} else {
		found, err = hasByGet(r, key)
	}
	if err == nil && !found {
		a.record(pebble.ErrNotFound)
	} else {
		a.record(err)
	}
	return found, err
}

// AbsentShare returns the share of absent keys among recent lookups, from 0
// to 1, which the next lookup compares with the Threshold.
func (a *Adaptive) AbsentShare() float64 {
	return float64(a.absent.Load()) / shareOne
}

// filtered reports whether the next lookup takes Filtered's path.
func (a *Adaptive) filtered() bool {
	t := a.Threshold
	if t == 0 {
		t = DefaultThreshold
	}
	return a.AbsentShare() > t
}

// record adds an answer to the estimate: err is nil for a present key,
// pebble.ErrNotFound for an absent one; other errors tell nothing.
func (a *Adaptive) record(err error) {
	var sample uint32
	switch {
	case err == nil:
	case errors.Is(err, pebble.ErrNotFound):
		sample = shareOne
	default:
		return
	}
	s := a.absent.Load()
	a.absent.Store(s - s>>weightShift + sample>>weightShift)
}
