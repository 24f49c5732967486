package whatif

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/cockroachkvs"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// dbOptions are the options of the test databases: bloom(10) filters on all
// levels, no automatic compactions, small tables so levels hold several.
func dbOptions(crdb bool) *pebble.Options {
	o := &pebble.Options{DisableAutomaticCompactions: true, Logger: pebbletest.QuietLogger{}, LBaseMaxBytes: 16 << 10}
	for i := range o.TargetFileSizes {
		o.TargetFileSizes[i] = 32 << 10
	}
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		o.Levels[i].FilterType = pebble.TableFilter
	}
	if crdb {
		o.Comparer = &cockroachkvs.Comparer
		o.KeySchema = cockroachkvs.KeySchema.Name
		o.KeySchemas = sstable.MakeKeySchemas(&cockroachkvs.KeySchema)
		o.BlockPropertyCollectors = cockroachkvs.BlockPropertyCollectors
	}
	return o
}

// expected is what db.SSTables says of each level.
type expected struct {
	tables  [numLevels]int
	entries [numLevels]uint64
}

func sstables(t *testing.T, db *pebble.DB) expected {
	t.Helper()
	lv, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	for l, ts := range lv {
		for _, s := range ts {
			e.tables[l]++
			e.entries[l] += s.Properties.NumEntries
		}
	}
	return e
}

func userKey(i int) []byte { return []byte(fmt.Sprintf("user%08d", i)) }

