package whatif

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/sstable/block"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// errBadFilter reports a table's filter block that whatif will not probe:
// its checksum does not match, or its contents are not a block of the policy
// it is named after. Probing it would give no measurement of that policy,
// and Pebble's bloom reader divides by zero on some malformed blocks.
var errBadFilter = errors.New("whatif: malformed filter block")

var (
	bloomName  = bloom.FilterPolicy(10).Name()
	cuckooName = cuckoopolicy.FilterPolicy(10).Name()
)

// readers are the filter policies whose blocks whatif can probe, by name.
var readers = map[string]pebble.FilterPolicy{
	bloomName:  bloom.FilterPolicy(10),
	cuckooName: cuckoopolicy.FilterPolicy(10),
}

// maxFilterBlock is the largest filter block whatif reads; a larger one
// counts as a filter whatif cannot probe.
const maxFilterBlock = 1 << 31

// readNowFilter sets t's current filter: its policy name and size, and, when
// whatif can probe it, its policy and block, checked. path names the table's
// file in errors.
func readNowFilter(t *table, r *sstable.Reader, f vfs.File, path string) error {
	// The metaindex names the filter; a virtual table's properties may not.
	layout, err := r.Layout()
	if err != nil {
		return fmt.Errorf("whatif: %s: %w", path, err)
	}
	for _, h := range layout.Filter {
		name, ok := strings.CutPrefix(h.Name, "fullfilter.")
		if !ok {
			continue
		}
		t.nowName, t.nowSize = name, h.Length
		p := readers[name]
		if p == nil || h.Length > maxFilterBlock {
			return nil
		}
		b, err := readFilterBlock(r, f, h.Handle)
		if err == nil {
			err = checkFilter(name, b)
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %s: %w", errBadFilter, path, name, err)
		}
		t.now, t.nowBlock = p, b
		return nil
	}
	return nil
}

// readFilterBlock reads the block at h and checks it as Pebble does: the
// checksum in its trailer, and no compression, which Pebble never applies to
// filter blocks.
func readFilterBlock(r *sstable.Reader, f vfs.File, h block.Handle) ([]byte, error) {
	buf := make([]byte, h.Length+block.TrailerLen)
	if _, err := f.ReadAt(buf, int64(h.Offset)); err != nil {
		return nil, err
	}
	if err := block.ValidateChecksum(r.BlockReader().ChecksumType(), buf, h); err != nil {
		return nil, err
	}
	if c := block.CompressionIndicator(buf[h.Length]); c != block.NoCompressionIndicator {
		return nil, fmt.Errorf("compressed (%d)", c)
	}
	return buf[:h.Length], nil
}

// checkFilter returns an error unless b is a block of the named policy that
// its reader can probe.
func checkFilter(name string, b []byte) error {
	switch name {
	case bloomName:
		return checkBloom(b)
	case cuckooName:
		_, err := cuckoopolicy.Inspect(b)
		return err
	}
	return nil
}

// checkBloom returns an error unless Pebble's bloom reader (v2.1.7) can probe
// b without a division by zero. The reader takes b as n bytes of bit lines,
// then a probe count byte, then nLines as a little-endian uint32; it divides
// n by nLines, and takes the hash modulo nLines and modulo 8*(n/nLines) bits
// per line. So 1 <= nLines <= n. Every bit it then reads lies within the n
// bytes. A block of 5 bytes or fewer is Pebble's empty filter, which answers
// "absent" to every key: the reader returns before reading it.
func checkBloom(b []byte) error {
	if len(b) <= 5 {
		return nil
	}
	n := len(b) - 5
	lines := binary.LittleEndian.Uint32(b[n+1:])
	if lines == 0 || uint64(lines) > uint64(n) {
		return fmt.Errorf("bloom filter of %d lines in %d bytes", lines, n)
	}
	return nil
}
