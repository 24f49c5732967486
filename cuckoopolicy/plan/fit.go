package plan

import (
	"errors"
	"math"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/family"
)

// ErrClosed is the error of Fit and of a live plan's refit on a database
// that is closed.
var ErrClosed = errors.New("plan: database is closed")

// Plan defaults.
const (
	// DefaultCapBitsPerKey is the most bits per key a plan gives a level
	// unless Config.CapBitsPerKey says otherwise: past it, a cuckoo
	// filter's rate is below 1e-5, and its bytes are block cache that data
	// could use.
	DefaultCapBitsPerKey = 20
	// DefaultMinGain is the fewest expected false-positive reads per absent
	// lookup a plan's step must save for each KiB of filter it adds, unless
	// Config.MinGain says otherwise.
	DefaultMinGain = 1e-6
)

// Config says what a plan is for.
//
// The budget: at each fit, the filter bytes the Reference configuration
// would take on the LSM as it is now, on the levels the lookups load (L0 to
// L5, and L6 with UseL6), so that it grows and shrinks with the data as the
// reference's bytes would; at most MaxFilterBytes where that is set. With
// BlockCache, the share of the cache the filters may take beside the
// indexes, for lookups that read L6 filters (the lookup package's). With
// Fixed, MaxFilterBytes itself is the budget. The zero Config plans at the
// bytes of bloom.FilterPolicy(10) on L0 to L5, for db.Get.
type Config struct {
	// Reference is the configuration the plan replaces. nil means the
	// options in Current where they set a filter on some level, otherwise
	// the filters the database's tables carry (for a live plan: the levels'
	// policies of the options Apply configures), and where those have none,
	// bloom.FilterPolicy(10) on L0 to L5 and none on L6.
	Reference *Plan
	// MaxFilterBytes, if not 0, caps the budget: the most filter bytes the
	// lookups may load, for a service with a fixed memory.
	MaxFilterBytes uint64
	// Fixed makes MaxFilterBytes the budget, whatever the reference takes
	// and BlockCache allows; with MaxFilterBytes 0 it plans no filters.
	Fixed bool
	// UseL6 says whether the lookups read L6 filters (iterators with
	// IterOptions.UseL6Filters); db.Get does not, and a plan for it has no
	// filter on L6.
	UseL6 bool
	// CapBitsPerKey caps every level's budget; 0 means
	// DefaultCapBitsPerKey. It is clamped to [cuckoopolicy.MinBitsPerKey,
	// cuckoopolicy.MaxBitsPerKey].
	CapBitsPerKey int
	// MinGain is the fewest expected false-positive reads per absent lookup
	// a step must save per KiB of filter it adds; 0 means DefaultMinGain, a
	// negative value no floor (spend up to the budget).
	MinGain float64
	// BlockCache, if not 0, is the block cache the lookups read through,
	// in the bytes it gives blocks (the cache's size less what the
	// memtables reserve in it): the budget is then CacheBudget of it and
	// the tables' index blocks at each fit, at most MaxFilterBytes where
	// that is set, and the lookups read L6 filters (UseL6 is implied).
	// Where L6's filters do not fit that budget the plan writes none
	// there, and Report.NoL6 says so; where it is below the reference's
	// bytes on L0 to L5 (the indexes take most of the cache's half), the
	// plan is one for db.Get at the reference's bytes, with no L6 filter.
	BlockCache uint64
	// Current, if not nil, are the options the database runs with: the
	// report's Current estimate is their levels' policies. If nil, they are
	// estimated from the filters the tables carry.
	Current *pebble.Options
}

func (c Config) withDefaults() Config {
	if c.CapBitsPerKey == 0 {
		c.CapBitsPerKey = DefaultCapBitsPerKey
	}
	c.CapBitsPerKey = min(max(c.CapBitsPerKey, cuckoopolicy.MinBitsPerKey), cuckoopolicy.MaxBitsPerKey)
	if c.MinGain == 0 {
		c.MinGain = DefaultMinGain
	}
	if c.BlockCache > 0 {
		c.UseL6 = true
	}
	return c
}

