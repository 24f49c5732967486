package lookup

import (
	"fmt"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// TestAdaptiveFollowsShare: the zero Adaptive starts on Get (no L6 filter
// asked), moves to the filtered path once most keys are absent, and back
// once most are present; Threshold 1 never leaves Get and -1 never takes it.
func TestAdaptiveFollowsShare(t *testing.T) {
	t.Parallel()
	const n = 1000
	db := openL6(t, configs[0], vfs.NewMem(), n, nil)
	defer closeDB(t, db)
	absent := func(i int) []byte { return fmt.Appendf(plainKeys{}.key(i%n), "x") }
	// ask asks count keys and returns the L6 filters the last of them asked.
	ask := func(a *Adaptive, count, last int, key func(int) []byte) int64 {
		var before int64
		for i := range count {
			if i == count-last {
				before = filterProbes(db)
			}
			if _, err := a.Has(db, key(i)); err != nil {
				t.Fatal(err)
			}
		}
		return filterProbes(db) - before
	}
	var a Adaptive
	if p := ask(&a, 15, 15, absent); p != 0 || a.AbsentShare() > DefaultThreshold {
		t.Errorf("first 15 absent keys: %d filter probes, share %.2f; want Get (no probe)", p, a.AbsentShare())
	}
	if p := ask(&a, 200, 50, absent); p != 50 || a.AbsentShare() < 0.9 {
		t.Errorf("200 more absent keys: the last 50 asked %d filters, share %.2f; want the filtered path", p, a.AbsentShare())
	}
	if p := ask(&a, 200, 50, plainKeys{}.key); p != 0 || a.AbsentShare() > 0.1 {
		t.Errorf("200 present keys: the last 50 asked %d filters, share %.2f; want Get", p, a.AbsentShare())
	}
	never, always := Adaptive{Threshold: 1}, Adaptive{Threshold: -1}
	if p := ask(&never, 200, 200, absent); p != 0 {
		t.Errorf("Threshold 1: %d filter probes for absent keys, want none", p)
	}
	if p := ask(&always, 10, 10, plainKeys{}.key); p != 10 {
		t.Errorf("Threshold -1: %d filter probes for 10 present keys, want 10", p)
	}
}

// TestAdaptiveShareBounds: the estimate stays within [0, 1] and near the
// share it is fed, whatever the sequence.
func TestAdaptiveShareBounds(t *testing.T) {
	t.Parallel()
	rng := pebbletest.Rand(pebbletest.FixedSeed(t, 1)) // statistical: fresh with PEBBLE_CUCKOO_LONG=1
	var a Adaptive
	for range 1000 {
		a.record(pebble.ErrNotFound)
	}
	if s := a.AbsentShare(); s > 1 || s < 0.99 {
		t.Fatalf("share after only absent keys: %v", s)
	}
	for range 1000 {
		a.record(nil)
	}
	if s := a.AbsentShare(); s < 0 || s > 0.01 {
		t.Fatalf("share after only present keys: %v", s)
	}
	a.record(fmt.Errorf("some failure"))
	for range 20000 {
		if rng.IntN(10) < 3 {
			a.record(pebble.ErrNotFound)
		} else {
			a.record(nil)
		}
	}
	// The estimate's standard deviation is about 0.04 here: 5 of them either side.
	if s := a.AbsentShare(); s < 0.1 || s > 0.5 {
		t.Fatalf("share after 30%% absent keys: %v", s)
	}
}

// TestConcurrent: goroutines ask keys through one Adaptive, Get and Has
// while another writes, flushes and compacts; keys written once at the
// start are always found with their value, and keys never written never.
// Run it under -race.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	const n = 2000
	db := openL6(t, configs[0], vfs.NewMem(), n, nil)
	defer closeDB(t, db)
	var a Adaptive
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		churn(t, db, stop)
	}()
	rounds := pebbletest.Scale(300, 1500, 20000)
	var askers sync.WaitGroup
	for g := range 4 {
		askers.Add(1)
		go func() {
			defer askers.Done()
			for i := range rounds {
				k := plainKeys{}.key((i*7 + g*13) % n)
				if err := askStable(&a, db, k, fmt.Sprintf("v%d", (i*7+g*13)%n)); err != nil {
					t.Error(err)
					return
				}
				if err := askStable(&a, db, fmt.Appendf(k, "absent"), ""); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	askers.Wait()
	close(stop)
	wg.Wait()
}

// churn writes keys apart from the stable ones, and flushes and compacts,
// until stop closes.
func churn(t *testing.T, db *pebble.DB, stop chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if err := db.Set(fmt.Appendf(nil, "k%06d/churn%d", i%3000, i), []byte("c"), pebble.NoSync); err != nil {
			t.Error(err)
			return
		}
		var err error
		switch i % 1000 {
		case 499:
			err = db.Flush()
		case 999:
			err = db.Compact(t.Context(), []byte("k"), []byte("l"), false)
		}
		if err != nil {
			t.Error(err)
			return
		}
	}
}

// askStable asks k through every path: found with value want, or absent
// if want is "".
func askStable(a *Adaptive, db *pebble.DB, k []byte, want string) error {
	for _, g := range []getter{{"lookup", Get, Has}, {"Adaptive", a.Get, a.Has}} {
		v, closer, err := g.get(db, k)
		switch {
		case want == "" && err != pebble.ErrNotFound:
			return fmt.Errorf("%s.Get(%q) = %q, %v; want not found", g.name, k, v, err)
		case want != "" && (err != nil || string(v) != want):
			return fmt.Errorf("%s.Get(%q) = %q, %v; want %q", g.name, k, v, err, want)
		}
		if err == nil {
			if err := closer.Close(); err != nil {
				return err
			}
		}
		if found, err := g.has(db, k); err != nil || found != (want != "") {
			return fmt.Errorf("%s.Has(%q) = %v, %v", g.name, k, found, err)
		}
	}
	return nil
}
