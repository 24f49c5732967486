package workload

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/sstblock"
)

// fpCounter wraps the filter policy that reads a family's blocks and sorts
// its "may contain" answers into true and false positives: it finds the
// table a filter block belongs to by the block's hash, and the table's
// prefixes (each key cut by Comparer.Split, as Pebble gives them to filters)
// by having read the whole table. It only runs in the untimed counting pass:
// hashing the block on each positive answer costs far more than the lookup.
type fpCounter struct {
	pebble.FilterPolicy
	tables          *map[uint64][]uint64 // filter block hash -> sorted prefix hashes
	tp, fp, unknown atomic.Int64
}

// MayContain implements pebble.FilterPolicy.
func (c *fpCounter) MayContain(ft pebble.FilterType, filter, key []byte) bool {
	ok := c.FilterPolicy.MayContain(ft, filter, key)
	if !ok {
		return false
	}
	prefixes, found := (*c.tables)[xxhash.Sum64(filter)]
	switch {
	case !found:
		c.unknown.Add(1)
	case containsSorted(prefixes, xxhash.Sum64(key)):
		c.tp.Add(1)
	default:
		c.fp.Add(1)
	}
	return true
}

func containsSorted(s []uint64, x uint64) bool {
	_, ok := slices.BinarySearch(s, x)
	return ok
}

// truthCounts are what the counting pass saw on one path of one database.
type truthCounts struct {
	Ops          int64
	Hits, Misses int64 // db.Metrics().Filter
	TP, FP       int64 // "may contain" answers on tables that hold / do not hold the prefix
	Unknown      int64 // answers on filter blocks not found (should be 0)
}

// learnTruth reads every table of db: its filter block's hash and the hashes
// of the prefixes it holds.
func learnTruth(db *pebble.DB, fs vfs.FS, dir string, o *pebble.Options) (map[uint64][]uint64, error) {
	levels, err := db.SSTables()
	if err != nil {
		return nil, err
	}
	m := map[uint64][]uint64{}
	for _, tables := range levels {
		for _, t := range tables {
			name := filepath.Join(dir, fmt.Sprintf("%s.sst", t.BackingSSTNum))
			sig, prefixes, err := tableTruth(fs, name, o)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if sig != 0 {
				m[sig] = prefixes
			}
		}
	}
	return m, nil
}

func tableTruth(fs vfs.FS, name string, o *pebble.Options) (sig uint64, prefixes []uint64, err error) {
	r, err := openTable(fs, name, o)
	if err != nil {
		return 0, nil, err
	}
	defer r.Close()
	l, err := r.Layout()
	if err != nil {
		return 0, nil, err
	}
	if len(l.Filter) == 0 {
		return 0, nil, nil
	}
	h := l.Filter[0].Handle
	block := make([]byte, h.Length)
	g, err := fs.Open(name)
	if err != nil {
		return 0, nil, err
	}
	_, err = g.ReadAt(block, int64(h.Offset))
	g.Close()
	if err != nil {
		return 0, nil, err
	}
	split := pebble.DefaultComparer.Split
	if o.Comparer != nil {
		split = o.Comparer.Split
	}
	it, err := r.NewIter(sstable.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
	if err != nil {
		return 0, nil, err
	}
	for kv := it.First(); kv != nil; kv = it.Next() {
		k := kv.K.UserKey
		prefixes = append(prefixes, xxhash.Sum64(k[:split(k)]))
	}
	if err := it.Close(); err != nil {
		return 0, nil, err
	}
	slices.Sort(prefixes)
	return xxhash.Sum64(block), slices.Compact(prefixes), nil
}

// countPass opens d with every filter reader wrapped in an fpCounter and a
// block cache larger than the database, and runs each path's first
// CountOps operations once, on one goroutine.
func (r *runner) countPass(s shapeSpec, d *dbInst) (map[string]truthCounts, error) {
	cache := pebble.NewCache(cacheSize(regimeSpec{Hot: true}, d.shape, 0, 0))
	defer cache.Unref()
	o := r.options(s, d.cfg, d.st, cache, true)
	var tables map[uint64][]uint64
	var counters []*fpCounter
	for name, p := range o.Filters {
		c := &fpCounter{FilterPolicy: p, tables: &tables}
		counters = append(counters, c)
		o.Filters[name] = c
	}
	db, err := pebble.Open(d.dir, o)
	if err != nil {
		return nil, err
	}
	d.db = db
	defer func() { db.Close(); d.db = nil }()
	if tables, err = learnTruth(db, vfs.Default, d.dir, o); err != nil {
		return nil, err
	}
	out := map[string]truthCounts{}
	for _, p := range r.countPaths(s) {
		if !r.countsPath(d, p) {
			continue
		}
		var tp0, fp0, un0 int64
		for _, c := range counters {
			tp0, fp0, un0 = tp0+c.tp.Load(), fp0+c.fp.Load(), un0+c.unknown.Load()
		}
		r.prog.Tick("%s", p.Name)
		ro, err := r.run(s, p, d, 1, 0, r.cfg.CountOps, nil)
		if err != nil {
			return nil, err
		}
		var tp1, fp1, un1 int64
		for _, c := range counters {
			tp1, fp1, un1 = tp1+c.tp.Load(), fp1+c.fp.Load(), un1+c.unknown.Load()
		}
		out[p.Name] = truthCounts{Ops: int64(r.cfg.CountOps), Hits: ro.hits, Misses: ro.misses,
			TP: tp1 - tp0, FP: fp1 - fp0, Unknown: un1 - un0}
		r.res.Lost += ro.lost
		r.res.Phantom += ro.phantom
	}
	return out, nil
}

// openTable opens the sstable at name through fs, with o's Comparer and
// KeySchemas; closing the reader closes the file.
func openTable(fs vfs.FS, name string, o *pebble.Options) (*sstable.Reader, error) {
	return sstblock.Open(fs, name, sstable.ReaderOptions{Comparer: o.Comparer, KeySchemas: o.KeySchemas})
}
