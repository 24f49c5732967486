package workload

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Config is one run of the workload benchmark. Defaults gives the three
// modes' values; a zero field is not defaulted by Run.
type Config struct {
	Mode          string        // "tiny" (a smoke test: no verdicts), "quick" or "full"
	Keys          int           // entries loaded per database (MVCC: roach keys x versions)
	FlushEvery    int           // entries between paced flushes
	BurstTables   int           // overlapping L0 flushes of the write burst
	LBaseMaxBytes int64         // Options.LBaseMaxBytes
	FileSize      int64         // Options.TargetFileSizes, every level
	Ops           int           // operations per measured run (one policy, one cell, one repetition), at least
	RunTime       time.Duration // target wall time of one measured run: each path's operation count is raised to reach it, from a calibration run (0: Ops)
	CountOps      int           // operations per path of the untimed pass that sorts filter answers into true and false positives
	Reps          int           // repetitions of every cell, policies interleaved, order rotated
	SubRuns       int           // rounds per repetition: a repetition's time is the median of its rounds (0: 1)
	Threads       []int         // goroutines reading concurrently
	Budgets       []int         // bits-per-key budgets B
	Delay         time.Duration // device delay per sstable read, slow regime
	Dir           string        // data directory: must be empty or absent; "" for a temporary one
	Out           string        // report directory
	Seed          uint64
	CommandLine   string          // for the report
	Progress      io.Writer       // a progress line; nil: none
	Stop          <-chan struct{} // closed to stop early: Run removes its databases and returns ErrStopped
	// Shapes, Regimes and Paths restrict the run (nil: all).
	Shapes, Regimes, Paths []string
}

// Defaults returns the configuration of a mode: "tiny", "quick" or "full".
func Defaults(mode string) Config {
	c := Config{Mode: mode, Budgets: []int{10, 12, 16}, Threads: []int{1, 2}, Delay: 50 * time.Microsecond, Seed: 1}
	switch mode {
	case "tiny":
		c.Keys, c.FlushEvery, c.BurstTables = 6000, 1500, 4
		c.LBaseMaxBytes, c.FileSize = 64<<10, 64<<10
		c.Ops, c.Reps, c.CountOps = 100, 2, 500
	case "quick":
		c.Keys, c.FlushEvery, c.BurstTables = 300_000, 30_000, 8
		c.LBaseMaxBytes, c.FileSize = 64<<10, 256<<10
		c.Ops, c.RunTime, c.Reps, c.CountOps, c.SubRuns = 200, 15*time.Millisecond, 10, 30_000, 3
	default:
		c.Mode = "full"
		c.Keys, c.FlushEvery, c.BurstTables = 3_000_000, 150_000, 10
		c.LBaseMaxBytes, c.FileSize = 1<<20, 2<<20
		c.Ops, c.RunTime, c.Reps, c.CountOps, c.SubRuns = 500, 45*time.Millisecond, 10, 500_000, 3
	}
	return c
}

// ErrDirNotEmpty is returned for a data directory that holds anything.
var ErrDirNotEmpty = errors.New("workload: data directory is not empty")

// ErrStopped is returned when Config.Stop was closed; the data directory
// is cleaned up as after a complete run, and no report is written.
var ErrStopped = errors.New("workload: stopped")

// ErrLostKeys is returned, with the report written, when a present key was
// not read back with its value or an absent key was found.
var ErrLostKeys = errors.New("workload: keys lost")

// dbInst is one measured database.
type dbInst struct {
	cfg      policyCfg
	dir      string
	st       *ioStats
	db       *pebble.DB
	cache    *pebble.Cache
	shape    lsmShape
	loadTime time.Duration
	loadCPU  time.Duration
}

type runner struct {
	cfg  Config
	prog *progress
	res  *Result
}

// stopped says whether Config.Stop was closed.
func (r *runner) stopped() bool {
	select {
	case <-r.cfg.Stop:
		return true
	default:
		return false
	}
}

