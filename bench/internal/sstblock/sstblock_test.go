package sstblock

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestKinds writes a table of many small blocks with a bloom filter and
// checks that Kinds finds its data blocks, its filter block and its index.
func TestKinds(t *testing.T) {
	fs := vfs.NewMem()
	f, err := fs.Create("t.sst", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), sstable.WriterOptions{
		BlockSize:    256,
		FilterPolicy: bloom.FilterPolicy(10),
		FilterType:   pebble.TableFilter,
		TableFormat:  sstable.TableFormatPebblev4,
	})
	for i := range 2000 {
		if err := w.Set(fmt.Appendf(nil, "key%06d", i), []byte("value")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := Kinds(fs, "t.sst", sstable.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var n [NumKinds]int
	for _, k := range m {
		n[k]++
	}
	if n[Data] < 10 || n[Filter] != 1 || n[Index] < 1 {
		t.Errorf("blocks by kind %v: want many data blocks, one filter block, an index", n)
	}
	if _, err := Kinds(fs, "missing.sst", sstable.ReaderOptions{}); err == nil {
		t.Error("a missing table gave no error")
	}
}
