package workload

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/progress"
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
	Out           string        // report directory: must be empty or absent; "" for a new temporary one
	Seed          uint64
	CommandLine   string          // for the report
	Progress      io.Writer       // a progress line; nil: none
	Stop          <-chan struct{} // closed to stop early: Run removes its databases and returns an error saying so
	// Shapes, Regimes and Paths restrict the run (nil: all); "pressure"
	// among Regimes names both pressure regimes.
	Shapes, Regimes, Paths []string
	LoadRounds             int      // lockstep loads of bloom(B) and cuckoo(B) per shape (0: loading not measured)
	LoadKeys               int      // entries per lockstep load (0: Keys), a flush every tenth of them
	TimeAll                bool     // time every policy; false: only none, bloom(B), cuckoo(B) and the spreads (the others are counted, not timed)
	LoadShapes             []string // the shapes whose loading is measured (nil: all but deep)
	// FilterPlans measures the filter plans beside the other policies:
	// bloom(10)-noL6, bloom-progressive, progressive and plan.Fit's plans
	// (planfor-get, planfor-noL6bytes, planfor-2x, planfor-l6) with the
	// best bloom-only plans at the same ceilings (bloomonly-noL6bytes,
	// bloomonly-2x, bloomonly-l6), against bloom(10), which is then always
	// built, and each other. Where TimeAll is false they are counted on the
	// absent paths and timed only where a target needs their time.
	FilterPlans bool
	// Twin builds bloom(10) a second time into its own database (the A/A
	// twin, named bloom(10)-twin), timed wherever bloom(10) is: every time
	// table shows its ratio to bloom(10), and a cell is judged slower only
	// where its interval lies above the twin's too.
	Twin bool
	// PressureShapes are the shapes the pressure regimes run on (nil: all
	// the run measures).
	PressureShapes []string
}

// Defaults returns the configuration of a mode: "tiny", "quick" or "full".
func Defaults(mode string) Config {
	c := Config{Mode: mode, Budgets: []int{10, 12, 16}, Threads: []int{1, 2}, Delay: 50 * time.Microsecond, Seed: 1, TimeAll: true, FilterPlans: true, Twin: true}
	switch mode {
	case "tiny":
		c.Keys, c.FlushEvery, c.BurstTables = 6000, 1500, 4
		c.LBaseMaxBytes, c.FileSize = 64<<10, 64<<10
		c.Ops, c.Reps, c.CountOps = 100, 2, 500
		c.LoadRounds, c.LoadShapes = 1, []string{"steady", "burst"}
		c.PressureShapes = []string{"steady"}
	case "quick":
		c.Keys, c.FlushEvery, c.BurstTables = 300_000, 30_000, 8
		c.LBaseMaxBytes, c.FileSize = 64<<10, 256<<10
		c.Ops, c.RunTime, c.Reps, c.CountOps, c.SubRuns = 200, 15*time.Millisecond, 10, 20_000, 3
		c.Threads, c.TimeAll = []int{1}, false
		c.LoadRounds, c.LoadShapes, c.LoadKeys = 3, []string{"steady"}, 100_000
		c.PressureShapes = []string{"steady"}
	default:
		c.Mode = "full"
		c.Keys, c.FlushEvery, c.BurstTables = 3_000_000, 150_000, 10
		c.LBaseMaxBytes, c.FileSize = 1<<20, 2<<20
		c.Ops, c.RunTime, c.Reps, c.CountOps, c.SubRuns = 500, 45*time.Millisecond, 10, 500_000, 3
		c.LoadRounds = 3
	}
	return c
}

// errDirNotEmpty is returned for a data directory that holds anything.
var errDirNotEmpty = errors.New("workload: data directory is not empty")

// errOutNotEmpty is returned for a report directory that holds anything:
// a run never overwrites an earlier report.
var errOutNotEmpty = errors.New("workload: report directory is not empty")

// errStopped is returned when Config.Stop was closed; the data directory
// is cleaned up as after a complete run, and no report is written.
var errStopped = errors.New("workload: stopped")

// ErrLostKeys is returned, with the report written, when a present key was
// not read back with its value or an absent key was found.
var ErrLostKeys = errors.New("workload: keys lost")

// dbInst is one measured database.
type dbInst struct {
	cfg   policyCfg
	dir   string
	st    *ioStats
	db    *pebble.DB
	cache *pebble.Cache
	shape lsmShape
	sig   lsmSig // the LSM as built: the identity every regime checks again
}

type runner struct {
	cfg  Config
	prog *progress.Printer
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
	n := uint64(r.entries(s))
	if s.mvcc() {
		n /= mvccVersions
	}
	return keyspace{seed: shapeSeed(r.cfg.Seed, s.Name), kind: s.Keys, n: n}
}

// entries is the number of entries a shape loads.
func (r *runner) entries(s shapeSpec) int {
	if s.mvcc() {
		return r.cfg.Keys / mvccVersions * mvccVersions
	}
	return r.cfg.Keys
}

