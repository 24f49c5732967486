package cuckoopolicy_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/dbtest"
)

var (
	cuckooName = cuckoopolicy.FilterPolicy(10).Name()
	bloomName  = bloom.FilterPolicy(10).Name()
)

const (
	probes   = 200
	perTable = 500
)

// TestApplySwitch switches a bloom database to cuckoo and back. Filter hits
// count tables a filter ruled out: an absent Get over T tables gets about T
// of them while every table's filter is read, and none from a table whose
// policy Options.Filters lacks.
func TestApplySwitch(t *testing.T) {
	m := dbtest.New(t)
	m.Open(dbtest.LevelsOnly(bloom.FilterPolicy(10)))
	m.FlushTables(4, perTable)
	full := m.AbsentGets(probes)
	// Each absent Get probes 4 tables; bloom(10) passes about 1% of them.
	if min := int64(4 * probes * 95 / 100); full < min {
		t.Fatalf("bloom database: %d filter hits over %d absent Gets on 4 tables, want at least %d", full, probes, min)
	}
	m.Close()

	// The trap: the levels alone leave Options.Filters without bloom.
	m.Open(dbtest.LevelsOnly(cuckoopolicy.FilterPolicy(10)))
	if got := m.AbsentGets(probes); got != 0 {
		t.Fatalf("levels set to cuckoo without Apply: %d filter hits on bloom tables, want 0 (bloom not registered)", got)
	}
	m.CheckKeys()
	m.Close()

	// Apply keeps the bloom tables filtered and writes cuckoo tables.
	m.Open(dbtest.Applied(cuckoopolicy.FilterPolicy(10)))
	if got := m.AbsentGets(probes); got < full*95/100 {
		t.Fatalf("after Apply(cuckoo): %d filter hits, want about %d as before the switch", got, full)
	}
	m.FlushTables(2, perTable)
	u := m.Usage()
	if u[bloomName].Tables != 4 || u[cuckooName].Tables != 2 {
		t.Fatalf("after 2 flushes with cuckoo: level 0 usage %+v, want 4 bloom and 2 cuckoo tables", u)
	}
	if got, min := m.AbsentGets(probes), int64(6*probes*95/100); got < min {
		t.Fatalf("mixed database: %d filter hits over %d absent Gets on 6 tables, want at least %d", got, probes, min)
	}
	m.CheckKeys()
	m.Close()

	// Rollback: bloom with Apply keeps the cuckoo tables filtered; the levels
	// alone do not.
	m.Open(dbtest.LevelsOnly(bloom.FilterPolicy(10)))
	if got, max := m.AbsentGets(probes), int64(4*probes); got > max {
		t.Fatalf("rollback without Apply: %d filter hits, want at most %d (the 4 bloom tables only)", got, max)
	}
	m.Close()
	m.Open(dbtest.Applied(bloom.FilterPolicy(10)))
	if got, min := m.AbsentGets(probes), int64(6*probes*95/100); got < min {
		t.Fatalf("rollback with Apply: %d filter hits, want at least %d", got, min)
	}
	m.CheckKeys()
	m.Close()
}

