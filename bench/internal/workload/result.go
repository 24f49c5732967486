package workload

import (
	"fmt"
	"math"
	"time"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// Result is everything a run measured.
type Result struct {
	Config        Config
	Start         time.Time
	Elapsed       time.Duration
	DelayMeasured time.Duration // mean of the device delay as applied
	// MemtableReserve is what an open database's memtables take from its
	// block cache, added to a pressure regime's cache (measured).
	MemtableReserve int64
	BloomFPR        fprCurve
	CuckooFPR       fprCurve
	Matched         map[int]string // budget B -> the cuckoo policy matching bloom(B)'s rate
	Tuned           []tunedRow     // explicit cuckoo configurations matching bloom(B)'s rate
	Spreads         []spreadRow
	Plans           []planRow   // the plans PlanFor chose, per shape
	CachePlans      []cachePlan // whatif -cache's recommendation per shape and pressure regime
	Shapes          []shapeResult
	Cells           map[cellKey]map[string]*cellStats
	Truth           map[string]map[string]map[string]truthCounts // shape -> policy -> path
	Lost, Phantom   int64
	Verdicts        []verdictRow
}

// tunedRow is a cuckoopolicy.Policy whose measured rate matches bloom(For)'s.
type tunedRow struct {
	Name      string
	For       int
	Policy    cuckoopolicy.Policy
	FPR, Bits float64 // measured in process
	BloomFPR  float64
}

type spreadRow struct {
	Shape string
	Cfg   policyCfg
	In    spreadInput
}

type shapeResult struct {
	Spec      shapeSpec
	Reference lsmShape      // the organically loaded reference (deep: none)
	Layout    layoutSummary // what every policy's database was built with
	DBs       []dbRow
	Loads     []loadRun // the lockstep loads (none where loading is not measured)
}

type dbRow struct {
	Cfg   policyCfg
	Shape lsmShape
	Sig   lsmSig // the LSM as built, checked against the layout and the other databases
}

// verdictRow is one target's outcome.
type verdictRow struct {
	Target   string
	Judged   bool // false: nothing to judge it on
	Pass     bool
	Detail   string
	Misses   []string // the cells that miss
	Unjudged []string // the cells with too few events to judge
}

func (r *Result) db(shape, policy string) (dbRow, bool) {
	for _, s := range r.Shapes {
		if s.Spec.Name != shape {
			continue
		}
		for _, d := range s.DBs {
			if d.Cfg.Name == policy {
				return d, true
			}
		}
	}
	return dbRow{}, false
}

// counts sums a policy's cells of one shape and path over regimes and thread
// counts (filter answers do not depend on either). regime, if not "",
// restricts it to one regime (block reads depend on the cache).
type counts struct {
	Ops           int64
	Hits, Misses  int64
	IO            ioSnap
	Lost, Phantom int64
}

func (r *Result) counts(shape, path, regime, policy string) counts {
	var c counts
	for k, cell := range r.Cells {
		if k.Shape != shape || k.Path != path || (regime != "" && k.Regime != regime) {
			continue
		}
		cs := cell[policy]
		if cs == nil {
			continue
		}
		c.Ops += cs.Ops
		c.Hits += cs.Hits
		c.Misses += cs.Misses
		c.IO.add(cs.IO)
		c.Lost += cs.Lost
		c.Phantom += cs.Phantom
	}
	return c
}

// fpPerOp is a policy's false-positive block reads per operation in the
// counting pass: its filters' "may contain" answers on tables that do not
// hold the prefix; each reads a data block. It returns the number of false
// positives too, and NaN for a policy that probed no filter.
func (r *Result) fpPerOp(shape, path, policy string) (float64, float64) {
	t, ok := r.Truth[shape][policy][path]
	if !ok || t.Ops == 0 || t.Hits+t.Misses == 0 {
		return math.NaN(), 0
	}
	return float64(t.FP) / float64(t.Ops), float64(t.FP)
}

// ioRegime is the regime whose block reads the report quotes: the OS page
// cache regime (a small block cache), else whatever ran.
func (r *Result) ioRegime() string {
	for k := range r.Cells {
		if k.Regime == "pagecache" {
			return "pagecache"
		}
	}
	for k := range r.Cells {
		return k.Regime
	}
	return ""
}

// dataReadsPerOp is the data blocks a policy's filters let through per
// operation in the counting pass: every "may contain" answer, true or
// false, reads one. NaN where no filter was probed.
func (r *Result) dataReadsPerOp(shape, path, policy string) float64 {
	t, ok := r.Truth[shape][policy][path]
	if !ok || t.Ops == 0 || t.Hits+t.Misses == 0 {
		return math.NaN()
	}
	return float64(t.TP+t.FP) / float64(t.Ops)
}

// timeRatio is the median of paired time ratios x/base over repetitions.
func (r *Result) timeRatio(k cellKey, x, base string) ratioStat {
	cell := r.Cells[k]
	if cell == nil || cell[x] == nil || cell[base] == nil {
		return ratioStat{Median: math.NaN()}
	}
	return medianCI(pairedRatios(cell[x].NsPerOp, cell[base].NsPerOp))
}

// identical says whether the databases of policies x and base of a shape
// have identical LSMs (every table's level, L0 sublevel, bounds, entries and
// sequence number), and if not, why.
func (r *Result) identical(shape, x, base string) (bool, string) {
	a, ok1 := r.db(shape, x)
	b, ok2 := r.db(shape, base)
	if !ok1 || !ok2 {
		return false, "a database is missing"
	}
	if err := diffSig(b.Sig, a.Sig); err != nil {
		return false, err.Error()
	}
	return true, ""
}

func bloomName(b int) string  { return fmt.Sprintf("bloom(%d)", b) }
func cuckooName(b int) string { return fmt.Sprintf("cuckoo(%d)", b) }
