package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// TestCorruptTable damages a table's footer, magic number or length: whatif
// must exit with status 1 and a message that names the table, not crash.
// Pebble hands a corrupt table it opens to the logger's Fatalf.
func TestCorruptTable(t *testing.T) {
	src := buildDB(t)
	for _, c := range []struct {
		name   string
		damage func(b []byte) []byte
		want   string
	}{
		{"bad magic number", func(b []byte) []byte { b[len(b)-1] ^= 0xff; return b }, "bad magic number"},
		{"bad format version", func(b []byte) []byte { b[len(b)-9] ^= 0x7f; return b }, "unsupported pebble format version"},
		{"footer zeroed", func(b []byte) []byte { clear(b[len(b)-64:]); return b }, "bad magic number"},
		{"footer handles garbled", func(b []byte) []byte {
			for i := len(b) - 50; i < len(b)-12; i++ {
				b[i] ^= 0x5a
			}
			return b
		}, "invalid table"},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, "size mismatch"},
		{"empty", func(b []byte) []byte { return nil }, "size mismatch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, src)
			path := newest(t, dir, "*.sst")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, c.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := runCmd(t, "-db", dir)
			checkFailure(t, code, errOut, path, c.want)
		})
	}
}

// fakeFilter is a filter policy that takes another policy's name and writes
// the block it is given: a well-formed table whose filter block is not what
// its name says.
type fakeFilter struct {
	name  string
	block string
}

func (p fakeFilter) Name() string                                      { return p.name }
func (p fakeFilter) MayContain(pebble.FilterType, []byte, []byte) bool { return true }
func (p fakeFilter) NewWriter(pebble.FilterType) pebble.FilterWriter   { return p }
func (p fakeFilter) AddKey([]byte)                                     {}
func (p fakeFilter) Finish(buf []byte) []byte                          { return append(buf, p.block...) }

// fakeDB writes a database whose one table's filter block is written by p.
func fakeDB(t *testing.T, p pebble.FilterPolicy) (dir, table string) {
	t.Helper()
	dir = t.TempDir()
	o := &pebble.Options{Logger: pebbletest.QuietLogger{}}
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = p
		o.Levels[i].FilterType = pebble.TableFilter
	}
	db, err := pebble.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if err := db.Set(fmt.Appendf(nil, "key%07d", i), []byte("v"), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, newest(t, dir, "*.sst")
}

// filterOffset returns the offset of the table's filter block in its file.
func filterOffset(t *testing.T, path string) uint64 {
	t.Helper()
	f, err := vfs.Default.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sstable.NewReader(context.Background(), readable, sstable.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	layout, err := r.Layout()
	if err != nil {
		t.Fatal(err)
	}
	if len(layout.Filter) != 1 {
		t.Fatalf("%s has %d filter blocks, want 1", path, len(layout.Filter))
	}
	return layout.Filter[0].Offset
}

// TestBadFilter gives whatif tables whose filter block is named after a
// policy whatif probes but is not a block of it, or fails its checksum:
// whatif must exit with status 1 and a message that names the table. Pebble's
// bloom reader divides by zero on some of these blocks.
func TestBadFilter(t *testing.T) {
	lines := func(n int, lines uint32) string {
		return string(binary.LittleEndian.AppendUint32(append(make([]byte, n), 6), lines))
	}
	bloomName := bloom.FilterPolicy(10).Name()
	for _, c := range []struct {
		name   string
		policy pebble.FilterPolicy
		want   string
	}{
		{"bloom with 0 lines", fakeFilter{bloomName, lines(64, 0)}, "0 lines in 64 bytes"},
		{"bloom with more lines than bytes", fakeFilter{bloomName, lines(64, 65)}, "65 lines in 64 bytes"},
		{"cuckoo garbage", fakeFilter{cuckoopolicy.FilterPolicy(10).Name(), "not a cuckoo filter block"}, "malformed filter block"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, table := fakeDB(t, c.policy)
			_, errOut, code := runCmd(t, "-db", dir)
			checkFailure(t, code, errOut, table, c.want)
		})
	}
	t.Run("bloom block checksum", func(t *testing.T) {
		dir, table := fakeDB(t, bloom.FilterPolicy(10))
		b, err := os.ReadFile(table)
		if err != nil {
			t.Fatal(err)
		}
		b[filterOffset(t, table)+10] ^= 0x10
		if err := os.WriteFile(table, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := runCmd(t, "-db", dir)
		checkFailure(t, code, errOut, table, "checksum mismatch")
	})
}
