package plan

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/family"
)

// DefaultRefitInterval is the least time between two refits of a Live
// unless NewLive is given another.
const DefaultRefitInterval = time.Minute

// ErrStarted is Live.Start's error when the plan runs already.
var ErrStarted = errors.New("plan: live plan already started")

// ErrNotStarted is Live.Refit's error before Start.
var ErrNotStarted = errors.New("plan: live plan not started")

// Live is a plan that fits itself to a running database and refits as
// it grows, keeping the filter bytes the lookups load within its ceiling
// (Config.MaxFilterBytes). Set it on the options before Open with
// Apply, then call Start with the open database; it refits after flushes,
// compactions and ingests, at most once per refit interval unless a tenth of
// the database has been written since the last fit, in a goroutine of its
// own: writes and reads never wait for it. Call Stop before closing the
// database.
//
// Each level gets a policy object of this package's family that writes each
// new table at the budget of the latest fit: every block carries its own
// parameters, so any reader of this package reads them all, and a table's
// filter is always read by the policy its properties name. The levels write
// only this package's blocks: cuckoo filters from 4 bits per key; below
// that, Pebble's bloom filter at the bits the plan gives it, its table
// wrapped in this package's trailer (the plan's reports call it "bloom(b)
// in cuckoo blocks"); where the plan has no filter, unfiltered blocks (the
// 32-byte trailer alone, "may contain" for every key). Readers of releases
// before the bloom blocks answer "may contain" for them. L6 has no filter
// unless Config.UseL6 is set, and a ceiling of 0 writes none. Before the
// first fit every level writes cuckoopolicy.FilterPolicy(10)'s filters.
//
// A fit plans for L0 as at most four tables (a write burst is short-lived),
// and for a ceiling less what the tables below L0 take beyond what the plan
// at the full ceiling would give them: tables keep the filters they were
// written with until compactions rewrite them, and in a growing database the
// older ones have more bits. The report's estimate is the plan's, on the current tables. The
// OPTIONS file names each level's policy as this package's, so options
// parsed from it read every table's filter.
//
// A Live is safe for concurrent use. Its zero value is not usable: call
// NewLive.
type Live struct {
	cfg      Config
	interval time.Duration
	levels   [7]*liveLevel
	state    atomic.Pointer[[7]pebble.FilterPolicy] // what each level writes now

	// written counts the bytes flushed and ingested since the last fit;
	// sizeAtFit is the tables' bytes that fit saw.
	written   atomic.Uint64
	sizeAtFit uint64
	// l0Keys is the keys of an L0 table when a fit last saw one: the size
	// of the flushes an empty L0 is planned for.
	l0Keys atomic.Uint64

	mu      sync.Mutex
	db      *pebble.DB
	status  Status
	last    time.Time
	kick    chan struct{}
	done    chan struct{}
	stopped bool
	wg      sync.WaitGroup
}

// Status is what a Live has done: its latest fit's report (the plan
// its levels write now, its bytes and expected false positives at equal
// memory beside the alternatives), how many fits it has run, when the last
// ran and how long it took, and the error of the last, if it failed (the
// levels then keep the plan before it).
type Status struct {
	Report
	Refits   int
	LastFit  time.Time
	FitTime  time.Duration
	FitError error
}

// liveLevel is a Live's policy for one level.
type liveLevel struct {
	lp    *Live
	level int
}

var _ pebble.FilterPolicy = (*liveLevel)(nil)

// Name implements the pebble.FilterPolicy interface: this package's name.
func (l *liveLevel) Name() string { return cuckoopolicy.PolicyName }

// MayContain implements the pebble.FilterPolicy interface, as
// cuckoopolicy.FilterPolicy.MayContain does.
func (l *liveLevel) MayContain(ftype pebble.FilterType, filter, key []byte) bool {
	return cuckoopolicy.FilterPolicy(0).MayContain(ftype, filter, key)
}

// NewWriter implements the pebble.FilterPolicy interface: a writer at the
// level's budget of the moment.
func (l *liveLevel) NewWriter(ftype pebble.FilterType) pebble.FilterWriter {
	p := l.current()
	if p == nil || p.Name() != cuckoopolicy.PolicyName {
		p = cuckoopolicy.FilterPolicy(cuckoopolicy.MinBitsPerKey) // builds never fail
	}
	return p.NewWriter(ftype)
}

// current is the level's policy of the moment, of this package's family.
func (l *liveLevel) current() pebble.FilterPolicy { return l.lp.state.Load()[l.level] }

// String returns the level's policy of the moment.
func (l *liveLevel) String() string { return "live " + policyLabel(l) }

// NewLive returns a live plan for cfg that refits at most once per
// interval (0 means DefaultRefitInterval).
func NewLive(cfg Config, interval time.Duration) *Live {
	if interval <= 0 {
		interval = DefaultRefitInterval
	}
	lp := &Live{cfg: cfg.withDefaults(), interval: interval, kick: make(chan struct{}, 1), done: make(chan struct{})}
	var init [7]pebble.FilterPolicy
	for l := range lp.levels {
		lp.levels[l] = &liveLevel{lp: lp, level: l}
		init[l] = cuckoopolicy.FilterPolicy(10)
	}
	lp.state.Store(&init)
	lp.status.Config = lp.cfg
	return lp
}

