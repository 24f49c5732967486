// Package whatif measures, on an existing Pebble database, what Pebble's
// bloom filter and this module's cuckoo filter would do at several
// bits-per-key budgets: the false-positive rate on the database's own keys,
// the filter bytes, and the data-block reads per absent point read that each
// would save against the filters the database has now. It is the library
// behind the whatif command: a Pebble user's benchmark of read amplification
// on their own data before switching filters.
//
// Analyze opens the database read-only and never writes to it: every file
// operation that could create, change or remove a file fails, and a database
// that a running Pebble holds open is refused. Run it on a checkpoint
// (pebble.DB.Checkpoint) or a copy. A database whose directory holds a named
// pipe, a socket or a device is refused too: whatif never waits on a file.
// A damaged database, such as a table with a corrupt footer, is an error
// that names the damaged file: a fatal error Pebble raises is returned as
// an error too, never a crash.
//
// # What it measures
//
// For every live sstable it reads the keys Pebble's filter writer sees: the
// Comparer.Split prefix of every point key (the whole key with the default
// comparer), consecutive equal prefixes once. From these keys it builds each
// candidate filter the way Pebble would (FilterPolicy.NewWriter, AddKey,
// Finish) and reads the table's current filter block, checked as Pebble
// checks it (its checksum) and as a block of the policy it is named after
// (an error otherwise).
//
// Absent probes come from the database's own keys, so their shape is the
// user's: keys picked evenly over all the database's filter keys, each with
// one bit of its last byte flipped (the lowest bit that gives a key in no
// table), else with a 0x00 byte appended. With the cockroach comparer the
// byte altered is the last one of the key before the MVCC sentinel.
//
// The read model: a point read of an absent key probes the filter of every
// L0 table whose key range holds the key and of the one table per level L1
// to L6 that does; each filter positive, and each table without a filter,
// costs one data-block read. db.Get never reads L6 filters in Pebble
// v2.1.7, so a Get reads one L6 block wherever an L6 table holds the key;
// iterators with IterOptions.UseL6Filters (prefix reads) do read them. The
// report shows both. The model is Pebble's: the tests run the same probes
// through a read-only Pebble and find its filter metrics (checks and
// positives) equal to the model's, for Get and for SeekPrefixGE with
// UseL6Filters.
//
// # Filter plans
//
// Analyze also asks plan.Fit, on the database it opened
// read-only, for the plan (a filter policy per level) that its model gives
// the fewest false-positive reads within a ceiling of filter bytes, for
// db.Get or, with Config.UseL6, for lookups that read L6 filters. The bytes
// are those the lookups load (L0-L5 for Get, L0-L6 with UseL6), levels that
// are empty now counted as planned for the keys they will hold. The ceiling
// is Config.Memory, or by default the bytes the current filters take on
// those levels by plan.Fit's model, so that the report compares at equal
// bytes: the plan, the current filters, bloom(10) on every level and the
// best bloom-only plan, each with plan.Fit's expected false-positive reads
// per absent lookup. It also measures the plan, bloom(10) and the
// bloom-only plan with the read model above on the current tables: each
// table's filter built from its keys, the same absent probes. plan.Fit's
// rates come from curves measured on random keys; whatif's from the
// database's own keys, so the two can differ where the keys defeat a
// filter's hashing.
//
// # Measured through Pebble
//
// With a plan, Analyze also measures the current filters through Pebble
// itself, on the database it opened read-only with the readers of both
// filter families: absent keys looked up as the plan's lookups are (db.Get;
// with Config.UseL6 SeekPrefixGE on a new iterator with
// IterOptions.UseL6Filters), Pebble's filter counters (db.Metrics().Filter)
// read around every batch of them. For an absent key every filter miss (the
// filter says "may contain") is a data-block read in vain; a table without
// a filter Pebble reads adds one read wherever its range holds the key, by
// its bounds. The keys: rounds of the probes' source keys with a byte
// appended (1, 2, ...), each round shuffled, each key absent from every
// table; a batch in which a key turns out present (in the memtable) is not
// counted. A byte appended, not a bit flipped: Pebble's bloom filter
// answers "may contain" more often for a key one bit from a present one.
// Past the first round it stops at 400 reads in vain, or where that round
// met no table on the levels the lookups load; and it stops at
// Config.Lookups lookups or after Config.LookupTime.
//
// The report gives the reads in vain per absent lookup with a 95% interval
// beside plan.Fit's figure for the current filters, and the model's error,
// model over measured. Within 1.3x the model's projections stand; beyond,
// the verdict takes the plan's projection both as modelled and scaled by
// the error. Write ends the section with a one-line verdict and a decision
// line: switch to the plan where its projection (the larger of the two
// where scaled) is below 1/1.3 of the current filters' measured figure and
// below its 95% interval; otherwise, and where the model does not know the
// current filters or nothing was measured, stay with the current filters.
//
// # Block cache
//
// With Config.Cache, the report weighs one block cache of that many bytes,
// shared by filter, index and data blocks, for lookups that read L6 filters
// (SeekPrefixGE on an iterator with IterOptions.UseL6Filters): the index,
// data and current filter bytes, measured by the tables' properties (each
// file once: virtual tables share theirs); and for no filters, CockroachDB's
// configuration (bloom(10) on L0-L5, none on L6), bloom(10) on every level
// and the recommended plan, the filter bytes and expected reads in vain by
// plan.Fit's model, whether filters and indexes fit the cache and what they
// leave for data blocks. The rule: filters and indexes take at most half
// the cache. The recommended budget is half the cache less the indexes, and
// the plan is plan.Fit's at that budget with UseL6; where the indexes take
// half the cache or more, the recommendation is no L6 filter and the cache
// at which the budget would reach bloom(10) on every level's bytes.
//
// # Limits
//
// Keys that live only in the WAL (replayed into a memtable by the read-only
// open) have no filter and are not counted. A virtual table is read from its
// backing file within its bounds; its current filter bytes are the backing
// file's. Tables on shared or external storage are skipped and counted.
// Memory: 8 bytes per filter key of the database (the hashes that tell
// absent keys), plus the candidate filters of every table and those of the
// plan, bloom(10) and the bloom-only plan, built from at most Config.Sample
// keys per table, and a round of the measurement's keys (one per source).
package whatif

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// defaultBudgets are the bits-per-key budgets Analyze tries when
// Config.Budgets is empty.
var defaultBudgets = []int{8, 10, 12, 14, 16}

