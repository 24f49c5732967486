package workload

import (
	"fmt"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// cacheSize is the block cache of a regime for a database: hot, twice the
// database plus 8 MiB; pressure, its share of unfiltered, the bytes of the
// shape's tables without their filter blocks (the same cache for every
// policy, shared by filter, index and data blocks: a policy's filters take
// their bytes from the data and index blocks it can hold); otherwise 2% of
// the database (at least 1 MiB) for data and index blocks, plus twice
// filterBytes, so that the filters stay resident as they do in a production
// block cache, and a small cache does not make each read fetch its filters
// again (the OS page cache holds the rest: the files were just written or
// read). filterBytes is the largest total of the shape's databases, so that
// every policy gets the same cache.
func cacheSize(g regimeSpec, s lsmShape, filterBytes, unfiltered int64) int64 {
	switch {
	case g.Hot:
		return 2*s.totalBytes() + 8<<20
	case g.Pressure > 0:
		return max(1, int64(g.Pressure*float64(unfiltered)))
	}
	return max(1<<20, s.totalBytes()/50) + 2*filterBytes
}

// memtableReserve is what d, opened, takes from its block cache for its
// memtables: Pebble accounts memtables in the block cache (Cache.Reserve),
// and Open allocates them (786,432 bytes on v2.1.7 with these options: 256
// KiB and 512 KiB arenas). A pressure regime's cache adds it to its share,
// so that the share is what the blocks get; openRegime checks that every
// database reserves the same.
func (r *runner) memtableReserve(s shapeSpec, d *dbInst) (int64, error) {
	cache := pebble.NewCache(1 << 20)
	defer cache.Unref()
	db, err := pebble.Open(d.dir, r.options(s, d.cfg, d.st, cache, true))
	if err != nil {
		return 0, err
	}
	n := reserved(db)
	return n, db.Close()
}

// reserved is the bytes db's memtables reserve in its block cache.
func reserved(db *pebble.DB) int64 {
	m := db.Metrics().MemTable
	return int64(m.Size + m.ZombieSize)
}

// maxFilterBytes is the largest total of filter bytes among dbs.
func maxFilterBytes(dbs []*dbInst) int64 {
	var m int64
	for _, d := range dbs {
		fb, _ := d.shape.totalFilter()
		m = max(m, int64(fb))
	}
	return m
}

// unfilteredBytes is the bytes of a database's tables less its filter
// blocks: the same for every database of a shape (identical LSMs) up to
// the few bytes a filter policy's name adds to a table's properties.
func unfilteredBytes(s lsmShape) int64 {
	fb, _ := s.totalFilter()
	return s.totalBytes() - int64(fb)
}

// minUnfiltered is the smallest unfilteredBytes among dbs (0 if none).
func minUnfiltered(dbs []*dbInst) int64 {
	var m int64
	for i, d := range dbs {
		if u := unfilteredBytes(d.shape); i == 0 || u < m {
			m = u
		}
	}
	return m
}

// paths are the paths regime g runs, restricted by Config.Paths.
func (r *runner) paths(g regimeSpec) []pathSpec {
	var ps []pathSpec
	for _, p := range allPaths {
		if slices.Contains(g.pathNames(), p.Name) && (len(r.cfg.Paths) == 0 || slices.Contains(r.cfg.Paths, p.Name)) {
			ps = append(ps, p)
		}
	}
	return ps
}

// countPaths are the paths the counting pass runs on shape s: those of
// every regime the run measures there, restricted by Config.Paths.
func (r *runner) countPaths(s shapeSpec) []pathSpec {
	var ps []pathSpec
	for _, p := range allPaths {
		for _, g := range allRegimes {
			if r.runsRegimeOn(g, s) && slices.ContainsFunc(r.paths(g), func(q pathSpec) bool { return q.Name == p.Name }) {
				ps = append(ps, p)
				break
			}
		}
	}
	return ps
}

// runsRegime says whether the run measures regime g (Config.Regimes;
// "pressure" names both pressure regimes).
func (r *runner) runsRegime(g regimeSpec) bool {
	if len(r.cfg.Regimes) == 0 {
		return true
	}
	return slices.Contains(r.cfg.Regimes, g.Name) || g.Pressure > 0 && slices.Contains(r.cfg.Regimes, "pressure")
}

// runsRegimeOn says whether the run measures regime g on shape s
// (Config.Regimes, and Config.PressureShapes for a pressure regime).
func (r *runner) runsRegimeOn(g regimeSpec, s shapeSpec) bool {
	return r.runsRegime(g) && (g.Pressure == 0 || len(r.cfg.PressureShapes) == 0 || slices.Contains(r.cfg.PressureShapes, s.Name))
}

// runsPressureOn says whether the run measures a pressure regime on shape s.
func (r *runner) runsPressureOn(s shapeSpec) bool {
	return slices.ContainsFunc(allRegimes, func(g regimeSpec) bool { return g.Pressure > 0 && r.runsRegimeOn(g, s) })
}

// regime opens every database of the shape with the regime's cache and
// delay, warms each path once, then runs Reps repetitions in which every
// path and thread count runs every policy back to back, in an order rotated
// by one each repetition.
func (r *runner) regime(s shapeSpec, g regimeSpec, dbs []*dbInst) (err error) {
	// Closed on every return, also when opening stops partway.
	defer closeRegime(dbs, &err)
	r.prog.Stage("%s %s: %d databases, %d repetitions", s.Name, g.Name, len(dbs), r.cfg.Reps)
	if err := r.openRegime(s, g, dbs); err != nil {
		return err
	}
	paths := r.paths(g)
	maxT := slices.Max(r.cfg.Threads)
	if err := r.warmRegime(s, g, dbs, paths, maxT); err != nil {
		return err
	}
	opsFor, err := r.calibrate(s, dbs[0], paths)
	if err != nil {
		return err
	}
	hists := make([]*hdrhistogram.Histogram, maxT)
	for t := range hists {
		hists[t] = newHist()
	}
	// The keys of the timed runs start after the warm-up's and the
	// calibration's, and every cell of every repetition takes the next
	// ones: no run reads a key an earlier run of its database read, so the
	// small cache regimes read each operation's blocks from the file
	// system, not from what an earlier path, thread count or repetition
	// left in the block cache. Every policy reads the same keys.
	next := 2 * r.cfg.Ops
	for rep := range r.cfg.Reps {
		order := slices.Clone(dbs)
		k := rep % len(order)
		order = append(order[k:], order[:k]...)
		for _, p := range paths {
			for _, threads := range r.cfg.Threads {
				used, err := r.cell(s, g, p, threads, rep, next, order, opsFor[p.Name], hists)
				if err != nil {
					return err
				}
				next += used
			}
		}
	}
	if g.Pressure > 0 {
		// The memtables' reservation in the cache, checked at the opening,
		// still holds: the blocks had the regime's share throughout.
		for _, d := range dbs {
			if n := reserved(d.db); n != r.res.MemtableReserve {
				return fmt.Errorf("%s: the memtables' reservation in the block cache changed during the runs, to %d bytes from %d", d.cfg.Name, n, r.res.MemtableReserve)
			}
		}
	}
	return nil
}

// openRegime opens every database with the regime's cache and delay.
func (r *runner) openRegime(s shapeSpec, g regimeSpec, dbs []*dbInst) (err error) {
	var reserve int64
	if g.Pressure > 0 && len(dbs) > 0 {
		if reserve, err = r.memtableReserve(s, dbs[0]); err != nil {
			return err
		}
		r.res.MemtableReserve = reserve
	}
	for _, d := range dbs {
		d.cache = pebble.NewCache(cacheSize(g, d.shape, maxFilterBytes(dbs), minUnfiltered(dbs)) + reserve)
		o := r.options(s, d.cfg, d.st, d.cache, true)
		d.st.layouts.Store(nil)
		if d.db, err = pebble.Open(d.dir, o); err != nil {
			return err
		}
		sig, err := readSig(d.db)
		if err != nil {
			return err
		}
		if err := diffSig(d.sig, sig); err != nil {
			return fmt.Errorf("%s: the LSM changed since it was built: %w", d.cfg.Name, err)
		}
		if err := learnLayouts(d.db, vfs.Default, d.dir, o, d.st); err != nil {
			return err
		}
		if n := reserved(d.db); g.Pressure > 0 && n != reserve {
			return fmt.Errorf("%s: the memtables reserve %d bytes of the block cache, not the %d the pressure regime's cache adds", d.cfg.Name, n, reserve)
		}
		if g.Slow {
			d.st.delay.Store(int64(r.cfg.Delay))
		}
	}
	return nil
}

// closeRegime closes the databases and releases their caches; the first
// error from Close goes into *err unless it already holds one.
func closeRegime(dbs []*dbInst, err *error) {
	for _, d := range dbs {
		d.st.delay.Store(0)
		if d.db != nil {
			if cerr := d.db.Close(); *err == nil {
				*err = cerr
			}
			d.db = nil
		}
		if d.cache != nil {
			d.cache.Unref()
			d.cache = nil
		}
	}
}

// warmRegime scans every database in the hot regime, then runs each path
// once, untimed, on every database.
func (r *runner) warmRegime(s shapeSpec, g regimeSpec, dbs []*dbInst, paths []pathSpec, maxT int) error {
	if g.Hot {
		// Every data and index block into the cache: the timed runs read
		// keys no earlier run read.
		for _, d := range dbs {
			r.prog.Tick("scan %s", d.cfg.Name)
			if err := scan(d.db); err != nil {
				return err
			}
		}
	}
	for _, p := range paths {
		for _, d := range dbs {
			r.prog.Tick("warm %s %s", p.Name, d.cfg.Name)
			if _, err := r.run(s, p, d, maxT, 0, r.cfg.Ops, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// scan reads every key of db once, which brings every data and index block
// into the block cache.
func scan(db *pebble.DB) error {
	it, err := db.NewIter(nil)
	if err != nil {
		return err
	}
	for valid := it.First(); valid; valid = it.Next() {
	}
	return it.Close()
}

// calibrate returns each path's operation count: enough for RunTime on one
// goroutine, from a calibration run on the first database after the
// warm-up.
func (r *runner) calibrate(s shapeSpec, d *dbInst, paths []pathSpec) (map[string]int, error) {
	opsFor := map[string]int{}
	for _, p := range paths {
		opsFor[p.Name] = r.cfg.Ops
		if r.cfg.RunTime <= 0 {
			continue
		}
		out, err := r.run(s, p, d, 1, r.cfg.Ops, r.cfg.Ops, nil)
		if err != nil {
			return nil, err
		}
		per := out.wall / time.Duration(r.cfg.Ops)
		if per > 0 {
			opsFor[p.Name] = min(max(r.cfg.Ops, int(r.cfg.RunTime/per)), 200*r.cfg.Ops)
		}
	}
	return opsFor, nil
}

// cell runs one repetition of one path and thread count: every policy, in
// the given order, on pathOps operations split over SubRuns rounds, the
// path's operations from base on, and adds the results to the cell. It
// returns the number of operations (keys) it used.
func (r *runner) cell(s shapeSpec, g regimeSpec, p pathSpec, threads, rep, base int, order []*dbInst, pathOps int, hists []*hdrhistogram.Histogram) (int, error) {
	res := r.res
	key := cellKey{Shape: s.Name, Regime: g.Name, Path: p.Name, Threads: threads}
	cell := res.Cells[key]
	if cell == nil {
		cell = map[string]*cellStats{}
		res.Cells[key] = cell
	}
	if r.stopped() {
		return 0, errStopped
	}
	// SubRuns rounds, each running every policy once on a share of
	// the operations: a policy's time in this repetition is the
	// median of its rounds, so that a burst of load from elsewhere on
	// the machine spoils one round, not the pair.
	subs := max(1, r.cfg.SubRuns)
	ops := max(1, pathOps/subs)
	times := map[string][]float64{}
	for sub := range subs {
		base := base + sub*ops // each round its own keys, the same for every policy
		for _, d := range order {
			r.prog.Tick("rep %d/%d: %s t=%d %s", rep+1, r.cfg.Reps, p.Name, threads, d.cfg.Name)
			for t := range threads {
				hists[t].Reset()
			}
			out, err := r.run(s, p, d, threads, base, ops, hists[:threads])
			if err != nil {
				return 0, fmt.Errorf("%s %s: %w", p.Name, d.cfg.Name, err)
			}
			cs := cell[d.cfg.Name]
			if cs == nil {
				cs = &cellStats{Hist: newHist()}
				cell[d.cfg.Name] = cs
			}
			for t := range threads {
				cs.Hist.Merge(hists[t])
			}
			cs.Ops += int64(ops)
			times[d.cfg.Name] = append(times[d.cfg.Name], float64(out.wall.Nanoseconds())/float64(ops))
			cs.IO.add(out.io)
			cs.Cache.add(out.cache)
			cs.Hits += out.hits
			cs.Misses += out.misses
			cs.Lost += out.lost
			cs.Phantom += out.phantom
			res.Lost += out.lost
			res.Phantom += out.phantom
		}
	}
	for name, ts := range times {
		cell[name].NsPerOp = append(cell[name].NsPerOp, median(ts))
	}
	return subs * ops, nil
}
