package cuckoopolicy

import (
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// A table of a few dozen keys gets from bloom.FilterPolicy(B) one 64-byte
// line (B bits a key rounded up to an odd number of lines), in which a bloom
// filter of that load has few false positives; a cuckoo table in the same
// bytes, less its 16-byte trailer, takes a narrow fingerprint. Where the
// model says so, FilterPolicy(B) writes Pebble's bloom table itself, byte
// for byte as bloom.FilterPolicy(B) would, with no trailer: the raw bloom
// block (FORMAT.md). Its last byte, the high byte of the line count, is 0,
// where every block with a trailer ends in 'c' or 'O'.

// rawBloomMaxKeys is the most distinct keys a raw bloom block is written
// for: the writer keeps a copy of a table's first keys up to it, since
// Pebble's bloom writer hashes keys, not this package's hashes. From 64
// keys and 10 bits a key up the cuckoo table has fewer false positives at
// bloom's bytes (TestBloomBytesRates).
const rawBloomMaxKeys = 64

// rawBloomMaxBits is the largest budget with a table size where the model
// prefers bloom's table (TestRawBloomBlock checks it): above it the writer
// keeps no keys.
const rawBloomMaxBits = 14

// rawBloom reports whether the block for n distinct keys is a raw bloom
// block: for a budget of bits per key, on a table of at most
// rawBloomMaxKeys keys where bloom.FilterPolicy's table has fewer false
// positives by the model than the cuckoo table in its bytes.
func (c config) rawBloom(n uint64) bool {
	return c.keepsKeys() && n > 0 && n <= rawBloomMaxKeys && c.bloomBetter(n)
}

// keepsKeys reports whether c's writer keeps a table's first keys, for a
// raw bloom block.
func (c config) keepsKeys() bool { return c.bitsPerKey > 0 && c.bitsPerKey <= rawBloomMaxBits }

// bloomBetter reports whether, by the model, bloom.FilterPolicy's table for
// n distinct keys has fewer false positives than c's cuckoo table in the
// same bytes.
func (c config) bloomBetter(n uint64) bool { return bloomRate(c.bitsPerKey, n) < c.cuckooRate(n) }

// isRawBloom reports whether b ends as a raw bloom block does: a last byte
// of 0, which no trailer has. Whether the rest is a sound bloom table is
// bloomTableOK's to say.
func isRawBloom(b []byte) bool { return len(b) > 0 && b[len(b)-1] == 0 }

// smallKeys keeps a copy of the first rawBloomMaxKeys distinct keys a
// writer is given, for the raw bloom block. Writers take one from
// smallPool at their first key and give it back in Finish: Pebble makes a
// writer per table, and a buffer grown from nil for each cost a table of
// 1,000 keys a fifth of its build time.
type smallKeys struct {
	data []byte
	ends []int
}

var smallPool = sync.Pool{New: func() any { return new(smallKeys) }}

func (s *smallKeys) add(key []byte) {
	s.data = append(s.data, key...)
	s.ends = append(s.ends, len(s.data))
}

// appendBloom appends bloom.FilterPolicy(bits)'s table of the kept keys
// to dst.
func (s *smallKeys) appendBloom(dst []byte, bits int) []byte {
	w := bloom.FilterPolicy(bits).NewWriter(pebble.TableFilter)
	start := 0
	for _, end := range s.ends {
		w.AddKey(s.data[start:end])
		start = end
	}
	return w.Finish(dst)
}

// release empties s and gives it back to smallPool, unless it has grown
// past what 64 keys of 1 KiB take.
func (s *smallKeys) release() {
	if s == nil || cap(s.data) > rawBloomMaxKeys<<10 {
		return
	}
	s.data, s.ends = s.data[:0], s.ends[:0]
	smallPool.Put(s)
}