// TestFilterUsageCompaction watches a switch complete: after a full manual
// compaction every table carries the new policy, the rows add up to the LSM's
// tables, and the filter costs about its budget per key.
func TestFilterUsageCompaction(t *testing.T) {
	m := dbtest.New(t)
	m.Open(dbtest.LevelsOnly(bloom.FilterPolicy(10)))
	m.FlushTables(3, 2000)
	m.Close()
	m.Open(dbtest.Applied(cuckoopolicy.FilterPolicy(10)))
	m.FlushTables(2, 2000)

	check := func(when string) []cuckoopolicy.Usage {
		rows, err := cuckoopolicy.FilterUsage(m.DB)
		if err != nil {
			t.Fatal(err)
		}
		met := m.DB.Metrics()
		var tables, levelTables [7]int
		var keys uint64
		for i, u := range rows {
			if i > 0 && (u.Level < rows[i-1].Level || u.Level == rows[i-1].Level && u.Policy <= rows[i-1].Policy) {
				t.Fatalf("%s: rows out of order: %+v", when, rows)
			}
			tables[u.Level] += u.Tables
			keys += u.Entries
		}
		for l := range levelTables {
			levelTables[l] = int(met.Levels[l].TablesCount)
		}
		if tables != levelTables {
			t.Fatalf("%s: usage counts tables per level %v, Metrics %v", when, tables, levelTables)
		}
		// Every key once, plus the two range-widening keys of each table
		// (which compactions merge into one copy each).
		if want := uint64(m.Keys); keys < want || keys > want+2*uint64(m.Tables) {
			t.Fatalf("%s: usage counts %d entries, want %d keys and at most %d widening entries", when, keys, want, 2*m.Tables)
		}
		return rows
	}

	before := check("before compaction")
	var policies []string
	for _, u := range before {
		policies = append(policies, u.Policy)
	}
	wantPolicies := []string{bloomName, cuckooName}
	slices.Sort(wantPolicies)
	if got := strings.Join(policies, ","); got != strings.Join(wantPolicies, ",") {
		t.Fatalf("before compaction: policies %q, want bloom and cuckoo on level 0", got)
	}

	if err := m.DB.Compact(t.Context(), []byte("a"), []byte("z"), true); err != nil {
		t.Fatal(err)
	}
	after := check("after compaction")
	for _, u := range after {
		if u.Policy != cuckooName {
			t.Fatalf("after a full compaction: level %d has %d tables with policy %q, want only %q", u.Level, u.Tables, u.Policy, cuckooName)
		}
		// FilterPolicy(10) sizes each table's block to bloom(10)'s bytes:
		// 10 bits a key rounded up to an odd number of 64-byte lines, plus
		// 5 (at most 10 bits a key, 2 lines and 5 bytes a table), less at
		// most one bucket (44 bits) and a byte.
		lo := (10*u.Entries - uint64(u.Tables)*44) / 8
		hi := 10*u.Entries/8 + uint64(u.Tables)*(2*64+5+1)
		if u.FilterBytes < lo || u.FilterBytes > hi {
			t.Fatalf("level %d: %d filter bytes for %d keys in %d tables (%.2f bits a key), want %d to %d", u.Level, u.FilterBytes, u.Entries, u.Tables, u.BitsPerEntry(), lo, hi)
		}
	}
	m.CheckKeys()
	// The compaction put every table in L6, whose filters Get never reads;
	// prefix reads with UseL6Filters do.
	if got := m.AbsentGets(probes); got != 0 {
		t.Fatalf("after compaction into L6: %d filter hits over %d absent Gets, want 0 (Get skips L6 filters)", got, probes)
	}
	if got, min := absentPrefixReads(m, probes), int64(probes*95/100); got < min {
		t.Fatalf("after compaction: %d filter hits over %d absent prefix reads with UseL6Filters, want at least %d", got, probes, min)
	}
	m.Close()
}

// absentPrefixReads seeks n absent keys with SeekPrefixGE on an iterator that
// reads L6 filters, and returns how many times a filter ruled out a table.
func absentPrefixReads(m *dbtest.DB, n int) int64 {
	m.T.Helper()
	before := m.DB.Metrics().Filter.Hits
	it, err := m.DB.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		m.T.Fatal(err)
	}
	for i := range n {
		if it.SeekPrefixGE(dbtest.Absent(i)) {
			m.T.Fatalf("SeekPrefixGE(%q) found %q", dbtest.Absent(i), it.Key())
		}
	}
	if err := it.Close(); err != nil {
		m.T.Fatal(err)
	}
	return m.DB.Metrics().Filter.Hits - before
}