// DefaultProbes is the number of absent probes when Config.Probes is 0.
const DefaultProbes = 20000

// numLevels is the number of LSM levels.
const numLevels = 7

// Config says what Analyze reads and how much.
type Config struct {
	Dir      string // the database directory (a checkpoint or a copy)
	Comparer string // "default" ("" too) or "cockroach"
	Budgets  []int  // bits-per-key budgets of the candidates; empty: 8, 10, 12, 14 and 16
	// Sample caps the keys per table that build the candidate filters and
	// give probes (evenly spaced over the table); 0 takes every key. Key
	// counts stay exact; candidate bytes are scaled up from the sample.
	Sample   int
	Probes   int       // absent probes to derive; 0: DefaultProbes
	Progress io.Writer // if not nil, progress lines for databases of many tables
	// Memory is the ceiling of the plan section: the filter bytes the
	// lookups load that the plan may take. 0 means the bytes the current
	// filters take on those levels, by plan.Fit's model (see the package
	// doc). UseL6 plans for lookups that read L6 filters, not db.Get.
	Memory uint64
	UseL6  bool
	// Cache, if not 0, is the bytes of a block cache shared by filter,
	// index and data blocks: the report then says whether the database's
	// filters and indexes fit it, and recommends the filter budget and plan
	// for lookups that read L6 filters that keep to half of it (see the
	// package doc).
	Cache uint64
	// Lookups and LookupTime cap the measurement through Pebble (see the
	// package doc): the most absent lookups, 0 meaning DefaultLookups, and
	// the longest it runs, 0 meaning DefaultLookupTime.
	Lookups    int
	LookupTime time.Duration
}