func (r *runner) keyspace(s shapeSpec) keyspace {
	return keyspace{seed: r.cfg.Seed*1_000_003 + uint64(len(s.Name)), mvcc: s.MVCC}
}

// entries is the number of entries a shape loads.
func (r *runner) entries(s shapeSpec) int {
	if s.MVCC {
		return r.cfg.Keys / mvccVersions * mvccVersions
	}
	return r.cfg.Keys
}

// prepareDir checks that dir is absent or empty and creates it; it returns
// a function that removes what the run created.
func prepareDir(dir string) (string, func(), error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "pebble-workload-")
		if err != nil {
			return "", nil, err
		}
		return d, func() { os.RemoveAll(d) }, nil
	}
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, err
		}
		return dir, func() { os.RemoveAll(dir) }, nil
	case err != nil:
		return "", nil, err
	case len(ents) > 0:
		return "", nil, fmt.Errorf("%w: %s holds %d entries; give an empty or absent directory", ErrDirNotEmpty, dir, len(ents))
	}
	return dir, func() {
		// Remove only what this run created: the directory was empty.
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}, nil
}

// Run runs the benchmark and writes cfg.Out/WORKLOAD.md and the plots. It
// returns ErrLostKeys (after writing the report) if any present key was not
// read back, and ErrDirNotEmpty, touching nothing, if cfg.Dir holds anything.
func Run(cfg Config) (*Result, error) {
	dataDir, cleanup, err := prepareDir(cfg.Dir)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	return run(cfg, dataDir)
}

func run(cfg Config, dataDir string) (*Result, error) {
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, prog: newProgress(cfg.Progress)}
	r.res = &Result{Config: cfg, Start: time.Now(), Cells: map[cellKey]map[string]*cellStats{},
		Truth: map[string]map[string]map[string]truthCounts{}}
	res := r.res
	res.DelayMeasured = calibrateDelay(cfg.Delay)

	// In-process false-positive rates, for the matched budgets and the spread.
	n, probes := 200_000, 2_000_000
	if cfg.Mode == "tiny" {
		n, probes = 20_000, 100_000
	}
	r.prog.stage("false-positive rates of bloom and cuckoo, %d keys, %d probes per budget", n, probes)
	res.BloomFPR = measureFPR(famBloom, n, probes, cfg.Seed)
	res.CuckooFPR = measureFPR(famCuckoo, n, probes, cfg.Seed)
	for _, b := range cfg.Budgets {
		target := res.BloomFPR.FPR[b]
		if p, fpr, bits, ok := tunedMatch(target, n, probes, cfg.Seed+7); ok {
			res.Tuned = append(res.Tuned, tunedRow{
				Name: fmt.Sprintf("cuckoo-f%d-load%.0f", p.FingerprintBits, 100*p.LoadFactor),
				For:  b, Policy: p, FPR: fpr, Bits: bits, BloomFPR: target})
		}
	}

	for _, s := range allShapes {
		if len(cfg.Shapes) > 0 && !slices.Contains(cfg.Shapes, s.Name) {
			continue
		}
		if err := r.shape(s, dataDir); err != nil {
			return res, fmt.Errorf("shape %s: %w", s.Name, err)
		}
	}
	res.Elapsed = time.Since(res.Start)
	r.prog.done()
	if err := writeReport(res); err != nil {
		return res, err
	}
	if res.Lost > 0 || res.Phantom > 0 {
		return res, fmt.Errorf("%w: %d present keys not read back, %d absent keys found", ErrLostKeys, res.Lost, res.Phantom)
	}
	return res, nil
}

