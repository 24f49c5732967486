package workload

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/cockroachdb/pebble/v2"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/lookup"
)

// pathSpec is one read path.
type pathSpec struct {
	Name string
	Seek bool // SeekPrefixGE on an iterator kept for the whole run; false: db.Get
	L6   bool // IterOptions.UseL6Filters
	// Lookup reads through package lookup (a new iterator with
	// UseL6Filters per key, db.Get's contract) with the shape's comparer:
	// lookup.Has for absent keys alone, lookup.Get where a present key's
	// value is checked. Its keys are db.Get's (versioned ones in the MVCC
	// key space).
	Lookup  bool
	Present float64 // share of present keys: 0, 0.5 or 1
}

// pathNamed is the path named name (the zero pathSpec if none is).
func pathNamed(name string) pathSpec {
	if i := slices.IndexFunc(allPaths, func(p pathSpec) bool { return p.Name == name }); i >= 0 {
		return allPaths[i]
	}
	return pathSpec{}
}

// readsL6Filters says whether path p reads L6 filters, which db.Get never
// does.
func (p pathSpec) readsL6Filters() bool { return p.L6 || p.Lookup }

var allPaths = []pathSpec{
	{Name: "get-absent"},
	{Name: "get-present", Present: 1},
	{Name: "get-mix", Present: 0.5},
	{Name: "lookup-absent", Lookup: true},
	{Name: "lookup-present", Lookup: true, Present: 1},
	{Name: "lookup-mix", Lookup: true, Present: 0.5},
	{Name: "seek-absent", Seek: true},
	{Name: "seek-absent-l6", Seek: true, L6: true},
	{Name: "seek-present", Seek: true, Present: 1},
	{Name: "seek-present-l6", Seek: true, L6: true, Present: 1},
	{Name: "seek-mix-l6", Seek: true, L6: true, Present: 0.5},
}

// defaultPaths are the paths of the regimes that do not list their own:
// every path but seek-mix-l6, which only the pressure regimes run, and the
// lookup paths, which the slow and the pressure regimes run.
var defaultPaths = []string{"get-absent", "get-present", "get-mix", "seek-absent", "seek-absent-l6", "seek-present", "seek-present-l6"}

// lookupPaths are package lookup's point lookups, absent, present and
// 50/50, each beside the db.Get path of the same keys (getPathOf).
var lookupPaths = []string{"lookup-absent", "lookup-present", "lookup-mix"}

// slowPaths are the slow regime's paths: defaultPaths and the lookups.
var slowPaths = append(slices.Clone(defaultPaths), lookupPaths...)

// pressurePaths are the paths of the pressure regimes: Get of absent,
// present and 50/50 keys, the same through package lookup (a Has of a
// missing key can skip L6's index and data blocks), and the absent and the
// 50/50 SeekPrefixGE with UseL6Filters on one iterator per run, which the
// L6 plans' targets judge.
var pressurePaths = append([]string{"get-absent", "seek-absent-l6", "get-present", "seek-mix-l6", "get-mix"}, lookupPaths...)

// regimeSpec is one cache and device regime.
type regimeSpec struct {
	Name string
	Hot  bool // block cache larger than the database, warmed
	Slow bool // the device delay on every sstable read
	// Pressure is the block cache's share of the database's bytes without
	// filter blocks (the same cache for every policy of a shape), shared by
	// filter, index and data blocks with no headroom for filters; 0: the
	// cache of cacheSize's other regimes.
	Pressure float64
	Paths    []string // the paths it runs (nil: defaultPaths)
	Policies []string // the policies it times, beside the A/A twin (nil: Runner.timed's)
}

// The pressure regimes: a block cache of 1% and 4% of the database's bytes
// for every block, and the slow device.
var allRegimes = []regimeSpec{
	{Name: "hot", Hot: true},
	{Name: "pagecache"},
	{Name: "slow", Slow: true, Paths: slowPaths},
	{Name: "pressure1", Slow: true, Pressure: 0.01, Paths: pressurePaths, Policies: regimePolicies("pressure1")},
	{Name: "pressure4", Slow: true, Pressure: 0.04, Paths: pressurePaths, Policies: regimePolicies("pressure4")},
}