// Report is what Analyze measured, which Write prints: plain data, with no
// reference to the database. Only Analyze makes one.
type Report struct {
	dir        string
	comparer   string // the comparer's Name
	candidates []string
	// levels are indexed by level number; a level's Candidates are in the
	// order of candidates.
	levels       [numLevels]levelRow
	sources      int         // keys of the database the probes derive from
	byFlip       int         // absent keys made by flipping a bit of the last byte
	byAppend     int         // absent keys made by appending a 0x00 byte
	noProbe      int         // sources for which neither gives an absent key
	probes       int         // distinct absent probes
	sampled      bool        // some table's candidates were built from a sample of its keys
	baseline     string      // what savings are against: "now"; "bloom(10)" when no table has a filter whatif can probe ("none" without budget 10)
	unreadable   []string    // current filter policy names whatif cannot probe (counted as no filter)
	remoteTables int         // tables on shared or external storage, not read
	plan         *planReport // the filter plan; nil when there is nothing to plan for
	// cache is the block-cache section; nil without Config.Cache.
	cache *cacheReport

	probeKeys [][]byte // the absent probes, for tests
}

// levelRow is one level's row of the report.
type levelRow struct {
	Level   int
	Tables  int
	Entries uint64 // point entries read, every version
	Keys    uint64 // filter keys: Split prefixes, consecutive duplicates once
	Sampled uint64 // of them, the keys that built the candidates
	Now     []nowFilter
	// Checks counts filter probes at this level: for each absent probe, the
	// tables whose key range holds it (all such tables in L0, one in L1-L6).
	Checks int
	// NowHits counts the checks that read a data block with the current
	// filters: filter positives, and every check of a table without one.
	NowHits     int
	NowFiltered int    // checks of tables whose current filter whatif probed
	NowFalsePos int    // positives among them
	NowBytes    uint64 // current filter blocks' bytes (a virtual table's: its backing file's)
	Candidates  []candidateResult
}

// nowFilter is the tables of a level whose filter one policy wrote.
type nowFilter struct {
	Policy string // the filter block's policy name (metaindex "fullfilter.NAME"); "" for none
	Tables int
	Bytes  uint64
}

// candidateResult is one candidate filter's result on one level.
type candidateResult struct {
	Name  string
	Bytes float64 // filter bytes for all the level's keys (scaled up from the sample)
	Hits  int     // checks the candidate answers "may contain": false positives
}

// table is what Analyze keeps of one sstable.
type table struct {
	level             int
	smallest, largest []byte // prefixes of the bounds
	nowName           string // the current filter's policy name; "" for none
	nowSize           uint64 // its block's bytes
	now               pebble.FilterPolicy
	nowBlock          []byte
	cands             [][]byte // candidate blocks; nil when the table has no point keys
	proj              [][]byte // the projections' blocks (nil: no filter); see planReport
}

type candidate struct {
	name   string
	policy pebble.FilterPolicy
}

func candidates(budgets []int) []candidate {
	var cs []candidate
	for _, b := range budgets {
		cs = append(cs, candidate{fmt.Sprintf("bloom(%d)", b), bloom.FilterPolicy(b)})
		cs = append(cs, candidate{fmt.Sprintf("cuckoo(%d)", b), cuckoopolicy.FilterPolicy(b)})
	}
	return cs
}

// Analyze opens the database in c.Dir read-only, measures and returns the
// report. It never writes to the database. It returns an error for a
// directory that holds no Pebble database, a database that a running Pebble
// holds open, a file that is not regular, a malformed filter block, an
// unknown comparer, a comparer other than the database's, and any error
// reading a table.
func Analyze(c Config) (_ *Report, err error) {
	c, budgets, err := checkConfig(c)
	if err != nil {
		return nil, err
	}
	db, opts, fs, closeDB, err := openReadOnly(c.Dir, c.Comparer)
	if err != nil {
		return nil, err
	}
	defer func() { _ = closeDB(err) }()

	cands := candidates(budgets)
	rep := newReport(c.Dir, opts.Comparer.Name, cands)
	a := &analysis{
		cmp:      opts.Comparer.Compare,
		split:    opts.Comparer.Split,
		cands:    cands,
		ropts:    opts.MakeReaderOptions(),
		fs:       fs,
		dir:      c.Dir,
		sample:   c.Sample,
		probes:   c.Probes,
		sentinel: c.Comparer == "cockroach",
	}
	a.ropts.Filters = nil
	levels, err := a.listTables(db)
	if err != nil {
		return nil, err
	}
	if rep.plan, err = choosePlan(db, c, levels); err != nil {
		return nil, err
	}
	a.plan = rep.plan
	if c.Cache > 0 {
		if rep.cache, err = a.fitCache(db, c.Cache, levels); err != nil {
			return nil, err
		}
	}
	nTables, totalEntries := countTables(levels)
	a.total = totalEntries
	progress := c.Progress
	if nTables < 20 {
		progress = nil
	}
	probed, err := a.readLevels(rep, levels, nTables, progress)
	if err != nil {
		return nil, err
	}
	rep.sampled = a.sampled
	if err := a.probeAll(db, rep, c, progress); err != nil {
		return nil, err
	}
	if !probed {
		rep.baseline = "bloom(10)"
		if !slices.Contains(budgets, 10) {
			rep.baseline = "none"
		}
	}
	return rep, nil
}