// CacheBudget is the most filter bytes that, beside index bytes of index
// blocks, take at most half of a block cache that gives blocks cache
// bytes; 0 where the indexes take half or more.
//
// Why half: every lookup touches filter and index blocks, so they stay
// resident and what they take is gone for data blocks; a filter saves
// only absent lookups, and present ones need their data blocks cached.
// Half leaves data blocks at least what filters and indexes take.
func CacheBudget(cache, index uint64) uint64 {
	half := cache / 2
	if index >= half {
		return 0
	}
	return half - index
}

func (c Config) model() model {
	return model{maxBits: c.CapBitsPerKey, minGain: max(c.MinGain, 0) / 1024, bloom: true, cuckoo: true}
}

// Estimate is a plan's cost on the LSM a Report describes, by the same
// model: the filter bytes the lookups load, and the expected false-positive
// data-block reads of an absent lookup.
type Estimate struct {
	Plan           Plan
	Bytes          uint64
	FalsePositives float64
}

// LevelShape is one level as a plan sees it.
type LevelShape struct {
	Keys      uint64  // distinct keys (prefixes) its filters hold
	Tables    int     // its tables
	Probes    float64 // tables an absent lookup probes there, on average
	Projected bool    // empty now: planned for the flushes to come (L0 only)
}

// Report is a plan with what it costs and what it saves, at equal
// memory beside the alternatives a user weighs: the filters the database
// has now, bloom.FilterPolicy(10) everywhere, and the best plan of Pebble's
// bloom filter alone within the same ceiling (what a bloom user can do
// without this package). Bytes count the filters the lookups load (L0-L5,
// and L6 with UseL6), on the levels as they are and on an empty L0 as
// planned for the flushes to come.
type Report struct {
	Config Config // with defaults filled in
	Levels [7]LevelShape
	// Budget is the filter bytes the plan was fitted within, and
	// BudgetBitsPerKey the same over the keys of the levels the lookups
	// load; Reference is the configuration whose bytes set it (its Plan
	// nil with Config.Fixed), by the same model.
	Budget           uint64
	BudgetBitsPerKey float64
	Reference        Estimate
	Estimate
	Current   Estimate
	Bloom10   Estimate
	BloomOnly Estimate
	// Index is the bytes of the tables' index blocks, each backing file
	// once, which share Config.BlockCache with the filters.
	Index uint64
	// NoL6 is set when the lookups read L6 filters (UseL6) and L6 holds
	// keys, but the plan writes no filter there: at the budget, filters on
	// L6 would cost more than they save, or do not fit beside the other
	// levels'. Absent lookups through L6 filters then read L6's index and
	// data blocks as db.Get does.
	NoL6 bool
	// BelowLeast is set when the ceiling is too small for the least blocks
	// the plan could write (a live plan's unfiltered blocks, 32 bytes a
	// table); the plan is then those.
	BelowLeast bool
}