// Run runs the benchmark and writes WORKLOAD.md and the plots in cfg.Out
// ("": a new temporary directory); the returned Result's Config.Out is that
// directory, resolved. It resolves cfg.Out and cfg.Dir through symbolic
// links, dangling ones included, and refuses, creating and touching
// nothing, either if it holds anything (errOutNotEmpty, errDirNotEmpty) and
// the two if they are the same directory or lie one inside the other
// (errNested); it checks that the report directory is writable before
// anything runs. It removes the databases in every case, and the report
// when the run fails or is stopped; of the directories, only those it
// created (the directory and its missing parents), never a link. It
// returns ErrLostKeys, after writing the report, if any present key was
// not read back.
func Run(cfg Config) (*Result, error) {
	o, d, err := checkDirs(cfg.Out, cfg.Dir)
	if err != nil {
		return nil, err
	}
	out, outCleanup, err := o.create()
	if err != nil {
		return nil, err
	}
	if err := checkWritable(out); err != nil {
		outCleanup()
		return nil, err
	}
	dataDir, cleanup, err := d.create()
	if err != nil {
		outCleanup()
		return nil, err
	}
	failed := true
	defer func() {
		cleanup() // first: the data directory may lie in a parent created for the report's
		if failed {
			outCleanup()
		}
	}()
	cfg.Out = out
	res, err := run(cfg, dataDir)
	failed = err != nil && !errors.Is(err, ErrLostKeys)
	return res, err
}

func run(cfg Config, dataDir string) (*Result, error) {
	r := &runner{cfg: cfg, prog: progress.New(cfg.Progress)}
	r.res = &Result{Config: cfg, Start: time.Now(), Cells: map[cellKey]map[string]*cellStats{},
		Truth: map[string]map[string]map[string]truthCounts{}}
	res := r.res
	res.DelayMeasured = calibrateDelay(cfg.Delay)

	// In-process false-positive rates, for the matched budgets and the spread.
	n, probes := 200_000, 2_000_000
	if cfg.Mode == "tiny" {
		n, probes = 20_000, 100_000
	}
	r.prog.Stage("false-positive rates of bloom and cuckoo, %d keys, %d probes per budget", n, probes)
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
	r.prog.Stage("done")
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
	if r.cfg.FilterPlans {
		add(famBloom, 10)
		cfgs = append(cfgs, fixedPlans()...)
	}
	return cfgs
}

// shape measures one shape: the lockstep loads, then a database per
// policy built with identical LSMs (from the organically loaded reference's
// tables, or deep's synthetic layout), the counting pass, and every regime;
// it removes its databases.
func (r *runner) shape(s shapeSpec, dataDir string) error {
	base := filepath.Join(dataDir, s.Name)
	defer os.RemoveAll(base)
	sr := shapeResult{Spec: s}
	if r.measuresLoading(s) {
		loads, err := r.loading(s, base)
		if err != nil {
			return fmt.Errorf("loading: %w", err)
		}
		sr.Loads = loads
	}
	lay, refShape, err := r.reference(s, base)
	if err != nil {
		return fmt.Errorf("reference: %w", err)
	}
	sr.Reference = refShape
	dbs, built, err := r.databases(s, lay, base)
	if err != nil {
		return err
	}
	sr.Layout = built.summary()
	sr.Layout.Synthetic, sr.Layout.Moved = s.Deep, moved(lay, built)
	if err := checkDeep(s, sr.Layout); err != nil {
		return err
	}
	os.RemoveAll(filepath.Join(base, "reference"))
	truth := map[string]map[string]truthCounts{}
	for _, d := range dbs {
		if d.cfg.Name == twinName {
			continue // bloom(10)'s filter blocks, byte for byte
		}
		r.prog.Stage("count %s: %s", s.Name, d.cfg.Name)
		t, err := r.countPass(s, d)
		if err != nil {
			return fmt.Errorf("counting pass of %s: %w", d.cfg.Name, err)
		}
		truth[d.cfg.Name] = t
	}
	r.res.Truth[s.Name] = truth
	for _, d := range dbs {
		sr.DBs = append(sr.DBs, dbRow{Cfg: d.cfg, Shape: d.shape, Sig: d.sig})
	}
	r.res.Shapes = append(r.res.Shapes, sr)

	for _, g := range allRegimes {
		if !r.runsRegimeOn(g, s) {
			continue
		}
		if err := r.regime(s, g, r.timed(s, g, dbs)); err != nil {
			return fmt.Errorf("regime %s: %w", g.Name, err)
		}
	}
	return nil
}

