package bench

import (
	"context"

	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// BlockKind is what an sstable block holds, for counting reads by kind.
type BlockKind uint8

// Block kinds, in the order the read counters index them.
const (
	BlockData   BlockKind = iota
	BlockFilter           // filter blocks
	BlockIndex            // index and top-level index blocks
	BlockValue            // value blocks and their index (older MVCC versions' values)
	BlockOther            // everything else: metaindex, properties, footer, ...
	NumBlockKinds
)

// BlockKinds maps the offset of each data, filter, index and value block of
// the sstable at name to its kind, reading the file through fs directly (pass
// the file system under any counting wrapper). Offsets it leaves out are
// BlockOther. ro needs the Comparer and KeySchemas of tables not written with
// Pebble's defaults.
func BlockKinds(fs vfs.FS, name string, ro sstable.ReaderOptions) (map[int64]BlockKind, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	r, err := sstable.NewReader(context.Background(), readable, ro)
	if err != nil {
		readable.Close()
		return nil, err
	}
	defer r.Close()
	l, err := r.Layout()
	if err != nil {
		return nil, err
	}
	m := map[int64]BlockKind{}
	for _, h := range l.Data {
		m[int64(h.Offset)] = BlockData
	}
	for _, h := range l.Filter {
		m[int64(h.Offset)] = BlockFilter
	}
	for _, h := range l.Index {
		m[int64(h.Offset)] = BlockIndex
	}
	if l.TopIndex.Length > 0 {
		m[int64(l.TopIndex.Offset)] = BlockIndex
	}
	for _, h := range l.ValueBlock {
		m[int64(h.Offset)] = BlockValue
	}
	if l.ValueIndex.Length > 0 {
		m[int64(l.ValueIndex.Offset)] = BlockValue
	}
	return m, nil
}