// checkConfig returns c with Probes, Lookups and LookupTime defaults filled
// in and its budgets, or the error in c.
func checkConfig(c Config) (_ Config, budgets []int, err error) {
	budgets = c.Budgets
	if len(budgets) == 0 {
		budgets = defaultBudgets
	}
	for _, b := range budgets {
		if b < 1 || b > 64 {
			return c, nil, fmt.Errorf("whatif: budget %d bits per key is out of range 1..64", b)
		}
	}
	if c.Sample < 0 || c.Probes < 0 || c.Lookups < 0 || c.LookupTime < 0 {
		return c, nil, fmt.Errorf("whatif: -sample, -probes, -lookups and -lookuptime must not be negative")
	}
	if c.Probes == 0 {
		c.Probes = DefaultProbes
	}
	if c.Lookups == 0 {
		c.Lookups = DefaultLookups
	}
	if c.LookupTime == 0 {
		c.LookupTime = DefaultLookupTime
	}
	return c, budgets, nil
}

// probeAll derives the absent probes and runs them through the read model
// into rep; where there is a plan, it also measures the current filters
// through Pebble with lookups like the plan's.
func (a *analysis) probeAll(db *pebble.DB, rep *Report, c Config, progress io.Writer) error {
	slices.Sort(a.hashes)
	a.hashes = slices.Compact(a.hashes)
	ps := a.deriveProbes(rep)
	if progress != nil {
		fmt.Fprintf(progress, "whatif: probing %d absent keys\n", len(ps))
	}
	a.probe(rep, ps)
	rep.probeKeys = ps
	if rep.plan == nil || len(ps) == 0 {
		return nil
	}
	if progress != nil {
		fmt.Fprintf(progress, "whatif: measuring the current filters through Pebble (at most %d lookups, %v)\n", c.Lookups, c.LookupTime)
	}
	var err error
	rep.plan.Measured, err = a.measure(db, c.UseL6, limits{lookups: c.Lookups, time: c.LookupTime})
	return err
}

// newReport returns an empty report with a row per candidate on every level.
func newReport(dir, comparer string, cands []candidate) *Report {
	rep := &Report{dir: dir, comparer: comparer, baseline: "now"}
	for _, cd := range cands {
		rep.candidates = append(rep.candidates, cd.name)
	}
	for li := range rep.levels {
		L := &rep.levels[li]
		L.Level = li
		L.Candidates = make([]candidateResult, len(cands))
		for i, cd := range cands {
			L.Candidates[i].Name = cd.name
		}
	}
	return rep
}

