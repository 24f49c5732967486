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
	// DefaultLevelMultiplier is Pebble's default Options.LevelMultiplier.
	DefaultLevelMultiplier = 10
)

// Config says what a plan is for. The zero Config plans no filters.
type Config struct {
	// MaxFilterBytes is the ceiling on the filter bytes the lookups load:
	// the filters of L0 to L5, and of L6 too with UseL6, counting the levels
	// the LSM is heading to (see Fit). A plan may spend less. 0 plans no
	// filters.
	MaxFilterBytes uint64
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
	// negative value no floor (spend up to the ceiling).
	MinGain float64
	// LevelMultiplier is the database's Options.LevelMultiplier; 0 means
	// DefaultLevelMultiplier.
	LevelMultiplier int
	// Current, if not nil, are the options the database runs with: the
	// report's Current estimate is their levels' policies. If nil, it is
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
	if c.LevelMultiplier <= 1 {
		c.LevelMultiplier = DefaultLevelMultiplier
	}
	return c
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
	Projected bool    // empty now: planned for the keys it will hold
}

// Report is a plan with what it costs and what it saves, at equal
// memory beside the alternatives a user weighs: the filters the database
// has now, bloom.FilterPolicy(10) everywhere, and the best plan of Pebble's
// bloom filter alone within the same ceiling (what a bloom user can do
// without this package). Bytes count the filters the lookups load (L0-L5,
// and L6 with UseL6), on the levels as they are and as planned for the
// empty ones.
type Report struct {
	Config Config // with defaults filled in
	Levels [7]LevelShape
	Estimate
	Current   Estimate
	Bloom10   Estimate
	BloomOnly Estimate
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
// writer builds it: this package's blocks by the writer's own sizing (small
// tables included) and rates from the fingerprint width and load, Pebble's
// bloom blocks by its line rounding and its measured curve (embedded in the
// package), for every budget from 1 (bloom) or 4 (cuckoo) bits per key to
// the cap. How many tables of each level a lookup probes, and how many
// versions each level holds per key prefix, come from a sample of a few
// thousand positions spread over every level's tables in proportion to
// their entries (L0 included), read through db.ScanInternal. Table bounds
// are compared bytewise.
//
// Empty levels between L0 and the deepest populated level are planned for
// the keys they will hold, a LevelMultiplier-th of the level below, in
// tables of that level's size, and their bytes count against the ceiling:
// the plan keeps to it as those levels form. Empty levels above every
// planned level take the first planned level's policy; empty levels below
// them the bits per key the ceiling averages over the keys planned for, at
// most 10 (the family that is better at that budget).
//
// The search: the greedy over each level's lower convex hull of (bytes,
// false positives), dominated points removed, taking the step that saves
// the most per byte first, with a fractional last step (a cuckoo cuckoopolicy.Policy at
// the load the bytes left give), and an exact search over every level's
// whole-budget choices with bytes rounded up to 1/65536 of the ceiling,
// each followed by a pass that moves one or two levels at a time to another
// point while that helps; Fit keeps the better. So the plan is never worse than the best choice
// of whole budgets per level within the ceiling less 7/65536 of it, and
// never takes more than the ceiling by the model. Both stop where the next step saves less than MinGain per KiB.
//
// A plan is bits per key, level by level: as the database grows its bytes
// grow with the keys, as any bits-per-key policy's do. Fit returns
// ErrNilDB for a nil db, ErrClosed for a closed one, and the errors Pebble
// returns reading it.
func Fit(db *pebble.DB, cfg Config) (Report, error) {
	cfg = cfg.withDefaults()
	if db == nil {
		panic("plan: Fit with nil *pebble.DB")
	}
	s, cur, err := readShape(db, float64(cfg.LevelMultiplier))
	if err != nil {
		return Report{Config: cfg}, err
	}
	if cfg.Current != nil {
		cur = optionsPlan(cfg.Current)
	}
	return s.report(cfg, cur, cfg.model()), nil
}

// report is Fit on a known shape for model m, with cur the database's
// policies.
func (s shape) report(cfg Config, cur Plan, m model) Report {
	if !cfg.UseL6 {
		s.probes[6] = 0
	}
	r := Report{Config: cfg}
	for l := range r.Levels {
		r.Levels[l] = LevelShape{Keys: s.keys[l], Tables: s.tables[l], Probes: s.probes[l], Projected: s.projected[l]}
	}
	budget := float64(cfg.MaxFilterBytes)
	p, fits := s.plan(budget, m)
	bm := cfg.model()
	bm.cuckoo, bm.minGain = false, 0
	bp, _ := s.plan(budget, bm)
	if !cfg.UseL6 {
		p[6], bp[6] = nil, nil
	}
	r.BelowLeast = !fits
	r.Estimate = s.estimate(p)
	r.Current = s.estimate(cur)
	b10 := bloom.FilterPolicy(10)
	r.Bloom10 = s.estimate(Plan{b10, b10, b10, b10, b10, b10, b10})
	r.BloomOnly = s.estimate(bp)
	if !cfg.UseL6 {
		r.Bloom10.Plan[6] = nil
	}
	return r
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
		case l < planned:
			p[l] = p[planned]
		default:
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
func optionsPlan(opts *pebble.Options) Plan {
	var p Plan
	var prev pebble.FilterPolicy
	for l := range p {
		fp := opts.Levels[l].FilterPolicy
		if fp == nil {
			fp = prev
		}
		prev = fp
		if fp != pebble.NoFilterPolicy {
			p[l] = fp
		}
	}
	return p
}
