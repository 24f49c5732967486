package cuckoo

// Static is a read-only view of a static filter's packed table, as Build
// writes it. Its methods do not allocate and are safe for concurrent use; it
// never modifies the bytes it views.
type Static struct {
	t    table
	seed uint64
}

// NewStatic validates the parameters against data (the packed table alone)
// and returns a view of it. It returns an error, never panics, on any
// inconsistency: an unsupported width or a length that does not match the
// bucket count.
func NewStatic(data []byte, p StaticParams) (Static, error) {
	t, err := tableOn(data, p.Buckets, uint(p.FingerprintBits), p.SemiSort)
	if err != nil {
		return Static{}, err
	}
	return Static{t: t, seed: p.Seed}, nil
}

// StaticSize returns the length in bytes of the packed table for p, and false
// if p is not a valid table.
func StaticSize(p StaticParams) (int, bool) {
	if !validWidth(p.FingerprintBits) {
		return 0, false
	}
	return tableBytes(p.Buckets, uint(p.FingerprintBits), p.SemiSort)
}

// Contains reports whether the key with hash h (from Hash) may be in the
// filter. An empty filter contains nothing.
func (s *Static) Contains(h uint64) bool {
	if s.t.m == 0 {
		return false
	}
	i1, i2, fp := staticAddr(h, s.seed, s.t.m, s.t.f)
	return s.t.contains(i1, i2, fp)
}
