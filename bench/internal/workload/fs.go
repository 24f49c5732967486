package workload

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/sstblock"
)

// Block kinds a read of an sstable is classified into, from the table's
// layout (sstblock.Kinds).
const (
	kindData   = sstblock.Data
	kindFilter = sstblock.Filter
	kindIndex  = sstblock.Index
	kindValue  = sstblock.Value
	kindOther  = sstblock.Other
	numKinds   = sstblock.NumKinds
)

// ioStats counts the reads of one database's sstables by block kind and adds
// the device delay to each of them. Its counters only grow; readers take
// differences.
type ioStats struct {
	reads   [numKinds]atomic.Int64
	bytes   [numKinds]atomic.Int64
	waited  atomic.Int64                                       // ns the reads spent in the device delay
	delay   atomic.Int64                                       // ns added to each sstable ReadAt; 0: none
	layouts atomic.Pointer[map[string]map[int64]sstblock.Kind] // file base name -> block offset -> kind
}

// ioSnap is a snapshot of ioStats' counters.
type ioSnap struct {
	Reads  [numKinds]int64
	Bytes  [numKinds]int64
	Waited int64 // ns in the device delay, all reads together
}

func (s *ioStats) snap() ioSnap {
	var x ioSnap
	for k := range numKinds {
		x.Reads[k] = s.reads[k].Load()
		x.Bytes[k] = s.bytes[k].Load()
	}
	x.Waited = s.waited.Load()
	return x
}

func (x ioSnap) sub(y ioSnap) ioSnap {
	for k := range numKinds {
		x.Reads[k] -= y.Reads[k]
		x.Bytes[k] -= y.Bytes[k]
	}
	x.Waited -= y.Waited
	return x
}

func (x *ioSnap) add(y ioSnap) {
	for k := range numKinds {
		x.Reads[k] += y.Reads[k]
		x.Bytes[k] += y.Bytes[k]
	}
	x.Waited += y.Waited
}

func (s *ioStats) record(name string, off int64, n int) {
	kind := kindOther
	if m := s.layouts.Load(); m != nil {
		if k, ok := (*m)[name][off]; ok {
			kind = k
		}
	}
	s.reads[kind].Add(1)
	s.bytes[kind].Add(int64(n))
	if d := s.delay.Load(); d > 0 {
		t0 := time.Now()
		deviceWait(time.Duration(d))
		s.waited.Add(int64(time.Since(t0)))
	}
}

// ioFS wraps a vfs.FS (vfs.Default for every measured database): the files
// it opens whose names end in ".sst" count their reads in st and wait st's
// delay after each one, as a slower device would.
type ioFS struct {
	vfs.FS
	st *ioStats
}

// Open implements vfs.FS.
func (fs ioFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.Open(name, opts...)
	if err != nil || !strings.HasSuffix(name, ".sst") {
		return f, err
	}
	return &ioFile{File: f, name: filepath.Base(name), st: fs.st}, nil
}

type ioFile struct {
	vfs.File
	name string
	st   *ioStats
}

// ReadAt implements vfs.File.
func (f *ioFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.st.record(f.name, off, n)
	return n, err
}

// learnLayouts reads the layout of every table of db from the underlying FS
// (not counted) and installs it in st, so that reads are classified by block
// kind. Pebble reads one block with one ReadAt at the block's offset.
func learnLayouts(db *pebble.DB, fs vfs.FS, dir string, o *pebble.Options, st *ioStats) error {
	levels, err := db.SSTables()
	if err != nil {
		return err
	}
	m := map[string]map[int64]sstblock.Kind{}
	for _, tables := range levels {
		for _, t := range tables {
			name := fmt.Sprintf("%s.sst", t.BackingSSTNum)
			l, err := sstblock.Kinds(fs, filepath.Join(dir, name), sstable.ReaderOptions{Comparer: o.Comparer, KeySchemas: o.KeySchemas})
			if err != nil {
				return fmt.Errorf("layout of %s: %w", name, err)
			}
			m[name] = l
		}
	}
	st.layouts.Store(&m)
	return nil
}

// calibrateDelay returns the mean time deviceWait(d) takes.
func calibrateDelay(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	const n = 200
	start := time.Now()
	for range n {
		deviceWait(d)
	}
	return time.Since(start) / n
}
