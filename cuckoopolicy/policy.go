package cuckoopolicy

import (
	"errors"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// name is written into every sstable's metaindex and OPTIONS file.
const name = "pebble_cuckoo.v1"

// FilterPolicy is a cuckoo-filter policy with a bits-per-key budget.
// (skeleton: the engine lands next; this stub never filters anything.)
type FilterPolicy int

// Policy is an explicit configuration.
type Policy struct {
	FingerprintBits int
	SemiSort        bool
	LoadFactor      float64
}

var (
	_ pebble.FilterPolicy = FilterPolicy(0)
	_ pebble.FilterPolicy = Policy{}
)

// Name implements the pebble.FilterPolicy interface.
func (p FilterPolicy) Name() string { return name }

// MayContain implements the pebble.FilterPolicy interface.
func (p FilterPolicy) MayContain(ftype pebble.FilterType, filter, key []byte) bool { return true }

// NewWriter implements the pebble.FilterPolicy interface.
func (p FilterPolicy) NewWriter(ftype pebble.FilterType) pebble.FilterWriter { return &stubWriter{} }

// Name implements the pebble.FilterPolicy interface.
func (p Policy) Name() string { return name }

// MayContain implements the pebble.FilterPolicy interface.
func (p Policy) MayContain(ftype pebble.FilterType, filter, key []byte) bool { return true }

// NewWriter implements the pebble.FilterPolicy interface.
func (p Policy) NewWriter(ftype pebble.FilterType) pebble.FilterWriter { return &stubWriter{} }

type stubWriter struct{}

func (*stubWriter) AddKey(key []byte)        {}
func (*stubWriter) Finish(dst []byte) []byte { return append(dst, 0) }

// Info describes a filter block.
type Info struct {
	FingerprintBits int
	SemiSorted      bool
	Buckets, Keys   int
	LoadFactor      float64
	BitsPerKey      float64
}

// Inspect decodes a filter block's parameters.
func Inspect(filter []byte) (Info, error) { return Info{}, errors.New("cuckoopolicy: not implemented") }

// ParseFilterPolicy returns the policy for a name found in an OPTIONS file.
func ParseFilterPolicy(n string) (pebble.FilterPolicy, error) {
	switch n {
	case name:
		return FilterPolicy(10), nil
	case bloom.FilterPolicy(10).Name():
		return bloom.FilterPolicy(10), nil
	case "none":
		return pebble.NoFilterPolicy, nil
	}
	return nil, errors.New("cuckoopolicy: unknown filter policy " + n)
}
