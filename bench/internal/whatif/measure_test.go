package whatif

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// buildL0 writes a database of flushes L0 tables, each of perTable keys
// interleaved with the others' so that every table's range spans the
// database: every absent key in it meets every table. policy(i) is the
// filter of flush i.
func buildL0(t *testing.T, dir string, flushes, perTable int, policy func(int) pebble.FilterPolicy) {
	t.Helper()
	for round := range flushes {
		o := dbOptions(false)
		for i := range o.Levels {
			o.Levels[i].FilterPolicy = policy(round)
			o.TargetFileSizes[i] = 64 << 20 // one table a flush
		}
		db, err := pebble.Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range perTable {
			if err := db.Set(userKey(i*flushes+round), []byte("v"), pebble.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// z1e6 is the number of standard deviations beyond which a normal variable
// lies with probability 1e-6, both sides together.
const z1e6 = 4.89

// TestMeasureBloomL0 measures, through Pebble, a database whose filters are
// known: four L0 tables of 5,000 keys with bloom(10). Every absent Get
// checks all four filters, and the share of them that answer "may contain"
// is bloom(10)'s rate on 5,000 keys, measured here directly on a filter of
// the test's own with a million random keys: the two agree within z1e6
// standard deviations of their difference, a bound that fails by chance at
// most once in a million runs. The database is left byte-identical.
func TestMeasureBloomL0(t *testing.T) {
	const tables, perTable = 4, 5000
	dir := t.TempDir()
	buildL0(t, dir, tables, perTable, func(int) pebble.FilterPolicy { return bloom.FilterPolicy(10) })
	before := pebbletest.MustSnapshot(t, dir)
	rep, err := Analyze(Config{Dir: dir, Probes: 3000, Budgets: []int{10}})
	if err != nil {
		t.Fatal(err)
	}
	pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, dir))
	if rep.levels[0].Tables != tables || rep.plan == nil || rep.plan.Measured == nil {
		t.Fatalf("L0 %d tables, plan section %+v: want %d tables and a measurement", rep.levels[0].Tables, rep.plan, tables)
	}
	m := rep.plan.Measured
	checks := m.Hits + m.Misses
	// Probes beyond the last key (its last byte's bit flipped upward) meet
	// no table; all others meet every one.
	if m.Unfiltered != 0 || m.Dropped != 0 || checks > tables*int64(m.Lookups) || checks < tables*int64(m.Lookups)*99/100 {
		t.Fatalf("%+v: want about %d filter checks a lookup, nothing unfiltered or dropped", *m, tables)
	}
	if m.reads() < targetReads || m.Stop != stopTarget || m.Rounds < 2 {
		t.Errorf("%+v: want it past its first round and stopped at %d reads in vain", *m, targetReads)
	}
	const n = 1_000_000
	got, direct := float64(m.Misses)/float64(checks), directFPR(bloom.FilterPolicy(10), perTable, n)
	if !within(got, int(checks), direct, n, z1e6) {
		t.Errorf("Pebble counted %.4f%% of %d filter checks positive; bloom(10) on %d keys directly %.4f%%",
			100*got, checks, perTable, 100*direct)
	}
	// The 95% interval holds the figure, and the report prints it.
	lo, hi := m.interval()
	if per := m.perLookup(); lo >= per || hi <= per || math.Abs(per-tables*direct) > 0.25*tables*direct {
		t.Errorf("%.5f reads in vain per lookup, 95%% interval %.5f to %.5f; expected about %.5f", per, lo, hi, tables*direct)
	}
	var out strings.Builder
	if err := rep.Write(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, row := range [][]string{
		{"measured (Pebble)", fpText(m.perLookup()), fpText(lo) + " to " + fpText(hi), num(uint64(m.reads())), num(uint64(m.Lookups))},
		{"plan.Fit's model", fpText(rep.plan.Fit.Current.FalsePositives)},
		{"model/measured", errRatio(rep.plan.Fit.Current.FalsePositives / m.perLookup())},
	} {
		if !hasRow(s, row) {
			t.Errorf("report lacks the row %q:\n%s", row, s)
		}
	}
	checkVerdict(t, s, rep)
	if testing.Verbose() {
		t.Log("\n" + s[strings.Index(s, "\nFilter plan:"):])
	}
}

// TestMeasureCounts caps the measurement at 1,000 lookups, on a database
// whose L0 mixes tables with bloom(10) and without a filter over L5 and L6
// tables, and checks its counts against what a fresh read-only Pebble
// counts for the same keys and against the tables without a filter whose
// bounds hold them, for db.Get (L0-L5) and for SeekPrefixGE with
// UseL6Filters (L0-L6). The WAL holds every key of the tables with a 0x01
// byte appended, the first round's keys: its batches are dropped, and the
// keys counted are the second round's. The database is left
// byte-identical.
func TestMeasureCounts(t *testing.T) {
	dir := t.TempDir()
	buildDB(t, dir)
	buildL0(t, dir, 2, 3000, func(int) pebble.FilterPolicy { return pebble.NoFilterPolicy })
	appendToWAL(t, dir, 1)
	before := pebbletest.MustSnapshot(t, dir)
	for _, useL6 := range []bool{false, true} {
		rep, err := Analyze(Config{Dir: dir, Probes: 3000, Budgets: []int{10}, UseL6: useL6, Lookups: 1000})
		if err != nil {
			t.Fatal(err)
		}
		m := rep.plan.Measured
		if m.Lookups != 1000 || m.Stop != stopLookups || len(m.keys) != 1000 || m.Dropped < rep.probes/2 || m.Rounds != 2 {
			t.Fatalf("useL6 %v, Lookups 1000: measured %+v, %d keys kept; want the first round dropped", useL6, *m, len(m.keys))
		}
		for _, k := range m.keys {
			if k[len(k)-1] != 2 {
				t.Fatalf("useL6 %v: key %q counted, not of the second round", useL6, k)
			}
		}
		keys := slices.Clone(m.keys)
		slices.SortFunc(keys, bytes.Compare) // one iterator, keys in order: Pebble counts as an iterator a key
		checks, misses := pebbleFilterCounts(t, dir, false, keys, useL6)
		unfiltered := unfilteredOracle(t, dir, keys, lastLevel(useL6))
		if m.Misses != misses || m.Hits+m.Misses != checks || m.Unfiltered != unfiltered || unfiltered == 0 {
			t.Errorf("useL6 %v: measured %+v; Pebble afresh: %d misses of %d filter checks; %d unfiltered tables hold the keys",
				useL6, *m, misses, checks, unfiltered)
		}
	}
	pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, dir))
}

// appendToWAL writes, for every key of the database in dir, the key with b
// appended, and closes the database with them in its WAL: a read-only open
// finds them in its memtable.
func appendToWAL(t *testing.T, dir string, b byte) {
	t.Helper()
	db, err := pebble.Open(dir, dbOptions(false))
	if err != nil {
		t.Fatal(err)
	}
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys [][]byte
	for valid := it.First(); valid; valid = it.Next() {
		keys = append(keys, append(slices.Clone(it.Key()), b))
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := db.Set(k, []byte("v"), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// unfilteredOracle counts, over keys, the tables on levels L0 to last that
// have point keys and no filter and whose bounds hold the key, as
// db.SSTables reports them.
func unfilteredOracle(t *testing.T, dir string, keys [][]byte, last int) int64 {
	t.Helper()
	lv, err := openCopy(t, dir).SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for l := 0; l <= last && l < len(lv); l++ {
		for _, s := range lv[l] {
			if s.Properties.FilterPolicyName != "" || s.Properties.NumEntries == 0 {
				continue
			}
			for _, k := range keys {
				if bytes.Compare(s.Smallest.UserKey, k) <= 0 && bytes.Compare(k, s.Largest.UserKey) <= 0 {
					n++
				}
			}
		}
	}
	return n
}

// hasRow reports whether s has a line whose fields, tabwriter's padding
// aside, begin with row's cells.
func hasRow(s string, row []string) bool {
	want := strings.Join(strings.Fields(strings.Join(row, " ")), " ")
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.Join(strings.Fields(line), " "), want) {
			return true
		}
	}
	return false
}

// TestMeasureModelOff measures four L0 tables of bloom(10) under a range
// deletion, left in the WAL, over three quarters of their keys: db.Get
// stops at the tombstone and checks no filter below it, which plan.Fit's
// model does not know, so its figure for the current filters is about four
// times Pebble's, as in the databases (3-4.4x). The model alone
// would switch (the plan at 0.60x the current filters); the verdict scales
// the plan's projection by the error, and the decision, weighing the
// larger figure against the measured one, stays.
func TestMeasureModelOff(t *testing.T) {
	dir := t.TempDir()
	buildL0(t, dir, 4, 5000, func(int) pebble.FilterPolicy { return bloom.FilterPolicy(10) })
	db, err := pebble.Open(dir, dbOptions(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteRange(userKey(0), userKey(15000), pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before := pebbletest.MustSnapshot(t, dir)
	rep, err := Analyze(Config{Dir: dir, Probes: 3000, Budgets: []int{10}})
	if err != nil {
		t.Fatal(err)
	}
	pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, dir))
	f, fit := rep.footing(), &rep.plan.Fit
	if f.kind != modelOff || f.err < 2 || f.plan[1] != fit.FalsePositives || fit.FalsePositives*1.3 > fit.Current.FalsePositives {
		t.Fatalf("footing %+v; plan.Fit: plan %g, current %g: want the model off 2x or more, the plan below 1/1.3 of the current by the model",
			f, fit.FalsePositives, fit.Current.FalsePositives)
	}
	var out strings.Builder
	if err := rep.Write(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, w := range []string{"The model's figure is off by more than 1.3x", "so the plan's projection is taken both as modelled and scaled by that error",
		"Decision: stay with the current filters: the plan's projected " + fpText(f.plan[1])} {
		if !strings.Contains(s, w) {
			t.Errorf("report lacks %q:\n%s", w, s)
		}
	}
	checkVerdict(t, s, rep)
	if testing.Verbose() {
		t.Log("\n" + s[strings.Index(s, "\nMeasured through Pebble:"):])
	}
}

// TestMeasureTimeCap stops the measurement at once with a LookupTime of a
// nanosecond: nothing is counted, the report says why, and the decision
// stays with the current filters, the model's figures unchecked.
func TestMeasureTimeCap(t *testing.T) {
	dir := t.TempDir()
	buildL0(t, dir, 2, 1000, func(int) pebble.FilterPolicy { return bloom.FilterPolicy(10) })
	rep, err := Analyze(Config{Dir: dir, Probes: 500, Budgets: []int{10}, LookupTime: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if m := rep.plan.Measured; m.Lookups != 0 || m.Stop != stopTime || rep.footing().kind != unmeasured {
		t.Fatalf("LookupTime 1ns: measured %+v", *m)
	}
	var out strings.Builder
	if err := rep.Write(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, w := range []string{"\nNo absent lookup was counted.\n", "it stopped at the cap of 1ns (-lookuptime).",
		"\nDecision: stay with the current filters: no absent lookup could be measured through Pebble"} {
		if !strings.Contains(s, w) {
			t.Errorf("report lacks %q:\n%s", w, s)
		}
	}
	checkVerdict(t, s, rep)
}

// TestAppendedKeys checks the measurement's keys against random keys: a
// filter of 50,000 keys meets keys with a byte appended (as measure makes
// them) at its rate on random keys, within z1e6 standard deviations, for
// bloom(10) and cuckoo(10). Pebble's bloom filter meets keys one bit from a
// present one (as the absent probes are) more often: at least 1.5x, which
// is why measure appends a byte.
func TestAppendedKeys(t *testing.T) {
	const keys, probes = 50000, 200000 // keys present: userKey(0), userKey(2), ...
	for _, p := range []pebble.FilterPolicy{bloom.FilterPolicy(10), cuckoopolicy.FilterPolicy(10)} {
		w := p.NewWriter(pebble.TableFilter)
		for i := range keys {
			w.AddKey(userKey(2 * i))
		}
		block := w.Finish(nil)
		rate := func(n int, key func(i int) []byte) float64 {
			fp := 0
			for i := range n {
				if p.MayContain(pebble.TableFilter, block, key(i)) {
					fp++
				}
			}
			return float64(fp) / float64(n)
		}
		random := directFPR(p, keys, probes)
		appended := rate(probes, func(i int) []byte { return append(userKey(2*(i%keys)), byte(1+i/keys)) })
		// The lowest bit of an even key's last digit: the odd key after it.
		flipped := rate(keys, func(i int) []byte { k := userKey(2 * i); k[len(k)-1] ^= 1; return k })
		if !within(appended, probes, random, probes, z1e6) {
			t.Errorf("%s: keys with a byte appended %.3f%% false positives, random keys %.3f%%", p.Name(), 100*appended, 100*random)
		}
		if _, isBloom := p.(bloom.FilterPolicy); isBloom && flipped < 1.5*random {
			t.Errorf("%s: keys one bit from a present one %.3f%% false positives, random keys %.3f%%: want 1.5x or more",
				p.Name(), 100*flipped, 100*random)
		}
		t.Logf("%s: random %.3f%%, a byte appended %.3f%%, a bit flipped %.3f%%", p.Name(), 100*random, 100*appended, 100*flipped)
	}
}

// TestInterval checks the 95% interval against the Poisson score interval's
// known values: none counted in n lookups gives [0, 1.96²/n]; k gives
// k + 1.96²/2 ± 1.96·sqrt(k + 1.96²/4), over n.
func TestInterval(t *testing.T) {
	for _, c := range []struct {
		reads  int64
		lo, hi float64
	}{
		{0, 0, 3.8415},
		{400, 362.67, 441.17},
	} {
		m := &measurement{Lookups: 10000, Misses: c.reads}
		lo, hi := m.interval()
		if math.Abs(lo*1e4-c.lo) > 0.01 || math.Abs(hi*1e4-c.hi) > 0.01 {
			t.Errorf("%d reads in vain in 10,000 lookups: 95%% interval %.2f to %.2f per 10,000, want %.2f to %.2f",
				c.reads, lo*1e4, hi*1e4, c.lo, c.hi)
		}
	}
}