// listTables returns the database's tables with their properties. Pebble
// reads the properties of every table, and on a corrupt one the logger's
// Fatalf would be its next step; so whatif's own reader, which returns what
// it finds wrong as an error, opens every table first. It checks every
// filter block too, before Pebble, which has the readers of both families
// (see openReadOnly), reads one: Pebble's bloom reader divides by zero on
// some malformed blocks.
func (a *analysis) listTables(db *pebble.DB) ([][]pebble.SSTableInfo, error) {
	var levels [][]pebble.SSTableInfo
	err := catch(func() (err error) {
		levels, err = db.SSTables() // reads no table
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("whatif: listing tables: %w", err)
	}
	for _, info := range a.localFiles(levels) {
		f, r, err := a.openTable(info)
		if err != nil {
			return nil, err
		}
		err = readNowFilter(&table{}, r, f, a.tablePath(info))
		if cerr := r.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("whatif: %s: %w", a.tablePath(info), cerr)
		}
		if err != nil {
			return nil, err
		}
	}
	err = catch(func() (err error) {
		levels, err = db.SSTables(pebble.WithProperties())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("whatif: reading table properties: %w", namePath(err))
	}
	return levels, nil
}

// localFiles returns one table of each local file that backs tables in
// levels, in level order: virtual tables share their backing file.
func (a *analysis) localFiles(levels [][]pebble.SSTableInfo) []pebble.SSTableInfo {
	var out []pebble.SSTableInfo
	seen := map[string]bool{}
	for _, lv := range levels {
		for _, info := range lv {
			path := a.tablePath(info)
			if info.BackingType != pebble.BackingTypeLocal || seen[path] {
				continue
			}
			seen[path] = true
			out = append(out, info)
		}
	}
	return out
}

// tablePath returns the path of the file that holds the table.
func (a *analysis) tablePath(info pebble.SSTableInfo) string {
	return a.fs.PathJoin(a.dir, fmt.Sprintf("%06d.sst", uint64(info.BackingSSTNum)))
}

// countTables returns the number of tables and their entries, as their
// properties count them.
func countTables(levels [][]pebble.SSTableInfo) (nTables int, totalEntries uint64) {
	for _, lv := range levels {
		for _, t := range lv {
			nTables++
			if t.Properties != nil {
				totalEntries += t.Properties.NumEntries
			}
		}
	}
	return nTables, totalEntries
}

// readLevels reads every local table into a and rep, noting about once a
// second on progress (when not nil) how far it is. It reports whether some
// table has a filter whatif can probe.
func (a *analysis) readLevels(rep *Report, levels [][]pebble.SSTableInfo, nTables int, progress io.Writer) (probed bool, err error) {
	unreadable := map[string]bool{}
	done, last := 0, time.Now()
	for li, lv := range levels {
		if li >= numLevels {
			break
		}
		L := &rep.levels[li]
		for _, info := range lv {
			if info.BackingType != pebble.BackingTypeLocal {
				rep.remoteTables++
				continue
			}
			L.Tables++
			t, err := a.readTable(L, info)
			if err != nil {
				return false, err
			}
			addNow(L, t.nowName, t.nowSize)
			if t.nowName != "" && t.now == nil {
				unreadable[t.nowName] = true
			}
			probed = probed || t.now != nil
			a.tables[li] = append(a.tables[li], t)
			done++
			if progress != nil && time.Since(last) > time.Second {
				fmt.Fprintf(progress, "whatif: read %d of %d tables (L%d), %d filter keys\n", done, nTables, li, len(a.hashes))
				last = time.Now()
			}
		}
	}
	for n := range unreadable {
		rep.unreadable = append(rep.unreadable, n)
	}
	slices.Sort(rep.unreadable)
	return probed, nil
}

func addNow(L *levelRow, name string, size uint64) {
	L.NowBytes += size
	for i := range L.Now {
		if L.Now[i].Policy == name {
			L.Now[i].Tables++
			L.Now[i].Bytes += size
			return
		}
	}
	L.Now = append(L.Now, nowFilter{Policy: name, Tables: 1, Bytes: size})
}

type analysis struct {
	cmp      func(a, b []byte) int
	split    func(k []byte) int
	cands    []candidate
	ropts    sstable.ReaderOptions
	fs       vfs.FS
	dir      string
	sample   int
	probes   int
	total    uint64
	sentinel bool
	sampled  bool
	plan     *planReport // nil: nothing to plan for

	tables  [numLevels][]*table
	hashes  []uint64 // every filter key of the database
	sources [][]byte // keys the probes derive from
}

// readTable reads one table's filter keys and current filter block and
// builds its candidate filters.
func (a *analysis) readTable(L *levelRow, info pebble.SSTableInfo) (*table, error) {
	path := a.tablePath(info)
	f, r, err := a.openTable(info)
	if err != nil {
		return nil, err
	}
	defer r.Close()

	t := &table{
		level:    L.Level,
		smallest: bytes.Clone(info.Smallest.UserKey[:a.split(info.Smallest.UserKey)]),
		largest:  bytes.Clone(info.Largest.UserKey[:a.split(info.Largest.UserKey)]),
	}
	if err := readNowFilter(t, r, f, path); err != nil {
		return nil, err
	}
	stride, every := a.spacing(info)
	s, err := a.scanKeys(r, info, stride, every)
	if err != nil {
		return nil, fmt.Errorf("whatif: %s: %w", path, err)
	}
	L.Entries += s.entries
	L.Keys += s.nkeys
	L.Sampled += uint64(len(s.keys))
	if len(s.keys) == 0 {
		return t, nil
	}
	a.buildCandidates(L, t, s.keys, s.nkeys)
	a.buildProjections(a.plan, t, s.keys, s.nkeys)
	return t, nil
}

// openTable opens the file of the table and its reader; closing the reader
// closes the file.
func (a *analysis) openTable(info pebble.SSTableInfo) (vfs.File, *sstable.Reader, error) {
	path := a.tablePath(info)
	f, err := a.fs.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("whatif: %w", err)
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("whatif: %s: %w", path, err)
	}
	ropts := a.ropts
	ropts.CacheOpts.FileNum = info.BackingSSTNum // for Pebble's messages
	r, err := sstable.NewReader(context.Background(), readable, ropts)
	if err != nil {
		_ = readable.Close()
		return nil, nil, fmt.Errorf("whatif: %s: %w", path, err)
	}
	return f, r, nil
}

