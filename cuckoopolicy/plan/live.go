package plan

import (
	"errors"
	"fmt"
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

// errFitPanic wraps a panic inside Pebble during a live fit, which a
// database closed under it causes.
var errFitPanic = errors.New("plan: the fit panicked inside Pebble (was the database closed without Stop?)")

// ErrNotStarted is Live.Refit's error before Start.
var ErrNotStarted = errors.New("plan: live plan not started")

// Live is a plan that fits itself to a running database and refits as
// it grows, keeping the filter bytes the lookups load within its ceiling
// (Config.MaxFilterBytes). Set it on the options before Open with Apply,
// then call Start with the open database and close the database with the
// DB Start returns. It refits after flushes, compactions and ingests: at
// once when a tenth of the database has been written since the last fit
// (checked on every flush and ingest), otherwise at most once per refit
// interval. Fits run one at a time, in goroutines of the plan's own that
// end with the fit: writes and reads never wait for them, and an idle plan
// holds no goroutine.
//
// Each level gets a policy object of cuckoopolicy's family that writes
// each new table at the budget of the latest fit: every block carries its
// own parameters, so any cuckoopolicy reader reads them all, and a table's
// filter is always read by the policy its properties name. The levels
// write cuckoo filters from 4 bits per key; below that, Pebble's bloom
// table at the bits the plan gives it inside cuckoopolicy's trailer
// ("bloom(b) in cuckoo blocks" in reports); where the plan has no filter,
// unfiltered blocks ("may contain" for every key). Readers of releases
// before the bloom blocks answer "may contain" for them. L6 has no filter
// unless Config.UseL6 is set, and a ceiling of 0 writes none. Before the
// first fit every level writes cuckoopolicy.FilterPolicy(10)'s filters.
//
// A fit plans for L0 as at most four tables (a write burst is short-lived),
// and for a ceiling less what the tables below L0 take beyond what the plan
// at the full ceiling would give them: tables keep the filters they were
// written with until compactions rewrite them, and in a growing database
// the older ones have more bits. The OPTIONS file names each level's
// policy as cuckoopolicy's, so options parsed from it read every table's
// filter.
//
// Start, Stop, Refit, Status, Plan and the DB's Close are safe for
// concurrent use and in any order. Its zero value is not usable: call
// NewLive.
type Live struct {
	cfg      Config
	interval time.Duration
	levels   [7]*liveLevel
	state    atomic.Pointer[[7]pebble.FilterPolicy] // what each level writes now

	// written counts the bytes flushed and ingested since the last fit
	// began; only a fit, under fitMu, takes from it.
	written atomic.Uint64
	// l0Keys is the keys of an L0 table when a fit last saw one: the size
	// of the flushes an empty L0 is planned for.
	l0Keys atomic.Uint64
	// levelsAtFit has a bit for each level that held tables at the last
	// fit; newLevel is set when a table lands on another.
	levelsAtFit atomic.Uint32
	newLevel    atomic.Bool

	fitMu sync.Mutex // held by the one fit that runs

	mu        sync.Mutex
	opts      Plan // the options' policies before Apply: the default reference
	run       *run // the database the plan runs on; nil when stopped
	status    Status
	last      time.Time // when the last fit that set a plan ended
	sizeAtFit uint64    // the tables' bytes that fit saw
}

// run is one Start's hold on a database, until Stop or DB.Close.
type run struct {
	db      *pebble.DB
	fits    sync.WaitGroup // fits running on db
	pending bool           // a background fit is running or scheduled
	timer   *time.Timer    // the refit the interval holds back, if any
}

// DB is an open database a live plan runs on, as Live.Start returns it.
// Close it, not the *pebble.DB it embeds: its Close stops the plan's refits
// and waits for one in progress before Pebble closes the database, which
// Pebble requires (it closes with no other call in flight).
type DB struct {
	*pebble.DB
	lp  *Live
	run *run
}

// Close stops the live plan on the database, waits for a refit in
// progress, and closes the database. It returns Pebble's Close error.
func (d *DB) Close() error {
	d.lp.stop(d.run)
	return d.DB.Close()
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
	lp := &Live{cfg: cfg.withDefaults(), interval: interval}
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
// L6 without UseL6, and everywhere for a Fixed budget of 0), the readers of
// both families, and an event listener, chained after opts.EventListener,
// that asks for a refit after each flush, compaction and ingest. Where
// Config.Reference and Config.Current are nil, the levels' policies opts
// had before, if any has a filter, are the reference. Call it before
// pebble.Open. It panics if opts is nil, as a programming error.
func (lp *Live) Apply(opts *pebble.Options) {
	if opts == nil {
		panic("plan: Live.Apply with nil *pebble.Options")
	}
	if before := optionsPlan(opts); before != (Plan{}) && !lp.applied(opts) {
		lp.mu.Lock()
		lp.opts = before
		lp.mu.Unlock()
	}
	var p Plan
	if !lp.cfg.Fixed || lp.cfg.MaxFilterBytes > 0 {
		for l := range p {
			p[l] = lp.levels[l]
		}
		if !lp.cfg.UseL6 {
			p[6] = nil
		}
	}
	Apply(opts, p)
	el := pebble.EventListener{
		FlushEnd: func(info pebble.FlushInfo) {
			for _, t := range info.Output {
				lp.written.Add(t.Size)
			}
			lp.wrote(0)
		},
		CompactionEnd: func(info pebble.CompactionInfo) { lp.wrote(info.Output.Level) },
		TableIngested: func(info pebble.TableIngestInfo) {
			for _, t := range info.Tables {
				lp.written.Add(t.Size)
				lp.wrote(t.Level)
			}
		},
	}
	if opts.EventListener != nil {
		el = pebble.TeeEventListener(*opts.EventListener, el)
	}
	opts.EventListener = &el
}

// applied reports whether opts' levels are this plan's already (a second
// Apply), whose policies are no reference.
func (lp *Live) applied(opts *pebble.Options) bool {
	for _, l := range opts.Levels {
		if ll, ok := l.FilterPolicy.(*liveLevel); ok && ll.lp == lp {
			return true
		}
	}
	return false
}

// wrote asks for a refit after a table was written on level: at once where
// the level was empty at the last fit (a level that forms has no plan of
// its own yet).
func (lp *Live) wrote(level int) {
	if level >= 0 && level < 7 && lp.levelsAtFit.Load()&(1<<level) == 0 {
		lp.newLevel.Store(true)
	}
	lp.request()
}

// Start fits the plan to db, an open database whose options Apply
// configured, and refits it as db changes until Stop or the returned DB's
// Close. The first fit runs before Start returns; its error (ErrClosed, or
// Pebble's) is returned with the DB, and the plan keeps running and fits
// again after the next change. Start on a plan that runs on a database
// returns ErrStarted and a nil DB; after Stop it starts again.
//
// Close the database with the returned DB's Close. Pebble's own Close is
// not safe beside another call on the database, a refit's reads included:
// a caller that closes the *pebble.DB itself calls Stop first.
func (lp *Live) Start(db *pebble.DB) (*DB, error) {
	if db == nil {
		panic("plan: Live.Start with nil *pebble.DB")
	}
	lp.mu.Lock()
	if lp.run != nil {
		lp.mu.Unlock()
		return nil, ErrStarted
	}
	r := &run{db: db}
	lp.run = r
	r.fits.Add(1)
	lp.mu.Unlock()
	err := lp.refit(r)
	return &DB{DB: db, lp: lp, run: r}, err
}

// Stop ends the refits and waits for one in progress. The levels keep
// writing the last plan. Stop is idempotent, and safe at any time and
// from any goroutine; a database closed through Live.Start's DB needs none.
func (lp *Live) Stop() {
	lp.mu.Lock()
	r := lp.run
	lp.mu.Unlock()
	lp.stop(r)
}

// stop ends r: no fit starts on its database from now on, and stop
// returns once the fits running on it have ended.
func (lp *Live) stop(r *run) {
	if r == nil {
		return
	}
	lp.mu.Lock()
	if lp.run == r {
		lp.run = nil
	}
	if r.timer != nil && r.timer.Stop() {
		// The scheduled fit will not run: release its count.
		r.timer, r.pending = nil, false
		r.fits.Done()
	}
	lp.mu.Unlock()
	r.fits.Wait()
}

// Status returns what the plan has done so far. Until a fit sets a plan,
// its Plan is what the levels write.
func (lp *Live) Status() Status {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	st := lp.status
	if st.Plan == (Plan{}) { // no fit has set a plan yet
		st.Plan = lp.Plan()
	}
	return st
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
	if lp.cfg.Fixed && lp.cfg.MaxFilterBytes == 0 {
		return Plan{}
	}
	if !lp.cfg.UseL6 {
		p[6] = nil
	}
	return p
}

// request asks for a refit, from Pebble's event listener (with the
// database's mutex held: it never blocks, nor calls the database). A refit
// starts at once where a tenth of the database has been written since the
// last fit or the interval has passed, and after the rest of the interval
// otherwise; one runs at a time, and a request while one runs or waits is
// served by it or by the check after it.
func (lp *Live) request() {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	lp.schedule(lp.run)
}

// schedule is request with lp.mu held, for r.
func (lp *Live) schedule(r *run) {
	if r == nil || lp.run != r {
		return
	}
	wait := time.Until(lp.last.Add(lp.interval))
	if lp.urgent() {
		wait = 0
	}
	if r.pending {
		// A fit the interval holds back starts now if the writes ask.
		if wait <= 0 && r.timer != nil && r.timer.Stop() {
			r.timer = nil
			go lp.background(r)
		}
		return
	}
	r.pending = true
	r.fits.Add(1)
	if wait <= 0 {
		go lp.background(r)
		return
	}
	r.timer = time.AfterFunc(wait, func() { lp.background(r) })
}

// urgent reports, with lp.mu held, whether a refit should not wait for the
// interval: writes of a tenth of the database since the last fit (a plan a
// few flushes old is fitted to an LSM that is gone), or a table on a level
// that was empty then.
func (lp *Live) urgent() bool {
	return lp.written.Load()*growthRefit >= lp.sizeAtFit || lp.newLevel.Load()
}

// background runs a requested fit on r, then checks whether the writes
// made meanwhile ask for another.
func (lp *Live) background(r *run) {
	lp.mu.Lock()
	r.timer = nil
	if lp.run != r { // stopped while it waited
		r.pending = false
		lp.mu.Unlock()
		r.fits.Done()
		return
	}
	lp.mu.Unlock()
	lp.refit(r) // its error is in the status
	lp.mu.Lock()
	r.pending = false
	if (lp.written.Load() > 0 || lp.newLevel.Load()) && lp.urgent() {
		lp.schedule(r)
	}
	lp.mu.Unlock()
}

// Refit fits the plan to the database now, whatever the interval, and sets
// the levels to write it, after any fit in progress. It returns the fit's
// error; on an error the levels keep the plan they had. Refit returns
// ErrNotStarted on a plan that does not run on a database.
func (lp *Live) Refit() error {
	lp.mu.Lock()
	r := lp.run
	if r == nil {
		lp.mu.Unlock()
		return ErrNotStarted
	}
	r.fits.Add(1)
	lp.mu.Unlock()
	return lp.refit(r)
}

// refit runs one fit on r, whose fits count it already, and records it.
// A panic inside Pebble (a database closed under the fit) is the fit's
// error: a goroutine of the plan's never takes the process down.
func (lp *Live) refit(r *run) (err error) {
	defer r.fits.Done()
	lp.fitMu.Lock()
	defer lp.fitMu.Unlock()
	start := time.Now()
	written := lp.written.Load()
	lp.newLevel.Store(false) // a level that forms from here on asks again
	var rep Report
	var size uint64
	func() {
		defer func() {
			if p := recover(); p != nil {
				if e, ok := p.(error); ok && errors.Is(e, pebble.ErrClosed) {
					err = fmt.Errorf("%w: %v", ErrClosed, e)
				} else {
					err = fmt.Errorf("%w: %v", errFitPanic, p)
				}
			}
		}()
		rep, size, err = lp.fit(r.db)
	}()
	lp.mu.Lock()
	defer lp.mu.Unlock()
	now := time.Now()
	lp.status.Refits++
	lp.status.LastFit, lp.status.FitTime, lp.status.FitError = now, time.Since(start), err
	if err != nil {
		if (errors.Is(err, ErrClosed) || errors.Is(err, errFitPanic)) && lp.run == r {
			lp.run = nil // the database closed under the plan: stop
		}
		return err
	}
	empty := true
	for _, l := range rep.Levels {
		if l.Keys > 0 && l.Probes > 0 {
			empty = false
		}
	}
	if empty {
		// Nothing to fit to yet: keep the plan, and let the next flush
		// refit at once (with nothing fitted, any write asks).
		lp.written.Add(-written)
		return nil
	}
	lp.last = now
	lp.sizeAtFit = size
	lp.written.Add(-written)
	if !lp.cfg.Fixed || lp.cfg.MaxFilterBytes > 0 {
		next := [7]pebble.FilterPolicy(rep.Plan)
		lp.state.Store(&next)
	}
	for l, p := range rep.Plan {
		if p == family.Unfiltered {
			rep.Plan[l] = nil
		}
	}
	lp.status.Report = rep
	return nil
}
