package report

import (
	"io"
	"time"
)

// Config sizes every experiment. Tiny, Quick and Full are the presets the
// report command offers; fields can be changed one by one.
type Config struct {
	Mode string // "tiny", "quick" or "full": printed in the report
	Seed uint64
	// Smoke marks sizes that only show that every section runs: too small
	// for a target to pass or fail (a "beyond-cache" filter of a few dozen
	// KB) or for a verdict to stand, so the report gives neither.
	Smoke bool

	// Load factor table (the paper's Table 2).
	LoadLogBuckets int // table size 2^LoadLogBuckets buckets
	LoadRuns       int // runs per fingerprint size, averaged
	LoadMaxKicks   int
	LoadStaticRuns int // runs of the static builder (deterministic per key set)
	// LoadStaticLogBuckets sizes the static builder's tables. It stays
	// below the full run's 2^25: the column makes 26 builds a run, and one
	// of 130M keys takes a minute or more (two attempts when asked above
	// the (2,4) threshold).
	LoadStaticLogBuckets int
	// LoadFingerprints lists the fingerprint sizes of the table, each in
	// 2..16; empty means every size from 2 to 16.
	LoadFingerprints []int
	// LoadWorkers runs that many (size, run) cells of the table side by
	// side; 0 means GOMAXPROCS. A cell holds one table at a time and, for
	// the static column, its keys: each worker of the full run needs close
	// to a GB (see bench/NOTES.md). The results do not depend on it: every
	// cell has its own seed.
	LoadWorkers int

	// False-positive rate against bits per key (Figure 2).
	FPRKeys    int
	FPRQueries int
	FPRMinBits int
	FPRMaxBits int
	// FPRSizes are the key counts of the sweep at FPRSizeBits bits per key:
	// Pebble's bloom draws every probe from one 32-bit hash, and its rate
	// rises with the filter's size.
	FPRSizes    []int
	FPRSizeBits int
	// FPRShapeBits are the budgets of the table by key shape (keys.Shapes),
	// FPRShapeKeys its counts of sequential members, each queried with the
	// next min(FPRQueries, FPRShapeQueries) keys of the same shape.
	FPRShapeBits    []int
	FPRShapeKeys    []int
	FPRShapeQueries int

	// Lookup time against the share of positive queries (Figure 3).
	LookupBits      int // budget of the compared filters
	LookupSmallKeys int // keys of the in-cache filter
	LookupLargeKeys int // keys of the beyond-cache filter
	// LookupQueries is the queries per pass, in one flat buffer. Every pass
	// repeats them, so for the beyond-cache filter they must touch more
	// lines than the last cache level holds, for bloom's one line a query
	// as for cuckoo's two (see bench/NOTES.md).
	LookupQueries    int
	LookupReps       int // timed passes per filter and p (fastest kept)
	LookupMinTime    time.Duration
	LookupPositiveps []float64

	// Build throughput and temporary memory.
	BuildKeys int

	// Read amplification in a Pebble database.
	RATables       int // overlapping L0 tables
	RAKeysPerTable int // keys per table
	RAGets         int // Gets per measurement
	RABudgets      []int

	// Peers at equal memory.
	PeerKeys       int
	PeerQueries    int
	PeerOver       float64 // inserts past capacity, as a share of capacity
	CBFLogSizes    []int   // |S| = 2^x for the Mun-Lim table
	CBFRuns        int
	CBFBitsPerItem float64

	// Progress, if not nil, receives a progress line during long phases.
	Progress io.Writer
}

// Tiny is a seconds-long configuration for smoke tests.
func Tiny() Config {
	return Config{
		Mode: "tiny", Seed: 1, Smoke: true,
		LoadLogBuckets: 10, LoadRuns: 2, LoadMaxKicks: 500, LoadStaticRuns: 1, LoadStaticLogBuckets: 10,
		FPRKeys: 4000, FPRQueries: 20000, FPRMinBits: 8, FPRMaxBits: 12, FPRSizes: []int{1000, 4000}, FPRSizeBits: 10,
		FPRShapeBits: []int{10}, FPRShapeKeys: []int{4000}, FPRShapeQueries: 20000,
		LookupBits: 12, LookupSmallKeys: 4000, LookupLargeKeys: 20000, LookupQueries: 10000,
		LookupReps: 1, LookupMinTime: time.Millisecond, LookupPositiveps: []float64{0, 1},
		BuildKeys: 10000,
		RATables:  3, RAKeysPerTable: 500, RAGets: 200, RABudgets: []int{10},
		PeerKeys: 4000, PeerQueries: 20000, PeerOver: 1, CBFLogSizes: []int{10}, CBFRuns: 1, CBFBitsPerItem: 5,
	}
}

// Quick finishes in about three minutes on two idle cores, five when they
// are shared.
func Quick() Config {
	return Config{
		Mode: "quick", Seed: 1,
		LoadLogBuckets: 18, LoadRuns: 3, LoadMaxKicks: 500, LoadStaticRuns: 3, LoadStaticLogBuckets: 18,
		FPRKeys: 1 << 18, FPRQueries: 4_000_000, FPRMinBits: 4, FPRMaxBits: 24,
		FPRSizes: []int{1 << 16, 1 << 18, 1 << 20, 1 << 22}, FPRSizeBits: 10,
		FPRShapeBits: []int{10, 12, 16}, FPRShapeKeys: []int{1 << 18, 1_000_000}, FPRShapeQueries: 4_000_000,
		LookupBits: 12, LookupSmallKeys: 600_000, LookupLargeKeys: 40_000_000, LookupQueries: 1 << 21,
		LookupReps: 7, LookupMinTime: 50 * time.Millisecond,
		LookupPositiveps: []float64{0, 0.25, 0.5, 0.75, 1},
		BuildKeys:        1_000_000,
		RATables:         8, RAKeysPerTable: 20_000, RAGets: 5_000, RABudgets: []int{6, 8, 10, 12, 16},
		PeerKeys: 1 << 18, PeerQueries: 2_000_000, PeerOver: 0.1, CBFLogSizes: []int{13, 15, 17}, CBFRuns: 3, CBFBitsPerItem: 5,
	}
}

// Full works at the paper's scale: 2^25 buckets for the load table, filters
// of about 200 MB for lookups. It takes hours on two cores.
func Full() Config {
	c := Quick()
	c.Mode = "full"
	c.LoadLogBuckets, c.LoadRuns, c.LoadStaticRuns, c.LoadStaticLogBuckets = 25, 10, 3, 22
	c.FPRKeys, c.FPRQueries = 1_000_000, 100_000_000
	c.FPRSizes = []int{1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26}
	c.LookupSmallKeys, c.LookupLargeKeys, c.LookupQueries = 600_000, 130_000_000, 1<<22
	c.LookupReps, c.LookupMinTime = 5, 500*time.Millisecond
	c.LookupPositiveps = []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}
	c.BuildKeys = 10_000_000
	c.RAKeysPerTable, c.RAGets = 100_000, 50_000
	c.PeerKeys, c.PeerQueries, c.CBFRuns = 1<<20, 20_000_000, 10
	return c
}
