// Package sstblock classifies the blocks of an sstable by what they hold
// (data, filter, index, value, other), from the table's own layout, so that
// a counting file system can tell which reads a filter saved.
package sstblock

import (
	"context"

	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Kind is what an sstable block holds, for counting reads by kind; it
// indexes arrays of NumKinds counters.
type Kind uint8

// Block kinds, in the order the read counters index them.
const (
	Data   Kind = iota
	Filter      // filter blocks
	Index       // index and top-level index blocks
	Value       // value blocks and their index (older MVCC versions' values)
	Other       // everything else: metaindex, properties, footer, ...
	NumKinds
)

// Kinds maps the offset of each data, filter, index and value block of
// the sstable at name to its kind, reading the file through fs directly (pass
// the file system under any counting wrapper). Offsets it leaves out are
// Other. ro needs the Comparer and KeySchemas of tables not written with
// Pebble's defaults.
func Kinds(fs vfs.FS, name string, ro sstable.ReaderOptions) (map[int64]Kind, error) {
	r, err := Open(fs, name, ro)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	l, err := r.Layout()
	if err != nil {
		return nil, err
	}
	m := map[int64]Kind{}
	for _, h := range l.Data {
		m[int64(h.Offset)] = Data
	}
	for _, h := range l.Filter {
		m[int64(h.Offset)] = Filter
	}
	for _, h := range l.Index {
		m[int64(h.Offset)] = Index
	}
	if l.TopIndex.Length > 0 {
		m[int64(l.TopIndex.Offset)] = Index
	}
	for _, h := range l.ValueBlock {
		m[int64(h.Offset)] = Value
	}
	if l.ValueIndex.Length > 0 {
		m[int64(l.ValueIndex.Offset)] = Value
	}
	return m, nil
}

// Open opens the sstable at name through fs with ro; closing the reader
// closes the file.
func Open(fs vfs.FS, name string, ro sstable.ReaderOptions) (*sstable.Reader, error) {
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
	return r, nil
}