// pathNames are the names of the paths g runs.
func (g regimeSpec) pathNames() []string {
	if g.Paths != nil {
		return g.Paths
	}
	return defaultPaths
}

// cellKey names one measured cell.
type cellKey struct {
	Shape, Regime, Path string
	Threads             int
}

// cellStats accumulates one policy's runs of one cell.
type cellStats struct {
	Ops     int64     // counted operations, all repetitions
	NsPerOp []float64 // wall time per operation, one per repetition
	Hist    *hdrhistogram.Histogram
	IO      ioSnap
	Cache   cacheCounts // block-cache lookups of the runs
	Hits    int64       // filter said "absent": a data block avoided
	Misses  int64       // filter said "may contain"
	Lost    int64       // present keys not read back with their value
	Phantom int64       // absent keys found
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 10_000_000_000, 2) }

// runOut is one run of a cell.
type runOut struct {
	wall    time.Duration
	io      ioSnap
	cache   cacheCounts
	hits    int64
	misses  int64
	lost    int64
	phantom int64
}

// cacheCounts are block-cache lookups: db.Metrics().BlockCache, whose
// cache is the database's own in every regime.
type cacheCounts struct {
	Hits, Misses int64
}

func (c *cacheCounts) add(x cacheCounts) {
	c.Hits += x.Hits
	c.Misses += x.Misses
}

// opKey gives operation j of a path: the key to read, whether it is present,
// and the key index and version its value must carry.
func (r *runner) opKey(s shapeSpec, p pathSpec, j int, dst []byte) (key []byte, present bool, i uint64, v int) {
	ks := r.keyspace(s)
	nKeys := uint64(r.entries(s))
	if s.mvcc() {
		nKeys /= mvccVersions
	}
	switch p.Present {
	case 1:
		present = true
	case 0.5:
		present = j%2 == 0
	}
	if !present {
		i = 1<<40 + uint64(j)
		if s.mvcc() && !p.Seek {
			return ks.versionKey(dst, i, 0), false, i, 0
		}
		return ks.key(dst, i), false, i, 0
	}
	i = mix(uint64(j)^0x5eed) % nKeys
	if !s.mvcc() {
		return ks.key(dst, i), true, i, 0
	}
	if p.Seek { // the bare key finds the newest version
		return ks.key(dst, i), true, i, mvccVersions - 1
	}
	v = j % mvccVersions
	return ks.versionKey(dst, i, v), true, i, v
}

// run performs operations base to base+ops-1 of path p on d with the given
// number of goroutines, recording latencies into hists (one per goroutine;
// nil: not recorded).
func (r *runner) run(s shapeSpec, p pathSpec, d *dbInst, threads, base, ops int, hists []*hdrhistogram.Histogram) (runOut, error) {
	var out runOut
	m0 := d.db.Metrics()
	f0, c0 := m0.Filter, m0.BlockCache
	io0 := d.st.snap()
	var wg sync.WaitGroup
	errs := make([]error, threads)
	lost := make([]int64, threads)
	phantom := make([]int64, threads)
	start := time.Now()
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h *hdrhistogram.Histogram
			if hists != nil {
				h = hists[t]
			}
			lost[t], phantom[t], errs[t] = r.worker(s, p, d, t, threads, base, ops, h)
		}()
	}
	wg.Wait()
	out.wall = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return out, err
	}
	m1 := d.db.Metrics()
	f1, c1 := m1.Filter, m1.BlockCache
	out.io = d.st.snap().sub(io0)
	out.hits, out.misses = f1.Hits-f0.Hits, f1.Misses-f0.Misses
	out.cache = cacheCounts{Hits: c1.Hits - c0.Hits, Misses: c1.Misses - c0.Misses}
	for t := range threads {
		out.lost += lost[t]
		out.phantom += phantom[t]
	}
	return out, nil
}

