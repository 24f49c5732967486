package sstableintegration

import (
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// countingFS wraps a vfs.FS and records every ReadAt on an sstable: the
// file's base name and the offset. Pebble reads a block with one ReadAt at
// the block's offset, so offsets identify blocks.
type countingFS struct {
	vfs.FS
	mu    sync.Mutex
	reads map[string]map[int64]int // file -> offset -> reads
}

func newCountingFS(fs vfs.FS) *countingFS {
	return &countingFS{FS: fs, reads: map[string]map[int64]int{}}
}

// Open implements vfs.FS.
func (fs *countingFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.Open(name, opts...)
	if err != nil || !strings.HasSuffix(name, ".sst") {
		return f, err
	}
	return &countingFile{File: f, fs: fs, name: fs.PathBase(name)}, nil
}

func (fs *countingFS) record(name string, off int64) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	m := fs.reads[name]
	if m == nil {
		m = map[int64]int{}
		fs.reads[name] = m
	}
	m[off]++
}

// reset forgets the reads so far.
func (fs *countingFS) reset() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.reads = map[string]map[int64]int{}
}

// count returns the reads whose (file, offset) is in blocks, and all others.
func (fs *countingFS) count(blocks map[string]map[int64]bool) (in, other int64) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for name, offs := range fs.reads {
		for off, n := range offs {
			if blocks[name][off] {
				in += int64(n)
			} else {
				other += int64(n)
			}
		}
	}
	return in, other
}

type countingFile struct {
	vfs.File
	fs   *countingFS
	name string
}

// ReadAt implements vfs.File.
func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.record(f.name, off)
	return f.File.ReadAt(p, off)
}
