package plan_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/dbtest"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// TestLivePlan runs a live plan on a database that grows: it fits at Start
// without a reopen, writes this package's filters on L0-L5 and none on L6,
// refits after flushes, keeps the model's bytes within its ceiling, loses
// no key, and stops cleanly. A fit on a closed database is an error.
func TestLivePlan(t *testing.T) {
	const budget = 16 << 10
	lp := plan.NewLive(plan.Config{MaxFilterBytes: budget}, time.Millisecond)
	if err := lp.Refit(); !errors.Is(err, plan.ErrNotStarted) {
		t.Errorf("Refit before Start: %v, want ErrNotStarted", err)
	}
	m := dbtest.New(t)
	m.Open(lp.Apply)

	m.FlushTables(2, 2_000)
	if _, err := lp.Start(m.DB); err != nil {
		t.Fatal(err)
	}
	if d, err := lp.Start(m.DB); !errors.Is(err, plan.ErrStarted) || d != nil {
		t.Errorf("second Start: %v, %v; want ErrStarted and no DB", d, err)
	}
	st := lp.Status()
	if st.Refits != 1 || st.FitError != nil || st.Bytes > budget || st.Plan[0] == nil || st.Plan[6] != nil {
		t.Fatalf("after Start: %d fits, error %v, plan %v of %d bytes; want one fit of a plan within %d bytes, L0 filtered, L6 not", st.Refits, st.FitError, st.Plan, st.Bytes, budget)
	}
	if lp.Plan() != st.Plan {
		t.Errorf("the levels write %v, the fit chose %v", lp.Plan(), st.Plan)
	}
	// The flushes ask for refits; wait for one (the interval is 1 ms).
	m.FlushTables(4, 4_000)
	deadline := time.Now().Add(30 * time.Second)
	for lp.Status().Refits < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	st = lp.Status()
	if st.Refits < 2 {
		t.Fatalf("no refit after four flushes: %+v", st)
	}
	if err := lp.Refit(); err != nil {
		t.Fatal(err)
	}
	st = lp.Status()
	if st.Bytes > budget || st.FalsePositives >= st.Current.FalsePositives && st.Current.Bytes <= st.Bytes {
		t.Errorf("plan %v: %d bytes, %.4g false positives; current filters %d bytes, %.4g", st.Plan, st.Bytes, st.FalsePositives, st.Current.Bytes, st.Current.FalsePositives)
	}
	t.Logf("plan %v: %d bytes, %.4g false positives per absent Get; fit took %v", st.Plan, st.Bytes, st.FalsePositives, st.FitTime)
	rows, err := cuckoopolicy.FilterUsage(m.DB)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range rows {
		if u.Level < 6 && u.Policy != cuckoopolicy.PolicyName {
			t.Errorf("L%d row %+v: want this package's filters", u.Level, u)
		}
	}
	m.CheckKeys()
	lp.Stop()
	lp.Stop()
	m.Close()
}

// TestLivePlanLowBudget gives a live plan fewer bytes than a cuckoo filter
// takes on its tables (about 2 bits per key): its levels write Pebble's
// bloom filter in this package's blocks, which rule absent keys out, and no
// key is lost.
func TestLivePlanLowBudget(t *testing.T) {
	const perTable = 2_000
	lp := plan.NewLive(plan.Config{MaxFilterBytes: 4 * perTable * 2 / 8}, time.Hour)
	m := dbtest.New(t)
	m.Open(lp.Apply)
	m.FlushTables(4, perTable)
	if _, err := lp.Start(m.DB); err != nil {
		t.Fatal(err)
	}
	p := lp.Plan()
	if !strings.Contains(p.String(), "in cuckoo blocks") {
		t.Fatalf("plan %v at about 2 bits per key: want bloom blocks", p)
	}
	before := m.AbsentGets(500)
	m.FlushTables(2, perTable)
	for _, u := range m.Usage() {
		if u.Policy != cuckoopolicy.PolicyName && u.Policy != "" {
			t.Errorf("L0 row %+v: want this package's filters", u)
		}
	}
	// The two new tables' bloom blocks rule out over a third of the 500
	// absent keys each, even at 1 bit per key (expected 370 or more of
	// 1,000 probes; 200 lies over 10 standard deviations below).
	if hits := m.AbsentGets(500) - before; hits < 200 {
		t.Errorf("plan %v: the new tables' filters ruled out %d of 1,000 absent probes", p, hits)
	}
	m.CheckKeys()
	lp.Stop()
	m.Close()
}