// databases builds every policy's database of the shape in base from lay:
// the uniform policies and the fixed filter plans, then, from bloom(10)'s
// database, the per-level spreads and plan.Fit's plans. It returns them and
// the layout as built.
func (r *runner) databases(s shapeSpec, lay layout, base string) ([]*dbInst, layout, error) {
	newDB := func(c policyCfg) *dbInst {
		return &dbInst{cfg: c, dir: filepath.Join(base, sanitize(c.Name)), st: &ioStats{}}
	}
	var dbs []*dbInst
	for _, c := range r.uniformConfigs() {
		dbs = append(dbs, newDB(c))
	}
	built, err := r.build(s, lay, dbs, nil)
	if err != nil {
		return nil, lay, err
	}
	more := r.spreads(s, dbs)
	plans, err := r.planFors(s, dbs)
	if err != nil {
		return nil, built, err
	}
	var extra []*dbInst
	for _, c := range append(more, plans...) {
		extra = append(extra, newDB(c))
	}
	if r.cfg.Twin && findDB(dbs, planBase) != nil {
		// Last, so that in the run order it sits as far from bloom(10)
		// as any policy does.
		extra = append(extra, newDB(policyCfg{Name: twinName, Family: famBloom, B: 10}))
	}
	if len(extra) > 0 {
		if _, err := r.build(s, built, extra, dbs[0]); err != nil {
			return nil, built, err
		}
	}
	return append(dbs, extra...), built, nil
}

// reference returns the layout every policy's database of the shape gets:
// deep's synthetic one, or the tables of a database loaded organically
// (no filters), which stays in base/reference until the databases are
// built.
func (r *runner) reference(s shapeSpec, base string) (layout, lsmShape, error) {
	if s.Deep {
		tableKeys := max(16, int(r.cfg.FileSize)/(16+r.keyspace(s).valueLen()+8))
		lay := deepLayout(r.keyspace(s), r.entries(s), tableKeys)
		return lay, lsmShape{Sublevels: lay.Sublevels}, nil
	}
	ref := &organic{cfg: policyCfg{Name: "reference", Family: famNone}, dir: filepath.Join(base, "reference"), st: &ioStats{}}
	r.prog.Stage("load %s: the reference database", s.Name)
	if err := r.loadLockstep(s, []*organic{ref}, 0, uint64(r.entries(s)), r.cfg.FlushEvery); err != nil {
		return layout{}, lsmShape{}, err
	}
	db, err := pebble.Open(ref.dir, r.options(s, ref.cfg, ref.st, nil, true))
	if err != nil {
		return layout{}, lsmShape{}, err
	}
	lay, err := captureLayout(db, ref.dir)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return lay, ref.shape, err
}

// spreads are the per-level spread policies of the shape, computed from
// bloom(10)'s database among dbs (none if it is not there).
func (r *runner) spreads(s shapeSpec, dbs []*dbInst) []policyCfg {
	var ref *dbInst
	for _, d := range dbs {
		if d.cfg.Name == "bloom(10)" {
			ref = d
		}
	}
	if ref == nil {
		return nil
	}
	fb, _ := ref.shape.totalFilter()
	// The keys each level's filters hold (MVCC: prefixes, not versions),
	// from bloom(10)'s filter bits.
	in := spreadInput{Probes: ref.shape.getProbes(), Bits: 8 * float64(fb)}
	for l := range in.Keys {
		in.Keys[l] = 8 * ref.shape.FilterBytes[l] / 10
	}
	var out []policyCfg
	for _, fam := range []string{famBloom, famCuckoo} {
		c := policyCfg{Name: fam + "-spread", Family: fam, PerLevel: true}
		switch fam {
		case famBloom:
			c.Levels = spread(r.res.BloomFPR, in)
		default:
			c.Levels = spread(r.res.CuckooFPR, in)
		}
		r.res.Spreads = append(r.res.Spreads, spreadRow{Shape: s.Name, Cfg: c, In: in})
		out = append(out, c)
	}
	return out
}

// timed returns the databases whose operations are timed in shape s and
// regime g: a pressure regime's policies, or all (Config.TimeAll), or the
// uniform policies at the budgets, the spreads and the plans a target needs;
// and the twin wherever bloom(10) is timed.
func (r *runner) timed(s shapeSpec, g regimeSpec, dbs []*dbInst) []*dbInst {
	var out []*dbInst
	for _, d := range dbs {
		c := d.cfg
		switch {
		case c.Name == twinName:
		case g.Policies != nil:
			if slices.Contains(g.Policies, c.Name) {
				out = append(out, d)
			}
		case r.cfg.TimeAll:
			if c.Family != famPlan || r.timesPlan(c, s, g) {
				out = append(out, d)
			}
		case c.Family == famPlan:
			if r.timesPlan(c, s, g) {
				out = append(out, d)
			}
		case c.Family == famNone || c.PerLevel || (c.Tuned == nil && slices.Contains(r.cfg.Budgets, c.B)):
			out = append(out, d)
		}
	}
	if twin := findDB(dbs, twinName); twin != nil && findDB(out, planBase) != nil {
		out = append(out, twin)
	}
	return out
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
