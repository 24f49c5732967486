package whatif

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/pebble/v2"
)

// Measurement defaults and limits.
const (
	// DefaultLookups is the most absent lookups the measurement through
	// Pebble makes when Config.Lookups is 0.
	DefaultLookups = 1_000_000
	// DefaultLookupTime is the longest the measurement through Pebble runs
	// when Config.LookupTime is 0.
	DefaultLookupTime = 30 * time.Second
	// targetReads is the reads in vain after which the measurement stops
	// adding lookups: at 400 the 95% interval is about ±10% of the figure.
	targetReads = 400
	// lookupBatch is the lookups between two readings of Pebble's counters;
	// a batch in which a probe turns out present is not counted.
	lookupBatch = 256
	// maxRounds is the most rounds of keys: one per byte appended (1 to
	// 255) to each source key.
	maxRounds = 255
	// keepKeys is the most keys a measurement keeps, the first it counts,
	// for tests.
	keepKeys = 1024
)

// Why a measurement stopped.
const (
	stopTarget    = "target"    // it met targetReads
	stopLookups   = "lookups"   // Config.Lookups
	stopTime      = "time"      // Config.LookupTime
	stopExhausted = "exhausted" // no absent key left to derive
	stopNothing   = "nothing"   // the first round met no table on the levels the lookups load
)

// measurement is the current filters measured through Pebble: absent keys
// looked up as the plan's lookups are (db.Get, or SeekPrefixGE on an
// iterator with IterOptions.UseL6Filters), Pebble's filter counters read
// before and after (db.Metrics().Filter). For an absent key every filter
// miss (the filter says "may contain") is a data-block read in vain.
type measurement struct {
	UseL6   bool // the lookups were SeekPrefixGE with UseL6Filters, not db.Get
	Lookups int  // absent lookups counted
	// Misses and Hits are the deltas of Pebble's filter counters over the
	// counted lookups: filters that said "may contain" and "absent".
	Misses, Hits int64
	// Unfiltered is the reads of tables without a filter Pebble reads, one
	// per table whose range holds the key on the levels the lookups load
	// (Pebble counts no filter there), by the tables' bounds.
	Unfiltered int64
	Dropped    int    // lookups in batches where a key was present, not counted
	Rounds     int    // rounds of keys begun (see measure)
	Stop       string // why it stopped: one of the stop constants
	MaxLookups int    // the caps it ran under
	MaxTime    time.Duration

	keys [][]byte // the first keepKeys keys counted, for tests
}

// reads is the reads in vain the lookups met.
func (m *measurement) reads() int64 { return m.Misses + m.Unfiltered }

// met is the tables the lookups met on the levels they load: filters
// checked, and tables without one.
func (m *measurement) met() int64 { return m.Misses + m.Hits + m.Unfiltered }

// perLookup is the reads in vain per absent lookup, 0 without lookups.
func (m *measurement) perLookup() float64 {
	if m.Lookups == 0 {
		return 0
	}
	return float64(m.reads()) / float64(m.Lookups)
}

// interval is the 95% interval of perLookup: the score interval of a
// Poisson count. A lookup's reads in vain are a sum of independent
// filter answers, each a rare event, and reads of unfiltered tables, which
// vary less, so their variance is at most their mean: the Poisson interval
// is if anything too wide.
func (m *measurement) interval() (lo, hi float64) {
	if m.Lookups == 0 {
		return 0, 0
	}
	const z = 1.96
	k, n := float64(m.reads()), float64(m.Lookups)
	d := z * math.Sqrt(k+z*z/4)
	return max(0, k+z*z/2-d) / n, (k + z*z/2 + d) / n
}

// limits are the caps of a measurement.
type limits struct {
	lookups int
	time    time.Duration
}

// measure looks up absent keys in db as the plan's lookups do (db.Get; with
// useL6 SeekPrefixGE on an iterator with UseL6Filters) and counts what
// Pebble's filters answer. The keys come in rounds, one key a source key,
// each shuffled so that any prefix of it is a sample of all: round r
// appends byte r to every source key. A byte appended, not a bit flipped as
// in the absent probes: Pebble's bloom filter answers "may contain" more
// often for a key one bit from a present one than for others. It stops
// once past the first round at targetReads reads in vain, or where the
// first round met no table, and at the caps. It reads only: a read-only
// Pebble writes nothing.
func (a *analysis) measure(db *pebble.DB, useL6 bool, lim limits) (*measurement, error) {
	m := &measurement{UseL6: useL6, MaxLookups: lim.lookups, MaxTime: lim.time, Stop: stopExhausted}
	rng := rand.New(rand.NewPCG(1, 2)) // a fixed seed: the same database gives the same report
	start := time.Now()
	last := lastLevel(useL6)
	src := a.roundSources()
	for m.Rounds = 1; m.Rounds <= maxRounds; m.Rounds++ {
		keys := a.appended(src, byte(m.Rounds))
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		for {
			if m.stopped(lim, start, m.Rounds > 1) {
				return m, nil
			}
			if len(keys) == 0 {
				break
			}
			n := min(len(keys), lookupBatch, lim.lookups-m.Lookups)
			if err := a.lookupBatch(db, m, keys[:n], last); err != nil {
				return nil, err
			}
			keys = keys[n:]
		}
	}
	m.Rounds = maxRounds
	return m, nil
}

