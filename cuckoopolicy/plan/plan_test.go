package plan_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/dbtest"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

func TestPlanString(t *testing.T) {
	c := func(b int) pebble.FilterPolicy { return cuckoopolicy.FilterPolicy(b) }
	for _, tc := range []struct {
		p    plan.Plan
		want string
	}{
		{plan.Plan{}, "L0-L6 none"},
		{plan.Plan{c(20), c(20), c(20), c(20), c(16), c(12), nil}, "L0-L3 cuckoo(20) L4 cuckoo(16) L5 cuckoo(12) L6 none"},
		{plan.Plan{c(10), bloom.FilterPolicy(10), pebble.NoFilterPolicy, nil, c(10), c(10), c(10)}, "L0 cuckoo(10) L1 bloom(10) L2-L3 none L4-L6 cuckoo(10)"},
		{plan.Plan{6: cuckoopolicy.Policy{FingerprintBits: 8, SemiSort: true, LoadFactor: 0.9}}, "L0-L5 none L6 cuckoo{f=8 semi load=0.9}"},
		{plan.Plan{6: cuckoopolicy.Policy{}}, "L0-L5 none L6 cuckoo{f=9 plain 10 bits}"},
		{plan.Progressive(), "L0-L4 cuckoo(16) L5 cuckoo(13) L6 cuckoo{f=8 semi load=0.97}"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestApplyPlan(t *testing.T) {
	custom := pebble.FilterPolicy(cuckoopolicy.Policy{FingerprintBits: 8})
	p := plan.Plan{bloom.FilterPolicy(16), nil, nil, nil, cuckoopolicy.FilterPolicy(16), cuckoopolicy.FilterPolicy(12), nil}
	opts := &pebble.Options{Filters: map[string]pebble.FilterPolicy{"custom": custom}}
	plan.Apply(opts, p)
	for l, lo := range opts.Levels {
		want := p[l]
		if want == nil {
			want = pebble.NoFilterPolicy
		}
		if lo.FilterPolicy != want || lo.FilterType != pebble.TableFilter {
			t.Errorf("L%d: policy %v type %v, want %v", l, lo.FilterPolicy, lo.FilterType, want)
		}
	}
	want := map[string]pebble.FilterPolicy{"custom": custom, bloom.FilterPolicy(10).Name(): bloom.FilterPolicy(16), cuckoopolicy.PolicyName: cuckoopolicy.FilterPolicy(16)}
	if !reflect.DeepEqual(opts.Filters, want) {
		t.Errorf("Filters = %v, want %v", opts.Filters, want)
	}
	once := fmt.Sprint(opts.Levels, opts.Filters)
	plan.Apply(opts, p)
	if again := fmt.Sprint(opts.Levels, opts.Filters); again != once {
		t.Errorf("second Apply changed the options:\n%s\n%s", once, again)
	}
	// A nil L0 stays "no filter" after Pebble fills in its defaults, and the
	// levels below do not inherit from above.
	opts.EnsureDefaults()
	if opts.Levels[1].FilterPolicy != pebble.NoFilterPolicy || opts.Levels[6].FilterPolicy != pebble.NoFilterPolicy {
		t.Errorf("after EnsureDefaults: L1 %v L6 %v, want none", opts.Levels[1].FilterPolicy, opts.Levels[6].FilterPolicy)
	}

	// Apply is Apply with one policy everywhere.
	a, b := &pebble.Options{}, &pebble.Options{}
	cuckoopolicy.Apply(a, cuckoopolicy.FilterPolicy(14))
	pp := cuckoopolicy.FilterPolicy(14)
	plan.Apply(b, plan.Plan{pp, pp, pp, pp, pp, pp, pp})
	if fmt.Sprint(a.Levels, a.Filters) != fmt.Sprint(b.Levels, b.Filters) {
		t.Errorf("Apply and Apply differ:\n%v %v\n%v %v", a.Levels, a.Filters, b.Levels, b.Filters)
	}

	defer func() {
		if s, _ := recover().(string); !strings.Contains(s, "nil *pebble.Options") {
			t.Errorf("Apply(nil, p): recovered %q, want a panic naming nil *pebble.Options", s)
		}
	}()
	plan.Apply(nil, p)
}

// TestPlanOptionsRoundTrip writes a mixed plan into an OPTIONS file and
// parses it back: each level comes back as its family's 10-bit reader, and
// levels without a filter as NoFilterPolicy.
func TestPlanOptionsRoundTrip(t *testing.T) {
	m := dbtest.New(t)
	p := plan.Plan{cuckoopolicy.FilterPolicy(20), nil, bloom.FilterPolicy(16), cuckoopolicy.Policy{FingerprintBits: 8, SemiSort: true},
		pebble.NoFilterPolicy, bloom.FilterPolicy(10), nil}
	m.Open(func(o *pebble.Options) { plan.Apply(o, p) })
	m.Close()
	parsed := m.OptionsFile()
	c, b, none := cuckoopolicy.FilterPolicy(10), bloom.FilterPolicy(10), pebble.NoFilterPolicy
	want := [7]pebble.FilterPolicy{c, none, b, c, none, b, none}
	for l := range want {
		if got := parsed.Levels[l].FilterPolicy; got != want[l] {
			t.Errorf("L%d parsed as %v, want %v", l, got, want[l])
		}
	}
}

// TestFitDatabase asks Fit about a real database: an L6 under two
// overlapping L0 tables. A plan for Get leaves L6 without a filter; the empty
// levels between are planned for the keys they will hold; the plan applied
// and compacted loses no key.
func TestFitDatabase(t *testing.T) {
	m := dbtest.New(t)
	m.Open(dbtest.Applied(bloom.FilterPolicy(10)))
	m.FlushTables(4, 2_000)
	if err := m.DB.Compact(context.Background(), []byte("key"), []byte("key~~"), true); err != nil {
		t.Fatal(err)
	}
	m.FlushTables(2, perTable)

	if p, err := fitPlan(m.DB, 0, true); err != nil || p != (plan.Plan{}) {
		t.Fatalf("Fit(db, 0): %v, %v; want no filters", p, err)
	}
	p, err := fitPlan(m.DB, 64<<10, false)
	if err != nil {
		t.Fatal(err)
	}
	if p[6] != nil || p[0] == nil {
		t.Fatalf("plan for Get %v: want a filter on L0 and none on L6", p)
	}
	for l := 1; l < 6; l++ {
		if p[l] == nil {
			t.Fatalf("plan for Get %v: empty L%d, planned for the keys it will hold, has no filter", p, l)
		}
	}
	withL6, err := fitPlan(m.DB, 64<<10, true)
	if err != nil {
		t.Fatal(err)
	}
	if withL6[6] == nil {
		t.Fatalf("plan with L6 filters %v: want a filter on L6", withL6)
	}
	m.Close()

	m.Open(func(o *pebble.Options) { plan.Apply(o, withL6) })
	if got, min := m.AbsentGets(probes), int64(2*probes*95/100); got < min {
		t.Fatalf("after Apply: %d filter hits over %d absent Gets on 2 L0 tables, want at least %d", got, probes, min)
	}
	if err := m.DB.Compact(context.Background(), []byte("key"), []byte("key~~"), true); err != nil {
		t.Fatal(err)
	}
	m.CheckKeys()
	rows, err := cuckoopolicy.FilterUsage(m.DB)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range rows {
		if u.Level == 6 && u.Policy != withL6[6].Name() {
			t.Fatalf("after compaction under %v: L6 row %+v", withL6, u)
		}
	}
	m.Close()
}

const (
	probes   = 200
	perTable = 500
)

// fitPlan is Fit's plan at a Fixed budget, the other settings at their
// defaults.
func fitPlan(db *pebble.DB, maxFilterBytes uint64, useL6 bool) (plan.Plan, error) {
	r, err := plan.Fit(db, plan.Config{MaxFilterBytes: maxFilterBytes, Fixed: true, UseL6: useL6})
	return r.Plan, err
}

// TestFitAllKeysInL6: a database whose every key sits in L6 (a whole-range
// compaction), the usual state of a small database on Pebble's defaults,
// has nothing a plan for Get can fit: the reference takes no bytes on
// L0-L5, and a budget of 0 once wrote no filter anywhere. Fit's plan is
// then the reference's, and a live plan's levels keep writing filters, so
// the flushes to come are filtered.
func TestFitAllKeysInL6(t *testing.T) {
	lp := plan.NewLive(plan.Config{}, time.Hour)
	m := dbtest.New(t)
	m.Open(func(o *pebble.Options) {
		cuckoopolicy.Apply(o, bloom.FilterPolicy(10))
		o.Levels[6].FilterPolicy = pebble.NoFilterPolicy
		lp.Apply(o)
	})
	m.FlushTables(4, 2_000)
	if err := m.DB.Compact(context.Background(), []byte("key"), []byte("key~~"), true); err != nil {
		t.Fatal(err)
	}
	r, err := plan.Fit(m.DB, plan.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b10 := bloom.FilterPolicy(10)
	if r.Plan != (plan.Plan{b10, b10, b10, b10, b10, b10, nil}) || r.Reference.Plan != r.Plan {
		t.Errorf("Fit: plan %v at a budget of %d from %v; want the reference, bloom(10) on L0-L5", r.Plan, r.Budget, r.Reference.Plan)
	}
	db, err := lp.Start(m.DB)
	if err != nil {
		t.Fatal(err)
	}
	if p := lp.Plan(); p[0] == nil || p[5] == nil || lp.Status().Plan != p {
		t.Errorf("live plan: the levels write %v, Status says %v; want filters on L0-L5", p, lp.Status().Plan)
	}
	m.FlushTables(2, 2_000)
	if err := lp.Refit(); err != nil {
		t.Fatal(err)
	}
	if st := lp.Status(); st.Budget == 0 || st.Plan[0] == nil || st.Bytes > st.Budget {
		t.Errorf("live plan after two flushes: %v, %d bytes at a budget of %d; want an L0 filter within a budget above 0", st.Plan, st.Bytes, st.Budget)
	}
	m.CheckKeys()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFitMergesAndSingleDeletes fits plans on a database whose tables hold
// merges and single deletes, which Pebble's ScanInternal, an earlier way of
// sampling versions, panics on: Fit and a live plan's fits succeed and
// keep every key.
func TestFitMergesAndSingleDeletes(t *testing.T) {
	lp := plan.NewLive(plan.Config{}, time.Hour)
	m := dbtest.New(t)
	m.Open(lp.Apply)
	m.FlushTables(2, 1_000)
	for i := range 500 {
		if err := m.DB.Merge(dbtest.Key(i), []byte("+"), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		if err := m.DB.Set(dbtest.Absent(i), []byte("x"), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		if err := m.DB.SingleDelete(dbtest.Absent(i), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.DB.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Fit(m.DB, plan.Config{}); err != nil {
		t.Fatal(err)
	}
	db, err := lp.Start(m.DB)
	if err != nil {
		t.Fatalf("live plan's first fit: %v", err)
	}
	for i := range 500 {
		v, closer, err := m.DB.Get(dbtest.Key(i))
		if err != nil || string(v) != "v+" {
			t.Fatalf("key %d: %q, %v; want the merged value", i, v, err)
		}
		closer.Close()
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