// Apply configures opts for the live plan, as Apply does for a plan:
// every level's policy (the plan's level objects; pebble.NoFilterPolicy on
// L6 without UseL6, and everywhere for a ceiling of 0), the readers of
// both families, and an event listener, chained after opts.EventListener,
// that asks for a refit after each flush, compaction and ingest. Call it
// before pebble.Open. It panics if opts is nil, as a programming error.
func (lp *Live) Apply(opts *pebble.Options) {
	if opts == nil {
		panic("plan: Live.Apply with nil *pebble.Options")
	}
	var p Plan
	if lp.cfg.MaxFilterBytes > 0 {
		for l := range p {
			p[l] = lp.levels[l]
		}
		if !lp.cfg.UseL6 {
			p[6] = nil
		}
	}
	Apply(opts, p)
	ask := func() {
		select {
		case lp.kick <- struct{}{}:
		default:
		}
	}
	el := pebble.EventListener{
		FlushEnd: func(info pebble.FlushInfo) {
			for _, t := range info.Output {
				lp.written.Add(t.Size)
			}
			ask()
		},
		CompactionEnd: func(pebble.CompactionInfo) { ask() },
		TableIngested: func(info pebble.TableIngestInfo) {
			for _, t := range info.Tables {
				lp.written.Add(t.Size)
			}
			ask()
		},
	}
	if opts.EventListener != nil {
		el = pebble.TeeEventListener(*opts.EventListener, el)
	}
	opts.EventListener = &el
}

// Start fits the plan to db, an open database whose options Apply
// configured, and starts refitting it as db changes. It returns the first
// fit's error (ErrClosed, or Pebble's): the plan then keeps
// running and tries again after the next change. Start on a started plan
// returns ErrStarted.
func (lp *Live) Start(db *pebble.DB) error {
	if db == nil {
		panic("plan: Live.Start with nil *pebble.DB")
	}
	lp.mu.Lock()
	if lp.db != nil || lp.stopped {
		lp.mu.Unlock()
		return ErrStarted
	}
	lp.db = db
	lp.mu.Unlock()
	err := lp.Refit()
	lp.wg.Add(1)
	go lp.run()
	return err
}

// Stop ends the refits and waits for one in progress. The levels keep
// writing the last plan. Call it before closing the database; Stop is
// idempotent.
func (lp *Live) Stop() {
	lp.mu.Lock()
	if lp.stopped {
		lp.mu.Unlock()
		return
	}
	lp.stopped = true
	close(lp.done)
	lp.mu.Unlock()
	lp.wg.Wait()
}

// Status returns what the plan has done so far.
func (lp *Live) Status() Status {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	return lp.status
}

// Plan returns the plan the levels write now.
func (lp *Live) Plan() Plan {
	st := lp.state.Load()
	var p Plan
	for l, c := range st {
		if c != family.Unfiltered {
			p[l] = c
		}
	}
	if lp.cfg.MaxFilterBytes == 0 {
		return Plan{}
	}
	if !lp.cfg.UseL6 {
		p[6] = nil
	}
	return p
}

func (lp *Live) run() {
	defer lp.wg.Done()
	for {
		select {
		case <-lp.done:
			return
		case <-lp.kick:
		}
		lp.mu.Lock()
		wait := time.Until(lp.last.Add(lp.interval))
		// Writes of a tenth of the database since the last fit refit at
		// once: a plan a few flushes old is fitted to an LSM that is gone.
		if lp.written.Load()*growthRefit >= lp.sizeAtFit {
			wait = 0
		}
		lp.mu.Unlock()
		if wait > 0 {
			select {
			case <-lp.done:
				return
			case <-time.After(wait):
			}
		}
		_ = lp.Refit() // recorded in the status
	}
}

// Refit fits the plan to the database now, whatever the interval, and sets
// the levels to write it. It returns the fit's error; on an error the levels
// keep the plan they had. Refit before Start returns ErrNotStarted.
func (lp *Live) Refit() error {
	lp.mu.Lock()
	db := lp.db
	lp.mu.Unlock()
	if db == nil {
		return ErrNotStarted
	}
	start := time.Now()
	written := lp.written.Load()
	r, size, err := lp.fit(db)
	lp.mu.Lock()
	defer lp.mu.Unlock()
	now := time.Now()
	lp.status.Refits++
	lp.status.LastFit, lp.status.FitTime, lp.status.FitError = now, time.Since(start), err
	if err != nil {
		return err
	}
	empty := true
	for _, l := range r.Levels {
		if l.Keys > 0 && l.Probes > 0 {
			empty = false
		}
	}
	if empty {
		// Nothing to fit to yet: keep the plan, and let the first flush
		// refit at once.
		return nil
	}
	lp.last = now
	lp.sizeAtFit = size
	lp.written.Add(-written)
	if lp.cfg.MaxFilterBytes > 0 {
		next := [7]pebble.FilterPolicy(r.Plan)
		lp.state.Store(&next)
	}
	for l, p := range r.Plan {
		if p == family.Unfiltered {
			r.Plan[l] = nil
		}
	}
	lp.status.Report = r
	return nil
}

