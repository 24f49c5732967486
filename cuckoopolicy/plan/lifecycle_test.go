package plan_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/dbtest"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// TestLiveRefitsOnWrites: with an interval of an hour, writes of a tenth of
// the database since the last fit refit it without waiting, at every such
// tenth, the first one right after a fit included.
func TestLiveRefitsOnWrites(t *testing.T) {
	lp := plan.NewLive(plan.Config{MaxFilterBytes: 64 << 10}, time.Hour)
	m := dbtest.New(t)
	m.Open(lp.Apply)
	m.FlushTables(4, 2_000)
	db, err := lp.Start(m.DB)
	if err != nil {
		t.Fatal(err)
	}
	// One table of a twentieth of the database, right after the fit: no
	// tenth yet, and the interval holds it back.
	m.FlushTables(1, 400)
	time.Sleep(50 * time.Millisecond)
	fits := lp.Status().Refits
	if fits != 1 {
		t.Fatalf("%d fits after a twentieth of the database was written, want 1 (the interval is an hour)", fits)
	}
	for i := range 5 {
		// Each round writes over a tenth of what the database holds.
		m.FlushTables(1, m.Keys/8+1)
		waitFor(t, func() bool { return lp.Status().Refits > fits }, fmt.Sprintf("a refit after round %d's writes of a tenth of the database", i))
		fits = lp.Status().Refits
	}
	m.CheckKeys()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLiveConcurrentRefit runs refits from eight goroutines beside flushes:
// the fits take turns, the newest one's plan is what the levels write, and
// the count of bytes written since the last fit never underflows (it took
// the next request to an immediate refit, and so every later one).
func TestLiveConcurrentRefit(t *testing.T) {
	lp := plan.NewLive(plan.Config{MaxFilterBytes: 64 << 10}, time.Hour)
	m := dbtest.New(t)
	m.Open(lp.Apply)
	m.FlushTables(2, 2_000)
	db, err := lp.Start(m.DB)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				if err := lp.Refit(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	m.FlushTables(3, 1_000)
	wg.Wait()
	if err := lp.Refit(); err != nil {
		t.Fatal(err)
	}
	if st := lp.Status(); st.Plan != lp.Plan() || st.FitError != nil {
		t.Errorf("the levels write %v, the last fit chose %v (error %v)", lp.Plan(), st.Plan, st.FitError)
	}
	// A twentieth of the database right after the last fit asks for no
	// refit: with an underflowed count every request refits at once.
	fits := lp.Status().Refits
	m.FlushTables(1, m.Keys/20+1)
	time.Sleep(50 * time.Millisecond)
	if got := lp.Status().Refits; got != fits {
		t.Errorf("%d fits after a twentieth of the database, want %d: the written count is off", got, fits)
	}
	m.CheckKeys()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLiveClosedWithoutStop closes the database itself, with no fit in
// flight and no Stop: the next fit is ErrClosed, the plan stops, and Start
// on a new database runs it again.
func TestLiveClosedWithoutStop(t *testing.T) {
	lp := plan.NewLive(plan.Config{MaxFilterBytes: 64 << 10}, time.Hour)
	if st := lp.Status(); st.Plan[0] == nil || st.Plan[6] != nil {
		t.Errorf("before the first fit Status says %v; the levels write %v", st.Plan, lp.Plan())
	}
	m := dbtest.New(t)
	m.Open(lp.Apply)
	m.FlushTables(1, 1_000)
	if _, err := lp.Start(m.DB); err != nil {
		t.Fatal(err)
	}
	m.Close() // the *pebble.DB's own Close, no Stop
	if err := lp.Refit(); !errors.Is(err, plan.ErrClosed) {
		t.Fatalf("Refit after the database closed: %v, want ErrClosed", err)
	}
	if err := lp.Refit(); !errors.Is(err, plan.ErrNotStarted) {
		t.Errorf("Refit after a fit found the database closed: %v, want ErrNotStarted (the plan stopped)", err)
	}
	m.Open(lp.Apply)
	db, err := lp.Start(m.DB)
	if err != nil {
		t.Fatalf("Start after the plan stopped: %v", err)
	}
	m.CheckKeys()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLiveLifecycle runs random sequences of Start, Stop, Refit, Status,
// writes, flushes, compactions and closes (through Start's DB, or Stop and
// Pebble's Close), with a second goroutine calling Refit and Status all
// along: no panic, no goroutine left behind, every key read back after each
// reopen. Short: 50 sequences; default 100; PEBBLE_CUCKOO_LONG=1: 1,000.
func TestLiveLifecycle(t *testing.T) {
	before := runtime.NumGoroutine()
	seed := pebbletest.Seed(t)
	n := pebbletest.Scale(50, 100, 1_000)
	for i := range n {
		lifecycle(t, rand.New(rand.NewPCG(seed, uint64(i))), i)
	}
	waitFor(t, func() bool { return runtime.NumGoroutine() <= before }, fmt.Sprintf("goroutines back to %d (now %d)", before, runtime.NumGoroutine()))
}

// lifecycle is one random sequence on a new database.
func lifecycle(t *testing.T, r *rand.Rand, seq int) {
	fs := vfs.NewMem()
	lp := plan.NewLive(plan.Config{MaxFilterBytes: uint64(r.IntN(32<<10) + 1)}, time.Duration(r.IntN(3))*time.Millisecond)
	keys := 0
	open := func() *pebble.DB {
		opts := &pebble.Options{FS: fs, Logger: dbtest.QuietLogger{}, L0CompactionThreshold: 2}
		lp.Apply(opts)
		db, err := pebble.Open("db", opts)
		if err != nil {
			t.Fatalf("sequence %d: %v", seq, err)
		}
		for i := range keys {
			v, closer, err := db.Get(dbtest.Key(i))
			if err != nil || string(v) != "v" {
				t.Fatalf("sequence %d: key %d of %d after reopen: %q, %v", seq, i, keys, v, err)
			}
			closer.Close()
		}
		return db
	}
	db := open()
	done := make(chan struct{})
	var other sync.WaitGroup
	other.Add(1)
	go func() {
		defer other.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := lp.Refit(); err != nil && !errors.Is(err, plan.ErrNotStarted) {
				t.Errorf("sequence %d: concurrent Refit: %v", seq, err)
			}
			_ = lp.Status()
			time.Sleep(time.Millisecond)
		}
	}()
	defer func() {
		close(done)
		other.Wait()
	}()
	var live *plan.DB
	for range 12 {
		switch op := r.IntN(8); {
		case op == 0 && live == nil:
			live, _ = lp.Start(db) // a fit error is in the status
		case op == 1:
			lp.Stop()
			live = nil
		case op == 2:
			_ = lp.Refit()
		case op == 3:
			_ = lp.Status()
		case op == 4 || op == 5:
			b := db.NewBatch()
			count := 200 + r.IntN(800)
			for j := range count {
				_ = b.Set(dbtest.Key(keys+j), []byte("v"), nil)
			}
			if err := b.Commit(pebble.Sync); err != nil {
				t.Fatalf("sequence %d: %v", seq, err)
			}
			_ = b.Close()
			keys += count
			if err := db.Flush(); err != nil {
				t.Fatalf("sequence %d: %v", seq, err)
			}
		case op == 6:
			if err := db.Compact(context.Background(), []byte("key"), []byte("key~"), r.IntN(2) == 0); err != nil {
				t.Fatalf("sequence %d: %v", seq, err)
			}
		default:
			// Close: through the plan's DB while it runs (refits may be in
			// flight from the flushes' events), or Stop and Pebble's Close.
			if live != nil {
				if err := live.Close(); err != nil {
					t.Fatalf("sequence %d: %v", seq, err)
				}
			} else {
				lp.Stop()
				if err := db.Close(); err != nil {
					t.Fatalf("sequence %d: %v", seq, err)
				}
			}
			live = nil
			db = open()
		}
	}
	if live != nil {
		if err := live.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		lp.Stop()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// waitFor polls cond for up to 30 seconds.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