// opResult is what one read found, against what it should have found.
type opResult int

const (
	opRight   opResult = iota
	opLost             // a present key not read back with its value
	opPhantom          // an absent key found
)

// worker is goroutine t of threads: it performs operations base+t,
// base+t+threads, ... below base+ops, recording latencies into hist (nil:
// not recorded), and counts the keys lost and the phantoms.
func (r *runner) worker(s shapeSpec, p pathSpec, d *dbInst, t, threads, base, ops int, hist *hdrhistogram.Histogram) (lost, phantom int64, err error) {
	var it *pebble.Iterator
	if p.Seek {
		if it, err = d.db.NewIter(&pebble.IterOptions{UseL6Filters: p.L6}); err != nil {
			return 0, 0, err
		}
		defer it.Close()
	}
	buf := make([]byte, 0, 64)
	ks := r.keyspace(s)
	want := make([]byte, 0, 64)
	lk := lookup.Filtered{Comparer: comparer(s)}
	get := getter(d.db.Get)
	if p.Lookup {
		get = func(key []byte) ([]byte, io.Closer, error) { return lk.Get(d.db, key) }
	}
	for j := t; j < ops; j += threads {
		key, present, i, v := r.opKey(s, p, base+j, buf[:0])
		t0 := time.Now()
		var res opResult
		switch {
		case p.Seek:
			res, want, err = seekOne(it, s.mvcc(), ks, key, present, i, v, want)
		case p.Lookup && p.Present == 0:
			res, err = hasOne(lk, d.db, key, present)
		default:
			res, err = getOne(get, key, present, ks.valueLen(), i, v)
		}
		switch res {
		case opLost:
			lost++
		case opPhantom:
			phantom++
		}
		if err != nil {
			return lost, phantom, err
		}
		if hist != nil {
			hist.RecordValue(int64(time.Since(t0)))
		}
	}
	return lost, phantom, nil
}

// seekOne seeks it to key's prefix and checks the answer: the entry of
// version v of key i where present, none where absent. want is scratch
// space for the expected key, returned for reuse.
func seekOne(it *pebble.Iterator, mvcc bool, ks keyspace, key []byte, present bool, i uint64, v int, want []byte) (opResult, []byte, error) {
	res := opRight
	ok := it.SeekPrefixGE(key)
	if ok && present {
		if mvcc {
			want = ks.versionKey(want[:0], i, v)
		} else {
			want = append(want[:0], key...)
		}
		if !bytes.Equal(it.Key(), want) || !checkValue(it.Value(), ks.valueLen(), i, v) {
			res = opLost
		}
	} else if ok {
		res = opPhantom
	} else if present {
		res = opLost
	}
	return res, want, it.Error()
}

// getter is a point read with db.Get's contract: db.Get, or lookup's Get.
type getter func(key []byte) ([]byte, io.Closer, error)

// getOne reads key with get and checks the answer: version v of key i's
// n-byte value where present, ErrNotFound where absent.
func getOne(get getter, key []byte, present bool, n int, i uint64, v int) (opResult, error) {
	val, closer, err := get(key)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		if present {
			return opLost, nil
		}
		return opRight, nil
	case err != nil:
		return opRight, err
	}
	defer closer.Close()
	if !present {
		return opPhantom, nil
	}
	if !checkValue(val, n, i, v) {
		return opLost, nil
	}
	return opRight, nil
}

// hasOne asks lk.Has for key in db and checks the answer.
func hasOne(lk lookup.Filtered, db *pebble.DB, key []byte, present bool) (opResult, error) {
	found, err := lk.Has(db, key)
	switch {
	case err != nil:
		return opRight, err
	case found && !present:
		return opPhantom, nil
	case !found && present:
		return opLost, nil
	}
	return opRight, nil
}
