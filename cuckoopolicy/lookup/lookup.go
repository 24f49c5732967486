package lookup

import (
	"bytes"
	"io"

	"github.com/cockroachdb/pebble/v2"
)

// l6Filters are the options of every lookup's iterator. Pebble copies them
// and never writes through the pointer, so one value serves every call
// without an allocation.
var l6Filters = pebble.IterOptions{UseL6Filters: true}

// Get returns the value of key in r, reading the filters of every level, L6
// included. It has db.Get's contract: pebble.ErrNotFound if r does not hold
// the key; otherwise the value, which the caller must not modify and which
// stays valid until the returned closer is closed; the caller must close it,
// exactly once, before r's database closes. r may be a *pebble.DB, a
// *pebble.Snapshot, an indexed *pebble.Batch (an unindexed one gives
// pebble.ErrNotIndexed) or any other pebble.Reader. The key may be modified
// once Get returns.
//
// Get compares keys with pebble.DefaultComparer; a database with another
// comparer needs Filtered{Comparer: ...}.Get. It is Filtered{}.Get. A key
// whose prefix is empty, such as a nil key, is r.Get's (see the package doc).
//
// Unlike db.Get, whose value is nil when it cannot be read (the error then
// comes from the closer), Get returns that error.
func Get(r pebble.Reader, key []byte) (value []byte, closer io.Closer, err error) {
	return Filtered{}.Get(r, key)
}

// Has reports whether r holds key, reading the filters of every level and no
// value. It is Get without the value, with the same readers and comparer,
// and nothing to close: (false, nil) for an absent key. It is Filtered{}.Has.
func Has(r pebble.Reader, key []byte) (bool, error) {
	return Filtered{}.Has(r, key)
}

// Filtered is Get and Has for a database with a comparer of its own.
//
// The zero value uses pebble.DefaultComparer. A Filtered is a value with no
// state: it may be copied and used from any number of goroutines.
type Filtered struct {
	// Comparer is the database's comparer (pebble.Options.Comparer), whose
	// Equal tells whether the key SeekPrefixGE lands on is the key asked: with
	// a Split that keeps only a prefix it may be another version. Nil means
	// pebble.DefaultComparer.
	Comparer *pebble.Comparer
}

// Get is the package's Get with f.Comparer.
func (f Filtered) Get(r pebble.Reader, key []byte) (value []byte, closer io.Closer, err error) {
	if f.emptyPrefix(key) {
		return r.Get(key)
	}
	it, err := r.NewIter(&l6Filters)
	if err != nil {
		return nil, nil, err
	}
	if !f.seek(it, key) {
		if err := it.Close(); err != nil {
			return nil, nil, err
		}
		return nil, nil, pebble.ErrNotFound
	}
	v, err := it.ValueAndErr()
	if err != nil {
		_ = it.Close() // returns err again
		return nil, nil, err
	}
	return v, it, nil
}

// Has is the package's Has with f.Comparer.
func (f Filtered) Has(r pebble.Reader, key []byte) (bool, error) {
	if f.emptyPrefix(key) {
		return hasByGet(r, key)
	}
	it, err := r.NewIter(&l6Filters)
	if err != nil {
		return false, err
	}
	// The iterator's values are lazy: a value kept out of the data block (in
	// a value block or a blob file) is read only if asked for, and Has never
	// asks.
	found := f.seek(it, key)
	if err := it.Close(); err != nil {
		return false, err
	}
	return found, nil
}

// emptyPrefix reports whether key's prefix is empty, as the empty key's is.
// Pebble's iterators take an empty prefix for none: SeekPrefixGE seeks past
// the prefix, and Pebble's invariant checks (on in race builds) panic on the
// key it finds. Such a key goes to the reader's Get, which has no such limit.
func (f Filtered) emptyPrefix(key []byte) bool {
	if len(key) == 0 {
		return true
	}
	c := f.Comparer
	return c != nil && c.Split != nil && c.Split(key) == 0
}

// hasByGet is Has through the reader's Get.
func hasByGet(r pebble.Reader, key []byte) (bool, error) {
	_, closer, err := r.Get(key)
	switch err {
	case nil:
		return true, closer.Close()
	case pebble.ErrNotFound:
		return false, nil
	default:
		return false, err
	}
}

// seek positions it at key and reports whether it found it.
func (f Filtered) seek(it *pebble.Iterator, key []byte) bool {
	return it.SeekPrefixGE(key) && f.equal(it.Key(), key)
}

// equal is the comparer's Equal, filled in as Pebble fills an incomplete
// comparer in.
func (f Filtered) equal(a, b []byte) bool {
	c := f.Comparer
	if c == nil {
		return bytes.Equal(a, b)
	}
	if c.Equal != nil {
		return c.Equal(a, b)
	}
	return c.EnsureDefaults().Equal(a, b)
}