// uniformConfigs are the policies loaded before the per-level spread can be
// computed: none, bloom and cuckoo at every budget, and cuckoo at the
// budgets that match bloom's rates.
func (r *runner) uniformConfigs() []policyCfg {
	res := r.res
	cfgs := []policyCfg{{Name: "none", Family: famNone}}
	have := map[string]bool{}
	add := func(fam string, b int) string {
		name := fmt.Sprintf("%s(%d)", fam, b)
		if !have[name] {
			have[name] = true
			cfgs = append(cfgs, policyCfg{Name: name, Family: fam, B: b})
		}
		return name
	}
	res.Matched = map[int]string{}
	for _, b := range r.cfg.Budgets {
		add(famBloom, b)
		add(famCuckoo, b)
	}
	for _, b := range r.cfg.Budgets {
		if m := matchBudget(res.CuckooFPR, res.BloomFPR.FPR[b]); m > 0 {
			res.Matched[b] = add(famCuckoo, m)
		}
	}
	for _, t := range res.Tuned {
		pol := t.Policy
		cfgs = append(cfgs, policyCfg{Name: t.Name, Family: famCuckoo, Tuned: &pol, TunedFor: t.For})
	}
	return cfgs
}

// shape loads every policy's database for one shape, measures them in every
// regime and removes them.
func (r *runner) shape(s shapeSpec, dataDir string) error {
	res := r.res
	base := filepath.Join(dataDir, s.Name)
	var dbs []*dbInst
	defer os.RemoveAll(base)
	loadOne := func(c policyCfg) error {
		if r.stopped() {
			return ErrStopped
		}
		d := &dbInst{cfg: c, dir: filepath.Join(base, sanitize(c.Name)), st: &ioStats{}}
		r.prog.stage("load %s: %s", s.Name, c.Name)
		wall, cpu, err := r.load(s, d)
		if err != nil {
			return fmt.Errorf("load %s: %w", c.Name, err)
		}
		d.loadTime, d.loadCPU = wall, cpu
		dbs = append(dbs, d)
		return nil
	}
	for _, c := range r.uniformConfigs() {
		if err := loadOne(c); err != nil {
			return err
		}
	}
	// The per-level spread, from bloom(10)'s loaded LSM.
	var ref *dbInst
	for _, d := range dbs {
		if d.cfg.Name == "bloom(10)" {
			ref = d
		}
	}
	if ref != nil {
		fb, _ := ref.shape.totalFilter()
		// The keys each level's filters hold (MVCC: prefixes, not versions),
		// from bloom(10)'s filter bits.
		in := spreadInput{Probes: ref.shape.getProbes(), Bits: 8 * float64(fb)}
		for l := range in.Keys {
			in.Keys[l] = 8 * ref.shape.FilterBytes[l] / 10
		}
		for _, fam := range []string{famBloom, famCuckoo} {
			c := policyCfg{Name: fam + "-spread", Family: fam, PerLevel: true}
			switch fam {
			case famBloom:
				c.Levels = spread(res.BloomFPR, in)
			default:
				c.Levels = spread(res.CuckooFPR, in)
			}
			res.Spreads = append(res.Spreads, spreadRow{Shape: s.Name, Cfg: c, In: in})
			if err := loadOne(c); err != nil {
				return err
			}
		}
	}
	truth := map[string]map[string]truthCounts{}
	for _, d := range dbs {
		r.prog.stage("count %s: %s", s.Name, d.cfg.Name)
		t, err := r.countPass(s, d)
		if err != nil {
			return fmt.Errorf("counting pass of %s: %w", d.cfg.Name, err)
		}
		truth[d.cfg.Name] = t
	}
	res.Truth[s.Name] = truth
	sr := shapeResult{Spec: s}
	for _, d := range dbs {
		sr.DBs = append(sr.DBs, dbRow{Cfg: d.cfg, Shape: d.shape, Load: d.loadTime, LoadCPU: d.loadCPU})
	}
	res.Shapes = append(res.Shapes, sr)

	for _, g := range allRegimes {
		if len(r.cfg.Regimes) > 0 && !slices.Contains(r.cfg.Regimes, g.Name) {
			continue
		}
		if err := r.regime(s, g, dbs); err != nil {
			return fmt.Errorf("regime %s: %w", g.Name, err)
		}
	}
	return nil
}

