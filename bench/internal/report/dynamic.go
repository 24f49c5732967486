package report

import (
	"errors"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/cuckoo"
)

type dynamic struct {
	*cuckoo.Filter
	fbits int
}

func newDynamic(capacity int, c dynConfig) (dynFilter, error) {
	f, err := cuckoo.New(capacity, c.config())
	return wrapDynamic(f, err, c)
}

// newDynamicBuckets is newDynamic for a table of exactly m buckets, with no
// capacity promise.
func newDynamicBuckets(m int, c dynConfig) (dynFilter, error) {
	f, err := cuckoo.NewBuckets(uint64(m), c.config())
	return wrapDynamic(f, err, c)
}

func (c dynConfig) config() cuckoo.Config {
	return cuckoo.Config{FingerprintBits: c.FingerprintBits, SemiSort: c.SemiSort, MaxKicks: c.MaxKicks, Seed: c.Seed}
}

func wrapDynamic(f *cuckoo.Filter, err error, c dynConfig) (dynFilter, error) {
	if err != nil {
		return nil, err
	}
	fb := c.FingerprintBits
	if c.SemiSort {
		fb--
	}
	return dynamic{f, fb}, nil
}

func (d dynamic) full(err error) bool { return errors.Is(err, cuckoo.ErrFull) }

func (d dynamic) bits() float64 {
	lf := d.LoadFactor()
	if d.Count() == 0 || lf == 0 {
		return 0
	}
	slots := float64(d.Count()) / lf
	return slots * float64(d.fbits)
}
