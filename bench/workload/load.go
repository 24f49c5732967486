package workload

import (
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/cockroachkvs"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/sstable_integration/pebbletest"
)

// shapeSpec is one LSM shape.
type shapeSpec struct {
	Name  string
	MVCC  bool // CockroachDB keys with several versions each
	Burst bool // the last part written as overlapping L0 tables, compactions off
}

var allShapes = []shapeSpec{
	{Name: "steady"},
	{Name: "burst", Burst: true},
	{Name: "mvcc", MVCC: true},
}

// mvccVersions is the number of versions of each MVCC key.
const mvccVersions = 3

// burstShare is the share of the keys the write burst writes into L0.
const burstShare = 0.4

// lsmShape is what db.Metrics() and FilterUsage say about a loaded database.
type lsmShape struct {
	Tables      [7]int64
	Bytes       [7]int64
	Keys        [7]uint64
	FilterBytes [7]uint64
	Sublevels   int
	Written     uint64 // sstable bytes flushes and compactions wrote during the load
}

func (s lsmShape) totalBytes() int64 {
	var t int64
	for _, b := range s.Bytes {
		t += b
	}
	return t
}

func (s lsmShape) totalFilter() (bytes, keys uint64) {
	for l := range s.Keys {
		bytes += s.FilterBytes[l]
		keys += s.Keys[l]
	}
	return bytes, keys
}

// getProbes is the number of filter probes an absent Get makes per level:
// one per L0 sublevel, one per populated level from L1 to L5, none in L6
// (Get never reads L6 filters).
func (s lsmShape) getProbes() [7]float64 {
	var p [7]float64
	p[0] = float64(s.Sublevels)
	for l := 1; l < 6; l++ {
		if s.Tables[l] > 0 {
			p[l] = 1
		}
	}
	return p
}

func readShape(db *pebble.DB) (lsmShape, error) {
	var s lsmShape
	m := db.Metrics()
	for l := range s.Tables {
		s.Tables[l] = m.Levels[l].TablesCount
		s.Bytes[l] = m.Levels[l].TablesSize
	}
	s.Sublevels = int(m.Levels[0].Sublevels)
	usage, err := cuckoopolicy.FilterUsage(db)
	if err != nil {
		return s, err
	}
	for _, u := range usage {
		s.Keys[u.Level] += u.Keys
		s.FilterBytes[u.Level] += u.FilterBytes
	}
	return s, nil
}

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
		MemTableSize:                uint64(max(4<<20, 2*r.cfg.FlushEvery*(ValueLen+64))),
		LBaseMaxBytes:               r.cfg.LBaseMaxBytes,
		L0StopWritesThreshold:       1 << 20,
		DisableAutomaticCompactions: frozen,
	}
	for l := range o.TargetFileSizes {
		o.TargetFileSizes[l] = r.cfg.FileSize
	}
	if s.MVCC {
		o.Comparer = &cockroachkvs.Comparer
		o.KeySchema = cockroachkvs.KeySchema.Name
		o.KeySchemas = sstable.MakeKeySchemas(&cockroachkvs.KeySchema)
		o.BlockPropertyCollectors = cockroachkvs.BlockPropertyCollectors
	}
	p.apply(o)
	return o
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

// load writes the shape's keys into a new database at d.dir and returns the
// time it took, flushes and compactions included. Every policy gets the
// same pacing: batches of 1,000 entries, a flush and a wait for compactions
// to quiesce every FlushEvery entries. The write burst then reopens the
// database with automatic compactions off and writes its share of the keys
// as BurstTables flushes of overlapping, randomly ordered keys.
func (r *runner) load(s shapeSpec, d *dbInst) (wall, cpu time.Duration, err error) {
	n := uint64(r.entries(s))
	steady := n
	if s.Burst {
		steady = uint64(float64(n) * (1 - burstShare))
	}
	open := func(frozen bool) (*pebble.DB, error) {
		return pebble.Open(d.dir, r.options(s, d.cfg, d.st, nil, frozen))
	}
	start, cpu0 := time.Now(), processCPU()
	db, err := open(false)
	if err != nil {
		return 0, 0, err
	}
	l := &loader{r: r, s: s, d: d, ks: r.keyspace(s), n: n, db: db, b: db.NewBatch(),
		key: make([]byte, 0, 64), val: make([]byte, ValueLen)}
	if err := l.write(0, steady, r.cfg.FlushEvery); err != nil {
		l.db.Close()
		return 0, 0, err
	}
	quiesce(l.db)
	var written uint64 // by the first phase's database, whose metrics the reopening resets
	if s.Burst {
		written = bytesWritten(l.db)
		if err := l.db.Close(); err != nil {
			return 0, 0, err
		}
		if l.db, err = open(true); err != nil {
			return 0, 0, err
		}
		l.b = l.db.NewBatch()
		l.written = 0
		if err := l.write(steady, n, max(1, int(n-steady)/r.cfg.BurstTables)); err != nil {
			l.db.Close()
			return 0, 0, err
		}
	}
	wall, cpu = time.Since(start), processCPU()-cpu0
	d.shape, err = readShape(l.db)
	d.shape.Written = written + bytesWritten(l.db)
	if cerr := l.db.Close(); err == nil {
		err = cerr
	}
	return wall, cpu, err
}

// loader writes one shape's keys into one database in batches.
type loader struct {
	r        *runner
	s        shapeSpec
	d        *dbInst
	ks       keyspace
	n        uint64 // entries in the shape
	db       *pebble.DB
	b        *pebble.Batch
	key, val []byte
	written  int // entries written since the database was opened
}

// write puts entries from..to-1, flushing every flushEvery entries, then
// commits the last batch and flushes. The caller closes the database on
// error.
func (l *loader) write(from, to uint64, flushEvery int) error {
	for j := from; j < to; j++ {
		if err := l.put(j, flushEvery); err != nil {
			return err
		}
	}
	if err := l.b.Commit(pebble.NoSync); err != nil {
		return err
	}
	return l.db.Flush()
}

// put adds entry j to the batch, commits the batch every 1,000 entries,
// and flushes and waits for compactions every flushEvery entries.
func (l *loader) put(j uint64, flushEvery int) error {
	var i uint64
	v := 0
	if l.s.MVCC {
		per := l.n / mvccVersions
		v, i = int(j/per), j%per
		l.key = l.ks.versionKey(l.key[:0], i, v)
	} else {
		i = j
		l.key = l.ks.key(l.key[:0], i)
	}
	if err := l.b.Set(l.key, value(l.val, i, v), nil); err != nil {
		return err
	}
	l.written++
	if l.b.Count() >= 1000 {
		if err := l.b.Commit(pebble.NoSync); err != nil {
			return err
		}
		l.b = l.db.NewBatch()
	}
	if l.written%flushEvery == 0 {
		if err := l.b.Commit(pebble.NoSync); err != nil {
			return err
		}
		l.b = l.db.NewBatch()
		if err := l.db.Flush(); err != nil {
			return err
		}
		quiesce(l.db)
		l.r.prog.tick("load %s %s: %d/%d", l.s.Name, l.d.cfg.Name, l.written, l.n)
	}
	return nil
}