func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// cacheSize is the block cache of a regime for a database: hot, twice the
// database plus 8 MiB; otherwise 2% of the database (at least 1 MiB) for
// data and index blocks, plus twice filterBytes, so that the filters stay
// resident as they do in a production block cache, and a small cache does
// not make each read fetch its filters again (the OS page cache holds the
// rest: the files were just written or read). filterBytes is the largest
// total of the shape's databases, so that every policy gets the same cache.
func cacheSize(g regimeSpec, s lsmShape, filterBytes int64) int64 {
	if g.Hot {
		return 2*s.totalBytes() + 8<<20
	}
	return max(1<<20, s.totalBytes()/50) + 2*filterBytes
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

func (r *runner) paths() []pathSpec {
	var ps []pathSpec
	for _, p := range allPaths {
		if len(r.cfg.Paths) == 0 || slices.Contains(r.cfg.Paths, p.Name) {
			ps = append(ps, p)
		}
	}
	return ps
}

// regime opens every database of the shape with the regime's cache and
// delay, warms each path once, then runs Reps repetitions in which every
// path and thread count runs every policy back to back, in an order rotated
// by one each repetition.
func (r *runner) regime(s shapeSpec, g regimeSpec, dbs []*dbInst) (err error) {
	// Closed on every return, also when opening stops partway.
	defer closeRegime(dbs, &err)
	if err := r.openRegime(s, g, dbs); err != nil {
		return err
	}
	paths := r.paths()
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
	return nil
}

// openRegime opens every database with the regime's cache and delay.
func (r *runner) openRegime(s shapeSpec, g regimeSpec, dbs []*dbInst) (err error) {
	for _, d := range dbs {
		d.cache = pebble.NewCache(cacheSize(g, d.shape, maxFilterBytes(dbs)))
		o := r.options(s, d.cfg, d.st, d.cache, true)
		d.st.layouts.Store(nil)
		if d.db, err = pebble.Open(d.dir, o); err != nil {
			return err
		}
		if err := learnLayouts(d.db, vfs.Default, d.dir, o, d.st); err != nil {
			return err
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
			r.prog.tick("%s %s: scan %s", s.Name, g.Name, d.cfg.Name)
			if err := scan(d.db); err != nil {
				return err
			}
		}
	}
	for _, p := range paths {
		for _, d := range dbs {
			r.prog.tick("%s %s: warm %s %s", s.Name, g.Name, p.Name, d.cfg.Name)
			if _, err := r.run(s, p, d, maxT, 0, r.cfg.Ops, nil); err != nil {
				return err
			}
		}
	}
	return nil
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
		return 0, ErrStopped
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
			r.prog.tick("%s %s rep %d/%d: %s t=%d %s", s.Name, g.Name, rep+1, r.cfg.Reps, p.Name, threads, d.cfg.Name)
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

// progress writes one line, rewritten in place, at most every 200 ms.
type progress struct {
	w     io.Writer
	start time.Time
	last  time.Time
}

func newProgress(w io.Writer) *progress { return &progress{w: w, start: time.Now()} }

func (p *progress) stage(f string, args ...any) {
	p.print(fmt.Sprintf(f, args...))
}

func (p *progress) tick(f string, args ...any) {
	if time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.print(fmt.Sprintf(f, args...))
}

func (p *progress) print(s string) {
	if p.w == nil {
		return
	}
	p.last = time.Now()
	el := time.Since(p.start).Truncate(time.Second)
	if len(s) > 110 {
		s = s[:110]
	}
	fmt.Fprintf(p.w, "\r\033[K[%s] %s", el, s)
}

func (p *progress) done() {
	if p.w != nil {
		fmt.Fprintf(p.w, "\r\033[K[%s] done\n", time.Since(p.start).Truncate(time.Second))
	}
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