// TestLivePlanClosed checks that a stopped plan fits no more, and keeps the
// plan the levels write.
func TestLivePlanClosed(t *testing.T) {
	lp := plan.NewLive(plan.Config{MaxFilterBytes: 1 << 20, UseL6: true}, time.Hour)
	m := dbtest.New(t)
	m.Open(lp.Apply)
	m.FlushTables(1, 1_000)
	if _, err := lp.Start(m.DB); err != nil {
		t.Fatal(err)
	}
	before := lp.Plan()
	lp.Stop()
	m.Close()
	if err := lp.Refit(); !errors.Is(err, plan.ErrNotStarted) {
		t.Errorf("Refit after Stop: %v, want ErrNotStarted", err)
	}
	if lp.Plan() != before || lp.Plan()[6] == nil {
		t.Errorf("after a failed fit the levels write %v, before %v; want unchanged, L6 filtered (UseL6)", lp.Plan(), before)
	}
}

// TestLivePlanZeroBudget: a Fixed budget of 0 writes no filters anywhere.
func TestLivePlanZeroBudget(t *testing.T) {
	lp := plan.NewLive(plan.Config{Fixed: true}, 0)
	opts := &pebble.Options{}
	lp.Apply(opts)
	for l, lo := range opts.Levels {
		if lo.FilterPolicy != pebble.NoFilterPolicy {
			t.Errorf("L%d: %v, want NoFilterPolicy", l, lo.FilterPolicy)
		}
	}
	if opts.EventListener == nil || opts.EventListener.FlushEnd == nil {
		t.Errorf("Apply set no event listener")
	}
}

// TestMismatches flags every row whose tables do not carry the family the
// options write on their level, with its share of the level's entries: a
// rollback from cuckoo to bloom is done when none is left.
func TestMismatches(t *testing.T) {
	m := dbtest.New(t)
	m.Open(dbtest.Applied(cuckoopolicy.FilterPolicy(10)))
	m.FlushTables(3, 1_000)
	m.Close()
	opts := &pebble.Options{}
	cuckoopolicy.Apply(opts, bloom.FilterPolicy(10))
	m.Open(dbtest.Applied(bloom.FilterPolicy(10)))
	m.FlushTables(1, 1_000)
	rows, err := cuckoopolicy.FilterUsage(m.DB)
	if err != nil {
		t.Fatal(err)
	}
	mm := cuckoopolicy.Mismatches(rows, opts)
	if len(mm) != 1 || mm[0].Policy != cuckoopolicy.PolicyName || mm[0].Want != bloom.FilterPolicy(10).Name() || mm[0].Level != 0 || mm[0].Share < 0.74 || mm[0].Share > 0.76 {
		t.Fatalf("mismatches %+v: want L0's cuckoo row, three quarters of its entries, wanting bloom", mm)
	}
	none := &pebble.Options{}
	plan.Apply(none, plan.Plan{})
	if mm := cuckoopolicy.Mismatches(rows, none); len(mm) != 2 {
		t.Errorf("options without filters: mismatches %+v, want both L0 rows", mm)
	}
	if mm := cuckoopolicy.Mismatches(rows, nil); len(mm) != 2 {
		t.Errorf("nil options: mismatches %+v, want both L0 rows", mm)
	}
	m.Close()
}