// fit returns the live model's report on db and the bytes of its tables.
func (lp *Live) fit(db *pebble.DB) (Report, uint64, error) {
	s, cur, err := readShape(db, float64(lp.cfg.LevelMultiplier))
	if err != nil {
		return Report{}, 0, err
	}
	if lp.cfg.Current != nil {
		cur = optionsPlan(lp.cfg.Current)
	}
	if s.tables[0] > 0 {
		lp.l0Keys.Store(max(s.keys[0]/uint64(s.tables[0]), 1))
	} else {
		s.flushedL0(lp.l0Keys.Load())
	}
	s.steadyL0()
	s.steadyLevels()
	m := lp.cfg.model()
	m.live = true
	cfg := lp.cfg
	cfg.MaxFilterBytes = lp.target(s, m)
	r := s.report(cfg, cur, m)
	r.Config = lp.cfg
	return r, s.size, nil
}

// target is the ceiling a refit plans new tables for: the plan's ceiling
// less the excess of the tables below L0 over what the plan at the ceiling
// (the reference) would take on them, at least half the ceiling. Tables keep
// their filters until compactions rewrite them, and in a growing database
// the older ones were written for fewer keys, with more bits: new tables make
// up for them while they last, and tables written with fewer bytes than the
// reference give theirs back. The reference depends on the tables' keys
// alone, never on what earlier refits chose, so a refit that spent less
// cannot make the next spend less still.
func (lp *Live) target(s shape, m model) uint64 {
	c := lp.cfg.MaxFilterBytes
	if !lp.cfg.UseL6 {
		s.probes[6] = 0
	}
	ref, _ := s.plan(float64(c), m)
	var excess float64
	for l := 1; l < 7; l++ {
		if !s.active(l) || s.projected[l] {
			continue
		}
		model, _ := s.levelCost(l, ref[l])
		excess += float64(s.filterBytes[l]) - model
	}
	switch {
	case excess <= 0:
		return c
	case excess >= float64(c/2):
		return c / 2
	}
	return c - uint64(excess)
}

// growthRefit: bytes written of a growthRefit-th of the database's tables
// since the last fit ask for a refit without waiting for the interval.
const growthRefit = 10

// steadyL0Tables is the L0 a live plan fits to: Pebble's default
// L0CompactionThreshold of tables.
const steadyL0Tables = 4

// steadyL0 scales L0 down to steadyL0Tables tables where it holds more: a
// live plan refits during write bursts, when L0 piles up for a moment, and a
// plan fitted to that moment gives L0's short-lived tables the bytes of the
// levels its compactions are writing to.
func (s *shape) steadyL0() {
	t := s.tables[0]
	if t <= steadyL0Tables {
		return
	}
	f := float64(steadyL0Tables) / float64(t)
	s.keys[0] = uint64(float64(s.keys[0]) * f)
	s.probes[0] *= f
	s.tables[0] = steadyL0Tables
	s.sizes[0] = nil
}

// steadyLevels scales each level between L0 and the deepest down to the
// size Pebble targets for it, where it holds more (its fill factor above 1).
// In a write burst the upper levels hold several times their targets for a
// while, and a plan fitted to that moment would give the tables compactions
// write then, which outlast the burst, a fraction of the bits. A level's
// filter bytes scale with its keys, so that the excess target counts is bits
// per key, not compaction debt.
func (s *shape) steadyLevels() {
	deepest := 0
	for l := 6; l >= 1; l-- {
		if s.tables[l] > 0 && !s.projected[l] {
			deepest = l
			break
		}
	}
	for l := 1; l < deepest; l++ {
		if s.projected[l] || !(s.fill[l] > 1) {
			continue
		}
		f := 1 / s.fill[l]
		s.keys[l] = max(uint64(float64(s.keys[l])*f), 1)
		s.filterBytes[l] = uint64(float64(s.filterBytes[l]) * f)
		s.tables[l] = max(int(math.Round(float64(s.tables[l])*f)), 1)
		s.sizes[l] = nil
	}
}

// flushedL0 plans an empty L0 for the tables the next flushes write: half
// of steadyL0Tables tables of perTable keys, each probed by every lookup. A
// plan has nothing to fit on an empty L0 and would give it the policy of
// the level below, often a small projected one at the cap, and the
// flushes that follow would write L0 at many times the bits it is worth.
// Without a size seen yet (0) L0 stays empty.
func (s *shape) flushedL0(perTable uint64) {
	if perTable == 0 {
		return
	}
	const tables = steadyL0Tables / 2
	s.keys[0], s.tables[0], s.probes[0] = tables*perTable, tables, tables
	s.sizes[0] = nil
	s.projected[0] = true
}
