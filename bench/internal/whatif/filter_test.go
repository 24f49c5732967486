package whatif

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// bloomBlock returns a bloom block of n line bytes (all ones), a probe
// count of 6 and lines as its line count.
func bloomBlock(n int, lines uint32) []byte {
	b := make([]byte, n, n+5)
	for i := range b {
		b[i] = 0xff
	}
	b = append(b, 6)
	return binary.LittleEndian.AppendUint32(b, lines)
}

func TestCheckBloom(t *testing.T) {
	w := bloom.FilterPolicy(10).NewWriter(pebble.TableFilter)
	for i := range 1000 {
		w.AddKey(userKey(i))
	}
	real := w.Finish(nil)
	for _, c := range []struct {
		desc  string
		block []byte
		ok    bool
	}{
		{"empty: no bytes", nil, true},
		{"empty: 5 bytes, 0 lines", bloomBlock(0, 0), true},
		{"written by Pebble for 1000 keys", real, true},
		{"64 bytes, 1 line of 64", bloomBlock(64, 1), true},
		{"64 bytes, 2 lines of 32", bloomBlock(64, 2), true},
		{"1 byte, 1 line of 1", bloomBlock(1, 1), true},
		{"64 bytes, 64 lines of 1", bloomBlock(64, 64), true},
		{"64 bytes, 0 lines: n/nLines divides by zero", bloomBlock(64, 0), false},
		{"64 bytes, 65 lines: 0 bits per line, h%0", bloomBlock(64, 65), false},
		{"1 byte, 0xffffffff lines", bloomBlock(1, 0xffffffff), false},
	} {
		err := checkBloom(c.block)
		if (err == nil) != c.ok {
			t.Errorf("%s: checkBloom = %v, want ok %v", c.desc, err, c.ok)
		}
		if err == nil {
			probeBloom(c.block) // must not panic
		}
	}
	for i := range 1000 {
		if !bloom.FilterPolicy(10).MayContain(pebble.TableFilter, real, userKey(i)) {
			t.Fatalf("Pebble's block lacks key %d", i)
		}
	}
}

// probeBloom asks Pebble's bloom reader about a few keys in b.
func probeBloom(b []byte) {
	for i := range 64 {
		bloom.FilterPolicy(10).MayContain(pebble.TableFilter, b, fmt.Appendf(nil, "probe%d", i))
	}
}

// FuzzCheckBloom checks that Pebble's bloom reader never panics on a block
// checkBloom accepts.
func FuzzCheckBloom(f *testing.F) {
	f.Add(bloomBlock(64, 1))
	f.Add(bloomBlock(64, 0))
	f.Add(bloomBlock(64, 65))
	f.Add(bloomBlock(3, 2))
	f.Fuzz(func(t *testing.T, b []byte) {
		if checkBloom(b) == nil {
			probeBloom(b)
		}
	})
}