func TestApplyKeepsFiltersAndIsIdempotent(t *testing.T) {
	other := bloom.FilterPolicy(12)
	custom := pebble.FilterPolicy(cuckoopolicy.Policy{FingerprintBits: 8})
	opts := &pebble.Options{Filters: map[string]pebble.FilterPolicy{"custom": custom, bloomName: other}}
	cuckoopolicy.Apply(opts, cuckoopolicy.FilterPolicy(16))
	if opts.Filters["custom"] != custom || opts.Filters[bloomName] != other {
		t.Fatalf("Apply replaced entries already there: %v", opts.Filters)
	}
	if opts.Filters[cuckooName] != cuckoopolicy.FilterPolicy(16) || len(opts.Filters) != 3 {
		t.Fatalf("Filters = %v, want custom, %s and %s", opts.Filters, bloomName, cuckooName)
	}
	for i, l := range opts.Levels {
		if l.FilterPolicy != cuckoopolicy.FilterPolicy(16) || l.FilterType != pebble.TableFilter {
			t.Fatalf("level %d: policy %v type %v", i, l.FilterPolicy, l.FilterType)
		}
	}
	snapshot := func(o *pebble.Options) string { return fmt.Sprint(o.Levels, o.Filters) }
	once := snapshot(opts)
	cuckoopolicy.Apply(opts, cuckoopolicy.FilterPolicy(16))
	if again := snapshot(opts); again != once {
		t.Fatalf("second Apply changed the options:\n%s\n%s", once, again)
	}

	fresh := &pebble.Options{}
	cuckoopolicy.Apply(fresh, bloom.FilterPolicy(10))
	want := map[string]pebble.FilterPolicy{bloomName: bloom.FilterPolicy(10), cuckooName: cuckoopolicy.FilterPolicy(10)}
	if !reflect.DeepEqual(fresh.Filters, want) {
		t.Fatalf("Apply(bloom) on empty options: Filters = %v, want %v", fresh.Filters, want)
	}

	none := &pebble.Options{}
	cuckoopolicy.Apply(none, pebble.NoFilterPolicy)
	if !reflect.DeepEqual(none.Filters, want) || none.Levels[3].FilterPolicy != pebble.NoFilterPolicy {
		t.Fatalf("Apply(NoFilterPolicy): Filters = %v, L3 = %v; want both readers and no filter written", none.Filters, none.Levels[3].FilterPolicy)
	}
}

func TestApplyNil(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts *pebble.Options
		p    pebble.FilterPolicy
		want string
	}{
		{"nil options", nil, cuckoopolicy.FilterPolicy(10), "nil *pebble.Options"},
		{"nil policy", &pebble.Options{}, nil, "nil pebble.FilterPolicy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tc.want) {
					t.Fatalf("recovered %v, want a panic naming %q", r, tc.want)
				}
				if tc.opts != nil && (tc.opts.Filters != nil || tc.opts.Levels[0].FilterPolicy != nil) {
					t.Fatalf("the panicking Apply changed the options: %+v", tc.opts.Levels[0])
				}
			}()
			cuckoopolicy.Apply(tc.opts, tc.p)
		})
	}
}

// TestFilterUsageClosed pins what FilterUsage does on a closed database: it
// panics as Pebble's SSTables does.
func TestFilterUsageClosed(t *testing.T) {
	m := dbtest.New(t)
	m.Open(dbtest.Applied(cuckoopolicy.FilterPolicy(10)))
	m.FlushTables(1, 10)
	db := m.DB
	m.Close()
	defer func() {
		if recover() == nil {
			t.Fatal("FilterUsage on a closed database returned; want a panic, as db.SSTables")
		}
	}()
	cuckoopolicy.FilterUsage(db)
}

// rowsReadBy returns, for each policy with tables in the database, whether
// opts read them (Usage.ReadBy).
func rowsReadBy(m *dbtest.DB, opts *pebble.Options) map[string]bool {
	m.T.Helper()
	out := map[string]bool{}
	for p, u := range m.Usage() {
		out[p] = u.ReadBy(opts)
	}
	return out
}

// checkReadBy opens the database with opts' levels and filters, and checks
// that the 4 tables with the old policy's filters are read (filter hits for
// about every probe, ReadBy true) or not (no hits, ReadBy false).
func checkReadBy(m *dbtest.DB, name string, opts *pebble.Options, old string, read bool) {
	m.T.Helper()
	m.Open(func(dst *pebble.Options) { dst.Levels, dst.Filters = opts.Levels, opts.Filters })
	defer m.Close()
	hits := m.AbsentGets(probes)
	if min := int64(4 * probes * 95 / 100); read && hits < min {
		m.T.Fatalf("%s: %d filter hits on the %s tables, want at least %d", name, hits, old, min)
	}
	if !read && hits != 0 {
		m.T.Fatalf("%s: %d filter hits on the %s tables, want 0 (%s not registered)", name, hits, old, old)
	}
	if r := rowsReadBy(m, opts); r[old] != read {
		m.T.Fatalf("%s: ReadBy = %v, want %v for the %s tables", name, r, read, old)
	}
	m.CheckKeys()
}

