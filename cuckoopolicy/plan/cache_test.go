package plan_test

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/dbtest"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

func TestCacheBudget(t *testing.T) {
	for _, c := range []struct{ cache, index, want uint64 }{
		{0, 0, 0},
		{100, 0, 50},
		{100, 49, 1},
		{100, 50, 0},
		{100, 80, 0},
		{101, 10, 40},
	} {
		if got := plan.CacheBudget(c.cache, c.index); got != c.want {
			t.Errorf("CacheBudget(%d, %d) = %d, want %d", c.cache, c.index, got, c.want)
		}
	}
}

// blocks returns the filter and index bytes of db's tables, each backing
// file once, read from their properties.
func blocks(t *testing.T, db *pebble.DB) (filters, index uint64) {
	t.Helper()
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for _, tables := range levels {
		for _, tb := range tables {
			if seen[uint64(tb.BackingSSTNum)] {
				continue
			}
			seen[uint64(tb.BackingSSTNum)] = true
			filters += tb.Properties.FilterSize
			index += tb.Properties.IndexSize
		}
	}
	return filters, index
}

// getFilterBytes returns what Pebble's bloom(10) writer builds for db's
// L0-L5 tables (every key the tests write is distinct within a table):
// the default reference's bytes on the levels db.Get reads.
func getFilterBytes(t *testing.T, db *pebble.DB) uint64 {
	t.Helper()
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, tables := range levels[:6] {
		for _, tb := range tables {
			w := bloom.FilterPolicy(10).NewWriter(pebble.TableFilter)
			for i := range tb.Properties.NumEntries {
				w.AddKey(dbtest.Key(int(i)))
			}
			n += uint64(len(w.Finish(nil)))
		}
	}
	return n
}

// compactAll compacts the whole key space, which moves every key to L6.
func compactAll(t *testing.T, db *pebble.DB) {
	t.Helper()
	if err := db.Compact(t.Context(), []byte("a"), []byte("z"), false); err != nil {
		t.Fatal(err)
	}
}

// TestLiveBlockCache grows a database with a live plan given a block
// cache, refitting before each compaction: each fit's budget is
// CacheBudget of the cache and the index bytes the tables' properties
// give, the plan filters L6, and after each compaction the filters and
// indexes of every table are within half the cache, less than the growth
// since the fit. A cache whose half the indexes nearly fill gets no L6
// filter, says so, and the tables the compaction writes to L6 carry none,
// while L0-L5 keep at least bloom(10)'s bytes there (as Pebble's bloom(10)
// writer builds them); every key is read back through Get.
func TestLiveBlockCache(t *testing.T) {
	const perTable = 2_000
	for _, c := range []struct {
		name   string
		cache  func(index uint64) uint64
		wantL6 bool
	}{
		// 12 bits a key of the first database's beside its indexes: the
		// cache binds as the keys grow.
		{"fits", func(index uint64) uint64 { return 2 * (index + 10*perTable*12/8) }, true},
		// Room for a filter of under a bit a key on L6, and less than
		// bloom(10) takes on L0 in the later rounds: the plan is then
		// bloom(10)'s bytes for db.Get.
		{"indexes fill it", func(index uint64) uint64 { return 2 * (index + 2048) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := dbtest.New(t)
			// The cache depends on the indexes, so the first database is
			// written with the default reference and measured.
			m.Open(func(o *pebble.Options) { cuckoopolicy.Apply(o, cuckoopolicy.FilterPolicy(10)) })
			m.FlushTables(10, perTable)
			compactAll(t, m.DB)
			_, index := blocks(t, m.DB)
			m.Close()
			cache := c.cache(index)

			lp := plan.NewLive(plan.Config{BlockCache: cache}, time.Hour)
			m.Open(lp.Apply)
			db, err := lp.Start(m.DB)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := db.Close(); err != nil {
					t.Error(err)
				}
				m.DB = nil
			}()
			for round := range 4 {
				// A tenth more keys, a fit on the tables as they are, and
				// a compaction that rewrites them all under the new plan.
				m.FlushTables(1, m.Keys/10)
				if err := lp.Refit(); err != nil {
					t.Fatal(err)
				}
				st := lp.Status()
				_, index := blocks(t, m.DB)
				want := max(plan.CacheBudget(cache, index), getFilterBytes(t, m.DB))
				if st.Index != index || st.Budget != want || st.Bytes > st.Budget {
					t.Fatalf("round %d: fit at index %d, budget %d, plan %d bytes; the tables' index blocks take %d, want budget %d and the plan within it",
						round, st.Index, st.Budget, st.Bytes, index, want)
				}
				if !c.wantL6 && st.Plan[0] == nil {
					t.Fatalf("round %d: plan %v: the cache leaves L0 no filter; want the reference's bytes for db.Get", round, st.Plan)
				}
				if filtered := st.Plan[6] != nil; filtered != c.wantL6 || st.NoL6 == c.wantL6 {
					t.Fatalf("round %d: plan %v, NoL6 %v; want L6 filtered: %v", round, st.Plan, st.NoL6, c.wantL6)
				}
				compactAll(t, m.DB)
				filters, index := blocks(t, m.DB)
				if c.wantL6 && filters+index > cache/2 {
					t.Errorf("round %d: after the compaction filters %d and indexes %d bytes, %.3f x half the cache",
						round, filters, index, float64(filters+index)/float64(cache/2))
				}
				rows, err := cuckoopolicy.FilterUsage(m.DB)
				if err != nil {
					t.Fatal(err)
				}
				for _, u := range rows {
					if u.Level == 6 && !c.wantL6 && !u.Unfiltered {
						t.Errorf("round %d: L6 tables %+v carry a filter the plan does not write", round, u)
					}
				}
				t.Logf("round %d: %d keys, plan %v, budget %d, filters+indexes %.3f x half the cache", round, m.Keys, st.Plan, st.Budget, float64(filters+index)/float64(cache/2))
			}
			m.CheckKeys()
		})
	}
}