// Fit returns the plan for db that cfg asks for, with its report.
//
// The model: an absent lookup probes, in each level, the tables whose key
// range holds it (in L0 they overlap; L6 only with UseL6), a table in
// proportion to its keys, and a table's filter admits it with the rate its
// policy gives on that table. Each candidate is costed per table as the
// writer builds it: cuckoopolicy's blocks by the writer's own sizing (small
// tables included) and rates from the fingerprint width and load, Pebble's
// bloom blocks by its line rounding and its measured curve, for every
// budget from 1 (bloom) or 4 (cuckoo) bits per key to the cap. How many
// tables of each level a lookup probes, and how many versions each level
// holds per key prefix, come from a sample of a few thousand positions
// spread over every level's tables in proportion to their entries (L0
// included), read through db.ScanInternal. Table bounds are compared
// bytewise.
//
// A plan spends on the tables the database has (a live plan also on an
// empty L0 as two flushes of the size it last saw there), never on levels
// that may form. An empty L0, and empty levels below the planned ones,
// take the bits per key the budget averages over the keys planned for, at
// most 10; empty levels between L0 and the first planned level take that
// level's policy. Where the lookups read no level that holds keys (every
// key in L6, for Get), there is nothing to fit and the plan is the
// reference's.
//
// The search: the greedy over each level's lower convex hull of (bytes,
// false positives), dominated points removed, taking the step that saves
// the most per byte first, with a fractional last step (a cuckoo Policy at
// the load the bytes left give), and an exact search over every level's
// whole-budget choices with bytes rounded up to 1/65536 of the budget,
// each followed by a pass that moves one or two levels at a time to another
// point while that helps; then the reference itself and FilterPolicy(B) on
// the reference's levels, for every B, where they fit the budget. Fit keeps
// the best: by the model, the plan is never worse than the reference or a
// uniform FilterPolicy(B) within the budget, and never takes more than the
// budget. The searches stop where the next step saves less than MinGain
// per KiB.
//
// A plan is bits per key, level by level: as the database grows its bytes
// grow with the keys, as any bits-per-key policy's do. Fit returns
// ErrClosed for a database closed before the call, and the errors Pebble
// returns reading it. Like every call on a *pebble.DB, Fit must not run
// concurrently with the database's Close; it panics if db is nil.
func Fit(db *pebble.DB, cfg Config) (Report, error) {
	cfg = cfg.withDefaults()
	if db == nil {
		panic("plan: Fit with nil *pebble.DB")
	}
	s, cur, err := readShape(db)
	if err != nil {
		return Report{Config: cfg}, err
	}
	var opts Plan
	if cfg.Current != nil {
		cur = optionsPlan(cfg.Current)
		opts = cur
	}
	return s.report(cfg, cur, cfg.reference(opts, cur), cfg.model(), 0), nil
}

// loadedKeys is the keys of the levels the lookups load.
func (r *Report) loadedKeys() uint64 {
	var keys uint64
	for _, l := range r.Levels {
		if l.Probes > 0 {
			keys += l.Keys
		}
	}
	return keys
}

// defaultReference is the reference where no other is known: bloom(10) on
// L0 to L5 and none on L6, the configuration of CockroachDB and of most
// Pebble clients.
func defaultReference() Plan {
	b := bloom.FilterPolicy(10)
	return Plan{b, b, b, b, b, b, nil}
}

// reference is the configuration whose bytes set the budget: Reference,
// else the first of opts (the options' levels) and cur (the tables'
// filters) with a filter on some level, else defaultReference.
func (c Config) reference(opts, cur Plan) Plan {
	switch {
	case c.Reference != nil:
		return *c.Reference
	case opts != Plan{}:
		return opts
	case cur != Plan{}:
		return cur
	}
	return defaultReference()
}

// budget is the bytes a plan may take on s: ref's, at most MaxFilterBytes;
// MaxFilterBytes with Fixed.
func (c Config) budget(s *shape, ref Plan) uint64 {
	if c.Fixed {
		return c.MaxFilterBytes
	}
	b := s.estimate(ref).Bytes
	if c.BlockCache > 0 {
		b = max(CacheBudget(c.BlockCache, s.index), getBytes(s, ref))
	}
	if c.MaxFilterBytes > 0 {
		b = min(b, c.MaxFilterBytes)
	}
	return b
}

// getBytes is ref's bytes on the levels db.Get loads, L0 to L5.
func getBytes(s *shape, ref Plan) uint64 {
	g := *s
	g.probes[6] = 0
	return g.estimate(ref).Bytes
}

// cacheTight reports whether c's BlockCache leaves the filters less than
// the reference takes on L0 to L5: the indexes take most of the cache's
// half. The plan then keeps to the reference's L0-L5 bytes, as a plan for
// db.Get, and writes no L6 filter (Report.NoL6), rather than starve the
// levels db.Get reads for filters the cache cannot hold.
func (c Config) cacheTight(s *shape, ref Plan) bool {
	return c.BlockCache > 0 && !c.Fixed && CacheBudget(c.BlockCache, s.index) < getBytes(s, ref)
}