// stopped reports whether the measurement stops before its next batch, and
// sets why: a cap; or, past the first round, enough reads in vain, or no
// table met on the levels the lookups load by the lookups counted, which
// the next rounds, near the same source keys, would not meet either.
func (m *measurement) stopped(lim limits, start time.Time, pastFirst bool) bool {
	switch {
	case m.Lookups >= lim.lookups:
		m.Stop = stopLookups
	case time.Since(start) >= lim.time:
		m.Stop = stopTime
	case pastFirst && m.reads() >= targetReads:
		m.Stop = stopTarget
	case pastFirst && m.Lookups > 0 && m.met() == 0:
		m.Stop = stopNothing
	default:
		return false
	}
	return true
}

// lookupBatch looks up keys and adds Pebble's counters over them to m; a
// batch in which a key is present (in the memtable, say) counts only as
// dropped.
func (a *analysis) lookupBatch(db *pebble.DB, m *measurement, keys [][]byte, last int) error {
	var found bool
	before := db.Metrics().Filter
	err := catch(func() (err error) {
		found, err = lookup(db, keys, m.UseL6)
		return err
	})
	if err != nil {
		return fmt.Errorf("whatif: measuring through Pebble: %w", namePath(err))
	}
	after := db.Metrics().Filter
	if found {
		m.Dropped += len(keys)
		return nil
	}
	m.Lookups += len(keys)
	m.keys = append(m.keys, keys[:min(len(keys), keepKeys-len(m.keys))]...)
	m.Misses += after.Misses - before.Misses
	m.Hits += after.Hits - before.Hits
	for _, k := range keys {
		m.Unfiltered += int64(a.unfilteredChecks(k, last))
	}
	return nil
}

// lookup looks up every key, with db.Get or, with useL6, SeekPrefixGE on a
// new iterator with UseL6Filters, and reports whether one was present.
func lookup(db *pebble.DB, keys [][]byte, useL6 bool) (found bool, err error) {
	if !useL6 {
		for _, k := range keys {
			_, c, err := db.Get(k)
			switch {
			case err == nil:
				found = true
				if err := c.Close(); err != nil {
					return found, err
				}
			case !errors.Is(err, pebble.ErrNotFound):
				return found, err
			}
		}
		return found, nil
	}
	// An iterator per lookup, as the read model counts: one iterator's
	// SeekPrefixGE to keys out of order checks more filters.
	for _, k := range keys {
		it, err := db.NewIter(&pebble.IterOptions{UseL6Filters: true})
		if err != nil {
			return found, err
		}
		found = it.SeekPrefixGE(k) || found
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return found, err
		}
	}
	return found, nil
}

// unfilteredChecks is the tables on levels L0 to last without a filter
// Pebble reads whose range holds k, as the read model counts them (see
// probe): each costs a lookup one data-block read.
func (a *analysis) unfilteredChecks(k []byte, last int) int {
	n := 0
	for _, t := range a.tables[0] {
		if t.now == nil && t.cands != nil && a.cmp(t.smallest, k) <= 0 && a.cmp(k, t.largest) <= 0 {
			n++
		}
	}
	for li := 1; li <= last; li++ {
		ts := a.tables[li]
		i, _ := slices.BinarySearchFunc(ts, k, func(t *table, k []byte) int { return a.cmp(t.largest, k) })
		if i < len(ts) && a.cmp(ts[i].smallest, k) <= 0 && ts[i].now == nil && ts[i].cands != nil {
			n++
		}
	}
	return n
}

// roundSources is the distinct source keys, split into the body a round
// appends to and the tail (the cockroach sentinel) that follows it.
func (a *analysis) roundSources() [][2][]byte {
	src := slices.Clone(a.sources)
	slices.SortFunc(src, bytes.Compare)
	src = slices.CompactFunc(src, bytes.Equal)
	out := make([][2][]byte, len(src))
	for i, s := range src {
		body, tail := a.bodyTail(s)
		out[i] = [2][]byte{body, tail}
	}
	return out
}

// appended returns each source key with b appended to its body, where the
// key is in no table.
func (a *analysis) appended(src [][2][]byte, b byte) [][]byte {
	var out [][]byte
	for _, s := range src {
		k := make([]byte, 0, len(s[0])+1+len(s[1]))
		k = append(append(append(k, s[0]...), b), s[1]...)
		if !a.present(k) {
			out = append(out, k)
		}
	}
	return out
}

// present reports whether k is a filter key of some table (by its hash).
func (a *analysis) present(k []byte) bool {
	_, ok := slices.BinarySearch(a.hashes, xxhash.Sum64(k))
	return ok
}
