package pebbletest

import (
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// CountingFS wraps a vfs.FS and counts every ReadAt on the sstables it
// opens, by file base name and offset: Pebble reads a block with one ReadAt
// at the block's offset, so offsets name blocks. Safe for concurrent use.
type CountingFS struct {
	vfs.FS
	mu    sync.Mutex
	reads map[string]map[int64]Reads
}

// Reads is what was read at one offset of one file.
type Reads struct {
	N     int64 // ReadAt calls
	Bytes int64
}

// NewCountingFS wraps fs.
func NewCountingFS(fs vfs.FS) *CountingFS {
	return &CountingFS{FS: fs, reads: map[string]map[int64]Reads{}}
}

// Open implements vfs.FS.
func (fs *CountingFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.Open(name, opts...)
	if err != nil || !strings.HasSuffix(name, ".sst") {
		return f, err
	}
	return &countingFile{File: f, fs: fs, name: fs.PathBase(name)}, nil
}

func (fs *CountingFS) record(name string, off int64, n int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	m := fs.reads[name]
	if m == nil {
		m = map[int64]Reads{}
		fs.reads[name] = m
	}
	r := m[off]
	r.N++
	r.Bytes += int64(n)
	m[off] = r
}

// Reset forgets the reads so far.
func (fs *CountingFS) Reset() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.reads = map[string]map[int64]Reads{}
}

// Each calls fn for every (file, offset) read since the last Reset.
func (fs *CountingFS) Each(fn func(file string, off int64, r Reads)) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for name, offs := range fs.reads {
		for off, r := range offs {
			fn(name, off, r)
		}
	}
}

// Count returns the ReadAt calls since the last Reset whose (file, offset)
// is in blocks, and all others.
func (fs *CountingFS) Count(blocks map[string]map[int64]bool) (in, other int64) {
	fs.Each(func(name string, off int64, r Reads) {
		if blocks[name][off] {
			in += r.N
		} else {
			other += r.N
		}
	})
	return in, other
}

type countingFile struct {
	vfs.File
	fs   *CountingFS
	name string
}

// ReadAt implements vfs.File.
func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.fs.record(f.name, off, n)
	return n, err
}