// report is Fit on a known shape for model m, with cur the database's
// policies and ref the reference, at the budget cfg gives. The plan spends
// at most spend bytes where spend is above 0 (a live fit's target, the
// budget less what it holds back for older tables), else the budget.
func (s shape) report(cfg Config, cur, ref Plan, m model, spend uint64) Report {
	tight := cfg.cacheTight(&s, ref)
	if !cfg.UseL6 || tight {
		s.probes[6] = 0
	}
	r := Report{Config: cfg}
	for l := range r.Levels {
		r.Levels[l] = LevelShape{Keys: s.keys[l], Tables: s.tables[l], Probes: s.probes[l], Projected: s.projected[l]}
	}
	r.Budget = cfg.budget(&s, ref)
	if keys := r.loadedKeys(); keys > 0 {
		r.BudgetBitsPerKey = 8 * float64(r.Budget) / float64(keys)
	}
	budget := float64(r.Budget)
	if spend > 0 {
		budget = float64(min(spend, r.Budget))
	}
	p, fits := s.plan(budget, m)
	p = s.simplest(p, ref, budget, m)
	if budget < float64(r.Budget) {
		p = s.floored(p, ref, float64(r.Budget), m)
	}
	if r.loadedKeys() == 0 {
		// Nothing to fit: write what the reference writes, in blocks of the
		// levels' family for a live plan, until keys reach the levels.
		p, fits = ref, true
		if m.live {
			p = liveFamily(p)
		}
	}
	bm := cfg.model()
	bm.cuckoo, bm.minGain = false, 0
	bp, _ := s.plan(budget, bm)
	if !cfg.UseL6 || tight {
		p[6], bp[6], ref[6] = nil, nil, nil
	}
	if tight && m.live {
		p[6] = family.Unfiltered
	}
	r.BelowLeast = !fits
	r.Index = s.index
	r.NoL6 = cfg.UseL6 && s.keys[6] > 0 && (p[6] == nil || p[6] == family.Unfiltered)
	r.Estimate = s.estimate(p)
	r.Current = s.estimate(cur)
	if !cfg.Fixed {
		r.Reference = s.estimate(ref)
	}
	b10 := bloom.FilterPolicy(10)
	r.Bloom10 = s.estimate(Plan{b10, b10, b10, b10, b10, b10, b10})
	r.BloomOnly = s.estimate(bp)
	if !cfg.UseL6 {
		r.Bloom10.Plan[6] = nil
	}
	return r
}

// simplest returns p, or the simple configuration a user could have chosen
// instead where that has fewer expected false positives within budget: the
// reference itself, or FilterPolicy(B) on the reference's filtered levels
// (every level the lookups load where it has none) for any B the model
// allows. The searches are optimal up to their rounding, which this
// closes: a plan never loses to what it replaces.
func (s *shape) simplest(p, ref Plan, budget float64, m model) Plan {
	best, bestFP := p, s.estimate(p).FalsePositives
	try := func(q Plan) {
		if m.live {
			q = liveFamily(q)
		}
		if e := s.estimate(q); float64(e.Bytes) <= budget && e.FalsePositives < bestFP {
			best, bestFP = q, e.FalsePositives
		}
	}
	try(ref)
	if !m.cuckoo {
		return best
	}
	levels := ref
	if levels == (Plan{}) {
		for l := range levels {
			levels[l] = cuckoopolicy.FilterPolicy(10)
		}
	}
	for b := cuckoopolicy.MinBitsPerKey; b <= m.maxBits; b++ {
		var q Plan
		for l, lp := range levels {
			if lp != nil {
				q[l] = cuckoopolicy.FilterPolicy(b)
			}
		}
		try(q)
	}
	return best
}