// TestSilentLossPaths covers the two ways a database loses its filters
// without an error, and Usage.ReadBy catching both: a rollback by plain bloom
// options, and options rebuilt from the OPTIONS file. Filter hits count the
// tables a filter ruled out: 4 tables give about 4 per absent Get while their
// filters are read, and none otherwise.
func TestSilentLossPaths(t *testing.T) {
	t.Run("rollback by plain options", func(t *testing.T) {
		m := dbtest.New(t)
		m.Open(dbtest.Applied(cuckoopolicy.FilterPolicy(10)))
		m.FlushTables(4, perTable)
		m.Close()

		plain := &pebble.Options{}
		dbtest.LevelsOnly(bloom.FilterPolicy(10))(plain)
		checkReadBy(m, "rolled back by plain bloom options", plain, cuckooName, false)
		fixed := &pebble.Options{}
		cuckoopolicy.Apply(fixed, bloom.FilterPolicy(10))
		checkReadBy(m, "rolled back with Apply", fixed, cuckooName, true)
	})

	t.Run("options from the OPTIONS file", func(t *testing.T) {
		m := dbtest.New(t)
		m.Open(dbtest.LevelsOnly(bloom.FilterPolicy(10)))
		m.FlushTables(4, perTable)
		m.Close()
		// Switched to cuckoo: the OPTIONS file now names cuckoo on every
		// level, while the 4 tables still carry bloom filters.
		m.Open(dbtest.Applied(cuckoopolicy.FilterPolicy(10)))
		m.Close()

		parsed := m.OptionsFile()
		if parsed.Levels[0].FilterPolicy != cuckoopolicy.FilterPolicy(10) {
			t.Fatalf("parsed L0 policy %v, want the cuckoo policy the OPTIONS file names", parsed.Levels[0].FilterPolicy)
		}
		checkReadBy(m, "options parsed without Apply", parsed, bloomName, false)
		parsed = m.OptionsFile()
		cuckoopolicy.Apply(parsed, parsed.Levels[0].FilterPolicy)
		checkReadBy(m, "parsed options with Apply", parsed, bloomName, true)
	})
}

func TestReadBy(t *testing.T) {
	cuckooLevels := &pebble.Options{}
	dbtest.LevelsOnly(cuckoopolicy.FilterPolicy(10))(cuckooLevels)
	applied := &pebble.Options{}
	cuckoopolicy.Apply(applied, cuckoopolicy.FilterPolicy(10))
	registered := &pebble.Options{Filters: map[string]pebble.FilterPolicy{bloomName: bloom.FilterPolicy(10)}}
	for _, tc := range []struct {
		name   string
		policy string
		opts   *pebble.Options
		want   bool
	}{
		{"no filter, nil options", "", nil, true},
		{"cuckoo, nil options", cuckooName, nil, false},
		{"cuckoo, empty options", cuckooName, &pebble.Options{}, false},
		{"cuckoo, levels set to cuckoo", cuckooName, cuckooLevels, true},
		{"bloom, levels set to cuckoo", bloomName, cuckooLevels, false},
		{"bloom, Apply(cuckoo)", bloomName, applied, true},
		{"bloom, only in Filters", bloomName, registered, true},
		{"cuckoo, only bloom in Filters", cuckooName, registered, false},
		{"other policy, Apply(cuckoo)", "other", applied, false},
	} {
		if got := (cuckoopolicy.Usage{Policy: tc.policy}).ReadBy(tc.opts); got != tc.want {
			t.Errorf("%s: ReadBy = %v, want %v", tc.name, got, tc.want)
		}
	}
}
