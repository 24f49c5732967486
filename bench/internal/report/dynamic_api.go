package report

// dynFilter is the part of *cuckoo.Filter that the experiments use; only
// dynamic.go touches the cuckoo package's dynamic filter.
type dynFilter interface {
	Insert(key []byte) error
	Contains(key []byte) bool
	Delete(key []byte) bool
	Count() int
	LoadFactor() float64
	// full reports whether err is cuckoo.ErrFull.
	full(err error) bool
	// bits is the bucket table's size in bits, derived from Count and
	// LoadFactor (the API has no size method), or 0 while empty.
	bits() float64
}

// dynConfig mirrors cuckoo.Config.
type dynConfig struct {
	FingerprintBits int
	SemiSort        bool
	MaxKicks        int
	Seed            uint64
}
