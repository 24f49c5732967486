package whatif

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/cockroachkvs"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// TestAnalyzeCockroach analyzes a database of CockroachDB MVCC keys: it
// needs the cockroach comparer, its filter keys are the roach keys, and its
// probes are bare prefixes that Pebble's own prefix reads count alike.
func TestAnalyzeCockroach(t *testing.T) {
	dir := t.TempDir()
	want, wantPrefixes := buildCockroachDB(t, dir)
	before := pebbletest.MustSnapshot(t, dir)

	if _, err := Analyze(Config{Dir: dir}); err == nil || !strings.Contains(err.Error(), "comparer") {
		t.Errorf("default comparer on a cockroach database: %v, want a comparer mismatch", err)
	}
	rep, err := Analyze(Config{Dir: dir, Comparer: "cockroach", Probes: 3000})
	if err != nil {
		t.Fatal(err)
	}
	pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, dir))
	checkCockroachLevels(t, rep, want, wantPrefixes)
	checkCockroachPlan(t, rep)

	if rep.probes < 2000 {
		t.Fatalf("%d absent probes from 3000 sources", rep.probes)
	}
	for _, p := range rep.probeKeys {
		if cockroachkvs.Comparer.Split(p) != len(p) {
			t.Fatalf("probe %q is not a bare prefix", p)
		}
	}
	checks, pos := pebbleFilterCounts(t, dir, true, rep.probeKeys, true)
	wantChecks := sumLevels(rep, numLevels-1, func(L *levelRow) int { return L.Checks })
	wantPos := sumLevels(rep, numLevels-1, func(L *levelRow) int { return L.NowFalsePos })
	if checks != wantChecks || pos != wantPos {
		t.Errorf("SeekPrefixGE with UseL6Filters: Pebble counted %d filter checks, %d positive; whatif %d, %d",
			checks, pos, wantChecks, wantPos)
	}
}

// buildCockroachDB writes a database of roach keys with several versions each
// in dir, the first of four flushes compacted. It returns its tables and how
// many roach keys the flushes wrote, counting a key once per flush.
func buildCockroachDB(t *testing.T, dir string) (want expected, wantPrefixes int) {
	t.Helper()
	db, err := pebble.Open(dir, dbOptions(true))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var roaches [][]byte
	for range 3000 {
		roaches = append(roaches, []byte(fmt.Sprintf("/Table/%d/1/%x", 100+rng.IntN(8), rng.Uint64())))
	}
	// Each round writes 1 to 4 versions of a third of the keys: a table
	// holds one filter key per roach key, however many versions.
	for round := range 4 {
		for i, r := range roaches {
			if i%3 != round%3 {
				continue
			}
			wantPrefixes++
			for v := range 1 + rng.IntN(4) {
				k := cockroachkvs.EncodeMVCCKey(nil, r, uint64(1000*(round+1)+v), 0)
				if err := db.Set(k, []byte("v"), pebble.NoSync); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			if err := db.Compact(context.Background(), cockroachkvs.EncodeMVCCKey(nil, []byte("/"), 0, 0),
				cockroachkvs.EncodeMVCCKey(nil, []byte("0"), 0, 0), true); err != nil {
				t.Fatal(err)
			}
		}
	}
	want = sstables(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return want, wantPrefixes
}

// checkCockroachLevels checks rep's levels against the database's tables:
// versions fold into one filter key, and bloom(10) matches the current
// filters.
func checkCockroachLevels(t *testing.T, rep *Report, want expected, wantPrefixes int) {
	t.Helper()
	var keys uint64
	for l := range numLevels {
		L := &rep.levels[l]
		keys += L.Keys
		if L.Tables != want.tables[l] || L.Entries != want.entries[l] {
			t.Errorf("L%d: %d tables, %d entries; db.SSTables: %d, %d", l, L.Tables, L.Entries, want.tables[l], want.entries[l])
		}
		if L.Keys >= L.Entries && L.Entries > 0 {
			t.Errorf("L%d: %d filter keys for %d entries: versions not folded into prefixes", l, L.Keys, L.Entries)
		}
		b10 := candidateIndex(t, rep, "bloom(10)")
		if c := L.Candidates[b10]; uint64(c.Bytes) != L.NowBytes || c.Hits != L.NowFalsePos {
			t.Errorf("L%d: bloom(10) candidate %+v; current filters %d bytes, %d positive", l, c, L.NowBytes, L.NowFalsePos)
		}
	}
	// A table boundary may fall between versions of one key, which then
	// has a filter key in both tables.
	if tables := sumLevels(rep, numLevels-1, func(L *levelRow) int { return L.Tables }); keys < uint64(wantPrefixes) || keys > uint64(wantPrefixes)+uint64(tables) {
		t.Errorf("%d filter keys in %d tables, want %d (roach keys per flush) plus at most one per table", keys, tables, wantPrefixes)
	}
}

// checkCockroachPlan checks the plan section of the report on a cockroach
// database: a plan that ends with the verdict (plan.Fit samples with keys the
// comparer accepts).
func checkCockroachPlan(t *testing.T, rep *Report) {
	t.Helper()
	var out strings.Builder
	if err := rep.Write(&out); err != nil {
		t.Fatal(err)
	}
	if rep.plan == nil {
		t.Fatalf("no plan section:\n%s", out.String())
	}
	checkVerdict(t, out.String(), rep)
}