// floored is p, a live plan that spends less than the budget to pay for
// older tables, with no level's new tables below the floor: the fewer bytes
// of the plan at the full budget on that level and of FilterPolicy(B) there,
// B the reference's bits per key on the level, rounded. The payback then
// comes out of the levels the full plan gives more than the reference's bits
// (a small L0, the levels above the deepest), never out of a level written
// at the reference's rate: a cuckoo filter's fingerprint one bit narrower
// doubles its false positives, and the deepest level, where most tables
// are, would pay for all of them. Where the floors take more than the
// budget, the plan at the full budget is the answer.
func (s *shape) floored(p, ref Plan, budget float64, m model) Plan {
	full, _ := s.plan(budget, m)
	full = s.simplest(full, ref, budget, m)
	out := p
	for l := range out {
		if !s.active(l) {
			continue
		}
		floor := full[l]
		fb, _ := s.levelCost(l, floor)
		if refBytes, _ := s.levelCost(l, ref[l]); ref[l] != nil && refBytes > 0 {
			b := int(math.Round(8 * refBytes / float64(s.keys[l])))
			var q Plan
			q[l] = cuckoopolicy.FilterPolicy(min(max(b, cuckoopolicy.MinBitsPerKey), m.maxBits))
			swap := liveFamily(q)[l]
			if sb, _ := s.levelCost(l, swap); sb < fb {
				floor, fb = swap, sb
			}
		}
		if pb, _ := s.levelCost(l, out[l]); pb < fb {
			out[l] = floor
		}
	}
	if float64(s.estimate(out).Bytes) > budget {
		return full
	}
	return out
}

// liveFamily is q as a live plan's levels can write it: Pebble's bloom
// filter as bloom blocks, no filter as unfiltered blocks.
func liveFamily(q Plan) Plan {
	for l, p := range q {
		switch v := p.(type) {
		case nil:
			q[l] = family.Unfiltered
		case bloom.FilterPolicy:
			q[l] = family.BloomBlocks(int(v))
		}
	}
	return q
}

// plan returns the plan of the model on s within budget bytes, and whether
// its least filters fit. s.probes[6] is 0 for a plan without L6 filters,
// whose L6 the caller clears.
func (s *shape) plan(budget float64, m model) (Plan, bool) {
	var p Plan
	if budget <= 0 && !m.live {
		return p, true
	}
	c, fits := s.solve(budget, m)
	planned := -1
	for l := range p {
		if s.active(l) {
			p[l] = c[l].policy
			if planned < 0 {
				planned = l
			}
		}
	}
	if planned < 0 {
		return Plan{}, fits
	}
	below := s.averagePolicy(budget, m)
	for l := range p {
		switch {
		case s.active(l):
		case l > 0 && l < planned:
			p[l] = p[planned]
		default:
			// An empty L0 too: a copy of the first planned level would give
			// the flushes to come its bits, often the cap, uncounted.
			p[l] = below
		}
	}
	return p, fits
}

// emptyLevelBits caps the bits per key of an empty level below the planned
// ones: a level that forms from nothing takes the usual 10 bits at most.
const emptyLevelBits = 10

// averagePolicy is the policy of an empty level below the planned ones: the
// bits per key the budget averages over the keys planned for, at most
// emptyLevelBits, so that the keys compactions carry down keep to it (a copy
// of the level above would carry a small L0's 20 bits into the bottom of a
// growing LSM, where the keys soon outgrow the budget).
func (s *shape) averagePolicy(budget float64, m model) pebble.FilterPolicy {
	var keys uint64
	for l := range 7 {
		if s.active(l) {
			keys += s.keys[l]
		}
	}
	if keys == 0 {
		return nil
	}
	b := min(int(8*budget/float64(keys)), m.maxBits, emptyLevelBits)
	switch {
	case m.cuckoo && b >= cuckoopolicy.MinBitsPerKey && (!m.bloom || b >= 9):
		return cuckoopolicy.FilterPolicy(b)
	case m.bloom && m.live && b >= 1:
		return family.BloomBlocks(b)
	case m.bloom && b >= 1:
		return bloom.FilterPolicy(b)
	case m.live:
		return family.Unfiltered
	}
	return nil
}

// estimate is a plan's cost on s, on the levels the lookups load.
func (s *shape) estimate(p Plan) Estimate {
	e := Estimate{Plan: p}
	var bytes float64
	for l := range p {
		if !s.active(l) {
			continue
		}
		b, fp := s.levelCost(l, p[l])
		bytes += b
		e.FalsePositives += fp
	}
	e.Bytes = uint64(math.Round(bytes))
	return e
}

// optionsPlan is the policy each level of opts writes: a nil level takes
// the level above's, as Pebble does.
func optionsPlan(opts *pebble.Options) Plan { return family.LevelPolicies(opts) }