// spacing returns the table's sample stride (every entry when it needs no
// sample) and how many entries apart its probe sources are (0: none).
func (a *analysis) spacing(info pebble.SSTableInfo) (stride, every uint64) {
	stride = 1
	if a.sample > 0 && info.Properties != nil && info.Properties.NumEntries > uint64(a.sample) {
		stride = (info.Properties.NumEntries + uint64(a.sample) - 1) / uint64(a.sample)
		a.sampled = true
	}
	// Probe sources: this table's share of all probes, spread over its keys.
	if info.Properties != nil && info.Properties.NumEntries > 0 && a.total > 0 {
		share := float64(a.probes) * float64(info.Properties.NumEntries) / float64(a.total)
		if share > 0 {
			every = max(1, uint64(float64(info.Properties.NumEntries)/share))
		}
	}
	return stride, every
}

// scanned is what scanKeys finds in one table.
type scanned struct {
	keys    [][]byte // the sampled filter keys
	entries uint64   // entries within the table's bounds
	nkeys   uint64   // filter keys
}

// scanKeys reads the table's filter keys: it adds each one's hash to
// a.hashes and every few entries' to a.sources, and samples one every stride
// entries.
func (a *analysis) scanKeys(r *sstable.Reader, info pebble.SSTableInfo, stride, every uint64) (scanned, error) {
	var s scanned
	it, err := r.NewIter(sstable.NoTransforms, nil, nil, sstable.DebugHandlesBlobContext)
	if err != nil {
		return s, err
	}
	var (
		prev    []byte
		have    bool
		next    = every / 2
		nextKey uint64
	)
	for kv := it.First(); kv != nil; kv = it.Next() {
		uk := kv.K.UserKey
		if info.Virtual && (a.cmp(uk, info.Smallest.UserKey) < 0 || a.cmp(uk, info.Largest.UserKey) > 0) {
			continue
		}
		s.entries++
		p := uk[:a.split(uk)]
		if have && bytes.Equal(p, prev) {
			continue
		}
		prev, have = append(prev[:0], p...), true
		a.hashes = append(a.hashes, xxhash.Sum64(p))
		// The sample and the sources are spread by entries, which
		// NumEntries counts: a key with many versions is one filter key.
		if s.entries > nextKey {
			s.keys = append(s.keys, bytes.Clone(p))
			for nextKey < s.entries {
				nextKey += stride
			}
		}
		if every > 0 && s.entries > next {
			a.sources = append(a.sources, bytes.Clone(p))
			for next < s.entries {
				next += every
			}
		}
		s.nkeys++
	}
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return s, err
}

// buildCandidates builds t's candidate filters from the sampled keys and adds
// their bytes, scaled up to all nkeys filter keys, to L.
func (a *analysis) buildCandidates(L *levelRow, t *table, keys [][]byte, nkeys uint64) {
	scale := float64(nkeys) / float64(len(keys))
	t.cands = make([][]byte, len(a.cands))
	for i, cd := range a.cands {
		w := cd.policy.NewWriter(pebble.TableFilter)
		for _, k := range keys {
			w.AddKey(k)
		}
		t.cands[i] = w.Finish(nil)
		L.Candidates[i].Bytes += float64(len(t.cands[i])) * scale
	}
}