// buildDB writes a database with tables in L0, L5 and L6 under dir and
// returns what db.SSTables reports of it.
func buildDB(t *testing.T, dir string) expected {
	t.Helper()
	o := dbOptions(false)
	db, err := pebble.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	set := func(keys func(yield func(int) bool)) {
		for i := range keys {
			if err := db.Set(userKey(i), []byte("value"), pebble.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	step := func(from, n, step int) func(func(int) bool) {
		return func(yield func(int) bool) {
			for i := range n {
				if !yield(from + i*step) {
					return
				}
			}
		}
	}
	set(step(0, 30000, 3))
	if err := db.Compact(context.Background(), []byte("a"), []byte("z"), false); err != nil {
		t.Fatal(err)
	}
	// An ingested table over L6's range and under nothing else lands in L5.
	ingest(t, db, o, step(1, 5000, 6))
	set(step(2, 3000, 30))
	set(step(50002, 3000, 9))
	set(step(95000, 2000, 1))
	// Writes left in the WAL: a read-only open replays them into a memtable,
	// whose keys have no filter and are not counted.
	for i := range 100 {
		if err := db.Set([]byte(fmt.Sprintf("zzz-unflushed-%d", i)), []byte("v"), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	e := sstables(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if e.tables[0] < 3 || e.tables[5] != 1 || e.tables[6] < 2 {
		t.Fatalf("test database has tables %v per level, want >= 3 in L0, 1 in L5, >= 2 in L6", e.tables)
	}
	return e
}

// ingest writes a table of the keys with o's options for L5 and ingests it
// into db.
func ingest(t *testing.T, db *pebble.DB, o *pebble.Options, keys func(func(int) bool)) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ingest.sst")
	f, err := vfs.Default.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	wo := o.Clone()
	wo.EnsureDefaults()
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), wo.MakeWriterOptions(5, db.TableFormat()))
	for i := range keys {
		if err := w.Set(userKey(i), []byte("ingested")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Ingest(context.Background(), []string{path}); err != nil {
		t.Fatal(err)
	}
}

// copyDB copies a database directory, LOCK aside.
func copyDB(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == "LOCK" || e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// pebbleFilterCounts runs the probes through a read-only Pebble on a copy of
// the database with the bloom reader registered and returns the filter
// checks and positives Pebble counted: with Get when prefix is false (L0-L5),
// with SeekPrefixGE on an iterator with UseL6Filters otherwise (L0-L6).
func pebbleFilterCounts(t *testing.T, dir string, crdb bool, probes [][]byte, prefix bool) (checks, positives int64) {
	t.Helper()
	o := dbOptions(crdb)
	o.ReadOnly = true
	o.Filters = map[string]pebble.FilterPolicy{bloom.FilterPolicy(10).Name(): bloom.FilterPolicy(10)}
	o.Cache = pebble.NewCache(0)
	defer o.Cache.Unref()
	db, err := pebble.Open(copyDB(t, dir), o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := db.Metrics().Filter
	if prefix {
		it, err := db.NewIter(&pebble.IterOptions{UseL6Filters: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probes {
			if it.SeekPrefixGE(p) {
				t.Fatalf("absent probe %q found in the database: %q", p, it.Key())
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		for _, p := range probes {
			if _, c, err := db.Get(p); !errors.Is(err, pebble.ErrNotFound) {
				if err == nil {
					c.Close()
				}
				t.Fatalf("absent probe %q: Get gave %v, want ErrNotFound", p, err)
			}
		}
	}
	after := db.Metrics().Filter
	h, m := after.Hits-before.Hits, after.Misses-before.Misses
	return h + m, m
}

// openCopy opens a read-only Pebble over a copy of the database in dir (the
// default comparer), closed when the test ends.
func openCopy(t *testing.T, dir string) *pebble.DB {
	t.Helper()
	o := dbOptions(false)
	o.ReadOnly = true
	db, err := pebble.Open(copyDB(t, dir), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// checkInWAL checks that a read-only Pebble on a copy of the database finds
// key, a write the database holds only in its WAL.
func checkInWAL(t *testing.T, dir string, key []byte) {
	t.Helper()
	_, c, err := openCopy(t, dir).Get(key)
	if err != nil {
		t.Fatalf("Get(%q) from the WAL: %v", key, err)
	}
	c.Close()
}

func sumLevels(r *Report, last int, f func(*levelRow) int) int64 {
	var n int64
	for l := 0; l <= last; l++ {
		n += int64(f(&r.levels[l]))
	}
	return n
}

// checkReadModel checks the report's read model of the database under dir
// (not a CockroachDB one) against the filter checks and positives Pebble
// counts for rep's probes: with Get (L0-L5) and with prefix reads with
// UseL6Filters (L0-L6).
func checkReadModel(t *testing.T, dir string, rep *Report) {
	t.Helper()
	for _, prefix := range []bool{false, true} {
		last := numLevels - 2
		if prefix {
			last = numLevels - 1
		}
		checks, pos := pebbleFilterCounts(t, dir, false, rep.probeKeys, prefix)
		wantChecks := sumLevels(rep, last, func(L *levelRow) int { return L.Checks })
		wantPos := sumLevels(rep, last, func(L *levelRow) int { return L.NowFalsePos })
		if checks != wantChecks || pos != wantPos {
			t.Errorf("prefix reads %v: Pebble counted %d filter checks, %d positive; whatif %d, %d",
				prefix, checks, pos, wantChecks, wantPos)
		}
	}
}

func candidateIndex(t *testing.T, r *Report, name string) int {
	t.Helper()
	i := slices.Index(r.candidates, name)
	if i < 0 {
		t.Fatalf("no candidate %s in %v", name, r.candidates)
	}
	return i
}

// directFPR builds the candidate from n keys of the test's own and probes it
// with random keys of another shape: the false-positive rate of the filter
// itself, whatever the keys.
func directFPR(p pebble.FilterPolicy, n, probes int) float64 {
	w := p.NewWriter(pebble.TableFilter)
	for i := range n {
		w.AddKey(userKey(i))
	}
	block := w.Finish(nil)
	rng := rand.New(rand.NewPCG(1, 2))
	fp := 0
	for range probes {
		if p.MayContain(pebble.TableFilter, block, []byte(fmt.Sprintf("absent-%016x", rng.Uint64()))) {
			fp++
		}
	}
	return float64(fp) / float64(probes)
}

// within reports whether rate a, measured on na probes, is within k standard
// deviations of rate b, measured on nb, plus a small slack for tiny rates.
func within(a float64, na int, b float64, nb int, k float64) bool {
	p := (a*float64(na) + b*float64(nb)) / float64(na+nb)
	sd := math.Sqrt(p * (1 - p) * (1/float64(na) + 1/float64(nb)))
	return math.Abs(a-b) <= k*sd+3/float64(na)
}

func TestAnalyze(t *testing.T) {
	dir := t.TempDir()
	want := buildDB(t, dir)
	before := pebbletest.MustSnapshot(t, dir)
	rep, err := Analyze(Config{Dir: dir, Probes: 5000})
	if err != nil {
		t.Fatal(err)
	}
	pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, dir))
	checkInWAL(t, dir, []byte("zzz-unflushed-0"))

	for l := range numLevels {
		L := &rep.levels[l]
		if L.Tables != want.tables[l] || L.Entries != want.entries[l] || L.Keys != want.entries[l] {
			t.Errorf("L%d: %d tables, %d entries, %d keys; db.SSTables: %d tables, %d entries",
				l, L.Tables, L.Entries, L.Keys, want.tables[l], want.entries[l])
		}
		for _, n := range L.Now {
			if n.Policy != bloom.FilterPolicy(10).Name() {
				t.Errorf("L%d: tables with filter policy %q, want bloom", l, n.Policy)
			}
		}
		// bloom(10) rebuilt from the keys read is the filter Pebble wrote:
		// same bytes, same answers.
		b10 := candidateIndex(t, rep, "bloom(10)")
		if c := L.Candidates[b10]; uint64(c.Bytes) != L.NowBytes || c.Hits != L.NowFalsePos || L.NowFiltered != L.Checks {
			t.Errorf("L%d: bloom(10) candidate %+v, current filters %d bytes, %d of %d (%d filtered) checks positive",
				l, c, L.NowBytes, L.NowFalsePos, L.Checks, L.NowFiltered)
		}
		for i, c := range L.Candidates {
			bpk := 8 * c.Bytes / float64(max(L.Keys, 1))
			if L.Keys > 0 && (bpk < 0.9*float64(rep.budgets()[i]) || bpk > 1.1*float64(rep.budgets()[i])+1) {
				t.Errorf("L%d: %s takes %.2f bits per key", l, c.Name, bpk)
			}
		}
	}
	if rep.probes < 4000 {
		t.Fatalf("%d absent probes from 5000 sources", rep.probes)
	}
	if rep.baseline != "now" {
		t.Errorf("baseline %q, want now", rep.baseline)
	}

	// The read model against Pebble.
	checkReadModel(t, dir, rep)

	// Cuckoo's rate does not depend on the keys' shape: the report's rate
	// on the database agrees with a direct measurement on other keys.
	var checks int
	hits := map[string]int{}
	for l := range numLevels {
		checks += rep.levels[l].Checks
		for _, c := range rep.levels[l].Candidates {
			hits[c.Name] += c.Hits
		}
	}
	for _, b := range []int{8, 10, 12} {
		name := fmt.Sprintf("cuckoo(%d)", b)
		got := float64(hits[name]) / float64(checks)
		const n = 200000
		direct := directFPR(cuckoopolicy.FilterPolicy(b), 30000, n)
		if !within(got, checks, direct, n, 5) {
			t.Errorf("%s: %.4f%% false positives on %d checks; directly %.4f%%", name, 100*got, checks, 100*direct)
		}
	}

	var out bytes.Buffer
	if err := rep.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"L0", "L5", "L6", "cuckoo(16)", "Get reads", "prefix reads", "rocksdb.BuiltinBloomFilter"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, out.String())
		}
	}
	if testing.Verbose() {
		t.Log("\n" + out.String())
	}
}

func (r *Report) budgets() []int {
	var bs []int
	for _, n := range r.candidates {
		var b int
		if _, err := fmt.Sscanf(n[strings.Index(n, "(")+1:], "%d", &b); err == nil {
			bs = append(bs, b)
		}
	}
	return bs
}

func TestAnalyzeSample(t *testing.T) {
	dir := t.TempDir()
	want := buildDB(t, dir)
	rep, err := Analyze(Config{Dir: dir, Sample: 1000, Probes: 2000, Budgets: []int{10}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.sampled {
		t.Error("Sampled is false with -sample 1000")
	}
	for l := range numLevels {
		L := &rep.levels[l]
		if L.Keys != want.entries[l] || L.Sampled > L.Keys || (L.Keys > 0 && L.Sampled == 0) {
			t.Errorf("L%d: %d keys, %d sampled; want %d keys", l, L.Keys, L.Sampled, want.entries[l])
		}
		for _, c := range L.Candidates {
			if bpk := 8 * c.Bytes / float64(max(L.Keys, 1)); L.Keys > 0 && math.Abs(bpk-10) > 1 {
				t.Errorf("L%d: %s scaled to %.2f bits per key", l, c.Name, bpk)
			}
		}
	}
}

func TestAnalyzeNoFilters(t *testing.T) {
	dir := t.TempDir()
	o := dbOptions(false)
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = pebble.NoFilterPolicy
	}
	db, err := pebble.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		if err := db.Set(userKey(i), []byte("v"), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze(Config{Dir: dir, Probes: 1000, Budgets: []int{10, 12}})
	if err != nil {
		t.Fatal(err)
	}
	L := &rep.levels[0]
	if rep.baseline != "bloom(10)" || L.NowBytes != 0 || L.NowHits != L.Checks || L.Checks == 0 || L.Now[0].Policy != "" {
		t.Errorf("database without filters: baseline %q, L0 %+v", rep.baseline, *L)
	}
	var out bytes.Buffer
	if err := rep.Write(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "savings are against bloom(10)") || !strings.Contains(out.String(), "none (1)") {
		t.Errorf("report on a database without filters:\n%s", out.String())
	}
}

func TestAnalyzeVirtual(t *testing.T) {
	dir := t.TempDir()
	o := dbOptions(false)
	o.FormatMajorVersion = pebble.FormatNewest
	db, err := pebble.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10000 {
		if err := db.Set(userKey(i), []byte("value"), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(context.Background(), []byte("a"), []byte("z"), false); err != nil {
		t.Fatal(err)
	}
	// The index bytes of each file, by its properties while its table is
	// physical: the block-cache section counts each file the tables left
	// by the excise use once.
	lv, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	indexOf := map[uint64]uint64{}
	for _, ts := range lv {
		for _, s := range ts {
			indexOf[uint64(s.BackingSSTNum)] = s.Properties.IndexSize
		}
	}
	// The second excise, narrower than a table, leaves two virtual tables
	// of one file.
	for _, r := range [][2]int{{4000, 6000}, {2000, 2010}} {
		if err := db.Excise(context.Background(), pebble.KeyRange{Start: userKey(r[0]), End: userKey(r[1])}); err != nil {
			t.Fatal(err)
		}
	}
	if lv, err = db.SSTables(); err != nil {
		t.Fatal(err)
	}
	virtual := 0
	var index uint64
	for _, ts := range lv {
		for _, s := range ts {
			if s.Virtual {
				virtual++
			}
			index += indexOf[uint64(s.BackingSSTNum)]
			delete(indexOf, uint64(s.BackingSSTNum))
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if virtual == 0 {
		t.Fatal("the excise left no virtual table")
	}
	rep, err := Analyze(Config{Dir: dir, Probes: 3000, Cache: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	keys := sumLevels(rep, numLevels-1, func(L *levelRow) int { return int(L.Keys) })
	if keys != 7990 {
		t.Errorf("%d filter keys after excising 2010 of 10000, want 7990", keys)
	}
	if rep.cache.Index != index || index == 0 {
		t.Errorf("index blocks %d bytes, want %d: each file the tables use once", rep.cache.Index, index)
	}
	checkReadModel(t, dir, rep)
}

// A database that already uses the cuckoo policy: its blocks are probed,
// and cuckoo(B) rebuilt from the keys is the filter Pebble wrote.
func TestAnalyzeCuckooNow(t *testing.T) {
	dir := t.TempDir()
	o := dbOptions(false)
	cuckoopolicy.Apply(o, cuckoopolicy.FilterPolicy(12))
	db, err := pebble.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		for i := range 4000 {
			if err := db.Set(userKey(i*3+round), []byte("v"), pebble.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze(Config{Dir: dir, Probes: 2000, Budgets: []int{12}})
	if err != nil {
		t.Fatal(err)
	}
	L := &rep.levels[0]
	c12 := candidateIndex(t, rep, "cuckoo(12)")
	if len(L.Now) != 1 || L.Now[0].Policy != cuckoopolicy.FilterPolicy(12).Name() || L.Now[0].Tables != 3 {
		t.Fatalf("L0 filters %+v, want 3 tables of %s", L.Now, cuckoopolicy.FilterPolicy(12).Name())
	}
	if c := L.Candidates[c12]; uint64(c.Bytes) != L.NowBytes || c.Hits != L.NowFalsePos || L.NowFiltered != L.Checks || L.Checks == 0 {
		t.Errorf("cuckoo(12) candidate %+v; current filters %d bytes, %d of %d checks positive (%d filtered)",
			c, L.NowBytes, L.NowFalsePos, L.Checks, L.NowFiltered)
	}
}

func TestAnalyzeEmpty(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(dir, dbOptions(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.Write(&out); err != nil {
		t.Fatal(err)
	}
	if rep.probes != 0 || !strings.Contains(out.String(), "nothing to measure") ||
		!strings.HasSuffix(out.String(), "\nDecision: stay with the current filters: there is no plan to switch to.\n") {
		t.Errorf("report on an empty database:\n%s", out.String())
	}
}
