package workload

import (
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/cockroachkvs"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// bytesWritten is the sstable bytes db's flushes and compactions have
// written since it was opened.
func bytesWritten(db *pebble.DB) uint64 {
	m := db.Metrics()
	var n uint64
	for l := range m.Levels {
		n += m.Levels[l].TableBytesFlushed + m.Levels[l].TableBytesCompacted
	}
	return n
}

// options returns the options of one measured database. frozen turns
// automatic compactions off (the write burst, and every measurement, so that
// the LSM stays as loaded).
func (r *runner) options(s shapeSpec, p policyCfg, st *ioStats, cache *pebble.Cache, frozen bool) *pebble.Options {
	o := &pebble.Options{
		FS:                          ioFS{FS: vfs.Default, st: st},
		Cache:                       cache,
		FormatMajorVersion:          pebble.FormatNewest,
		Logger:                      pebbletest.QuietLogger{},
		DisableWAL:                  true, // the loader flushes explicitly
		MemTableSize:                uint64(max(4<<20, 2*r.cfg.FlushEvery*(defaultValueLen+64))),
		LBaseMaxBytes:               r.cfg.LBaseMaxBytes,
		L0StopWritesThreshold:       1 << 20,
		DisableAutomaticCompactions: frozen,
	}
	for l := range o.TargetFileSizes {
		o.TargetFileSizes[l] = r.cfg.FileSize
	}
	if s.mvcc() {
		o.Comparer = comparer(s)
		o.KeySchema = cockroachkvs.KeySchema.Name
		o.KeySchemas = sstable.MakeKeySchemas(&cockroachkvs.KeySchema)
		o.BlockPropertyCollectors = cockroachkvs.BlockPropertyCollectors
	}
	p.apply(o)
	return o
}

// comparer is the comparer of shape s's databases: CockroachDB's in the
// MVCC key space, nil (Pebble's default) otherwise.
func comparer(s shapeSpec) *pebble.Comparer {
	if s.mvcc() {
		return &cockroachkvs.Comparer
	}
	return nil
}

// quiesce waits until no flush or compaction has run for three polls in a
// row, 10 ms apart, or until a minute has passed.
func quiesce(db *pebble.DB) {
	deadline := time.Now().Add(time.Minute)
	quiet, last := 0, int64(-1)
	for quiet < 3 && time.Now().Before(deadline) {
		m := db.Metrics()
		n := m.Compact.Count + m.Flush.Count
		if m.Compact.NumInProgress == 0 && m.Flush.NumInProgress == 0 && n == last {
			quiet++
		} else {
			quiet = 0
		}
		last = n
		time.Sleep(10 * time.Millisecond)
	}
}

// organic is one database loaded organically: batches, flushes and the
// compactions Pebble picks.
type organic struct {
	cfg       policyCfg
	dir       string
	st        *ioStats
	db        *pebble.DB
	wall, cpu time.Duration // of its own turns
	written   uint64        // sstable bytes its flushes and compactions wrote
	shape     lsmShape
}

// turn runs fn as o's turn, adding its wall and CPU time to o's. Only one
// database works at a time (each turn ends quiesced), so the process's CPU
// time during a turn is that database's.
func (o *organic) turn(fn func() error) error {
	t0, c0 := time.Now(), processCPU()
	err := fn()
	o.wall += time.Since(t0)
	o.cpu += processCPU() - c0
	return err
}

// loadLockstep loads the shape's first n entries into a new database for
// each of dbs, in lockstep: chunk after chunk (flushEvery entries; in the write burst,
// one of BurstTables overlapping flushes), each database in turn, starting
// with dbs[first%len(dbs)], gets the chunk in batches of 1,000 entries, a
// flush and a wait until its compactions quiesce. The write burst first
// reopens each database with automatic compactions off. Every database
// gets the same batches, flushes and pacing; its times are its turns'.
func (r *runner) loadLockstep(s shapeSpec, dbs []*organic, first int, n uint64, flushEvery int) (err error) {
	defer func() {
		for _, o := range dbs {
			if o.db != nil {
				if cerr := o.db.Close(); err == nil {
					err = cerr
				}
				o.db = nil
			}
		}
	}()
	open := func(o *organic, frozen bool) (err error) {
		o.db, err = pebble.Open(o.dir, r.options(s, o.cfg, o.st, nil, frozen))
		return err
	}
	order := append(slices.Clone(dbs[first%len(dbs):]), dbs[:first%len(dbs)]...)
	ks := r.keyspace(s)
	steady := n
	if s.Burst {
		steady = uint64(float64(n) * (1 - burstShare))
	}
	chunks := func(from, to uint64, size int, frozen bool) error {
		for lo := from; lo < to; lo += uint64(size) {
			hi := min(to, lo+uint64(size))
			for _, o := range order {
				if r.stopped() {
					return errStopped
				}
				if err := o.turn(func() error { return r.chunk(s, ks, o, lo, hi, n) }); err != nil {
					return fmt.Errorf("%s: %w", o.cfg.Name, err)
				}
			}
			r.prog.Tick("%d/%d entries into %d database(s)", hi, n, len(dbs))
		}
		return nil
	}
	for _, o := range order {
		if err := o.turn(func() error { return open(o, false) }); err != nil {
			return err
		}
	}
	if err := chunks(0, steady, flushEvery, false); err != nil {
		return err
	}
	if s.Burst {
		for _, o := range order {
			err := o.turn(func() error {
				o.written += bytesWritten(o.db)
				err := o.db.Close()
				o.db = nil
				if err != nil {
					return err
				}
				return open(o, true)
			})
			if err != nil {
				return err
			}
		}
		if err := chunks(steady, n, max(1, int(n-steady)/r.cfg.BurstTables), true); err != nil {
			return err
		}
	}
	for _, o := range dbs {
		if o.shape, err = readShape(o.db); err != nil {
			return err
		}
		o.written += bytesWritten(o.db)
		o.shape.Written = o.written
	}
	return nil
}

// chunk writes entries from..to-1 of the shape's n into o's database in
// batches of 1,000, flushes, and waits until its compactions quiesce.
func (r *runner) chunk(s shapeSpec, ks keyspace, o *organic, from, to, n uint64) error {
	key, val := make([]byte, 0, 128), make([]byte, ks.valueLen())
	b := o.db.NewBatch()
	for j := from; j < to; j++ {
		var i uint64
		v := 0
		if s.mvcc() {
			per := n / mvccVersions
			v, i = int(j/per), j%per
			key = ks.versionKey(key[:0], i, v)
		} else {
			i = j
			key = ks.key(key[:0], i)
		}
		if err := b.Set(key, value(val, len(val), i, v), nil); err != nil {
			return err
		}
		if b.Count() >= 1000 {
			if err := b.Commit(pebble.NoSync); err != nil {
				return err
			}
			b = o.db.NewBatch()
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return err
	}
	if err := o.db.Flush(); err != nil {
		return err
	}
	quiesce(o.db)
	return nil
}
