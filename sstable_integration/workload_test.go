package sstableintegration

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// The random workload's key spaces: "k" keys take every kind of write, "s"
// keys alternate between one Set and one SingleDelete.
const workloadKeys, workloadSingles = 3000, 500

// workload draws the random operations of TestDBWorkload and keeps the
// oracle of what they leave.
type workload struct {
	rng       *rand.Rand
	want      oracle
	singleSet map[int]bool // "s" keys currently set once
}

// write applies round r's 300 random operations to w: sets, deletes,
// merges, range deletions and single deletes.
func (wl *workload) write(t *testing.T, w pebble.Writer, r int) {
	t.Helper()
	const nk, ns = workloadKeys, workloadSingles
	rng, want, singleSet := wl.rng, wl.want, wl.singleSet
	for op := 0; op < 300; op++ {
		i := rng.IntN(nk)
		k := key("k", i)
		v := fmt.Sprintf("r%d.%d", r, op)
		var err error
		switch x := rng.IntN(100); {
		case x < 45:
			err = w.Set(k, []byte(v), nil)
			want[string(k)] = v
		case x < 60:
			err = w.Delete(k, nil)
			delete(want, string(k))
		case x < 75:
			err = w.Merge(k, []byte(v), nil)
			want[string(k)] += v
		case x < 78:
			j := min(nk, i+1+rng.IntN(40))
			err = w.DeleteRange(k, key("k", j), nil)
			for d := i; d < j; d++ {
				delete(want, string(key("k", d)))
			}
		default:
			// Single deletes only ever meet one Set.
			s := rng.IntN(ns)
			sk := key("s", s)
			if singleSet[s] {
				err = w.SingleDelete(sk, nil)
				delete(want, string(sk))
			} else {
				err = w.Set(sk, []byte(v), nil)
				want[string(sk)] = v
			}
			singleSet[s] = !singleSet[s]
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// snapshotCheck is a snapshot with the oracle as of its creation.
type snapshotCheck struct {
	snap *pebble.Snapshot
	want oracle
}

// TestDBWorkload runs a random workload of sets, deletes, single deletes,
// merges, range deletions, batches, snapshots, flushes, compactions and
// reopens (with a different budget or configuration of the policy each time,
// since any instance reads any block) against a map oracle, and checks the
// database and every open snapshot against it at every checkpoint.
func TestDBWorkload(t *testing.T) {
	t.Parallel()
	seed := pebbletest.Seed(t)
	rounds := pebbletest.Scale(12, 30, 150)
	for _, f := range dbFormats {
		t.Run(f.name, func(t *testing.T) {
			rng := pebbletest.Rand(seed)
			wl := &workload{rng: rng, want: oracle{}, singleSet: map[int]bool{}}
			wd := newWorkloadDB(t, f, wl)
			for r := 0; r < rounds; r++ {
				b := wd.db.NewBatch()
				w := pebble.Writer(wd.db)
				if rng.IntN(2) == 0 {
					w = b
				}
				wl.write(t, w, r)
				if w == b {
					if err := b.Commit(pebble.NoSync); err != nil {
						t.Fatal(err)
					}
				} else {
					_ = b.Close()
				}
				wd.maintain(r)
				if r%5 == 4 {
					wd.check(fmt.Sprintf("round %d", r))
				}
			}
			if err := wd.db.Flush(); err != nil {
				t.Fatal(err)
			}
			wd.check("end")
			wd.closeSnaps()
			if err := wd.db.Compact(context.Background(), []byte("a"), []byte("z"), true); err != nil {
				t.Fatal(err)
			}
			wd.check("after a full compaction")
			requireAllCuckoo(t, wd.db, wd.fs, "db")
			wd.hits += filterMetrics(wd.db).Hits
			closeDB(t, wd.db)
			t.Logf("%d rounds, %d reopens, %d keys live, filters skipped %d tables", rounds, wd.reopens, len(wl.want), wd.hits)
			if wd.hits == 0 {
				t.Fatalf("the filters never skipped a table")
			}
		})
	}
}

// workloadDB is TestDBWorkload's database: reopened with the next policy
// of the list each time, with up to three open snapshots and the filter
// hits of the databases closed so far.
type workloadDB struct {
	t        *testing.T
	f        dbFormat
	fs       vfs.FS
	wl       *workload
	db       *pebble.DB
	reopens  int
	snaps    []snapshotCheck
	hits     int64
	universe [][]byte // every key the workload may write
}

// workloadPolicies are the policies the database is reopened with in turn:
// any instance of the family reads any block.
var workloadPolicies = []pebble.FilterPolicy{
	cuckoopolicy.FilterPolicy(10),
	cuckoopolicy.FilterPolicy(16),
	cuckoopolicy.Policy{FingerprintBits: 9, SemiSort: false},
	cuckoopolicy.FilterPolicy(7),
	cuckoopolicy.Policy{FingerprintBits: 24, SemiSort: true},
}

func newWorkloadDB(t *testing.T, f dbFormat, wl *workload) *workloadDB {
	wd := &workloadDB{t: t, f: f, fs: vfs.NewMem(), wl: wl}
	for i := 0; i < workloadKeys; i++ {
		wd.universe = append(wd.universe, key("k", i))
	}
	for i := 0; i < workloadSingles; i++ {
		wd.universe = append(wd.universe, key("s", i))
	}
	wd.open()
	return wd
}

func (wd *workloadDB) open() {
	o := dbOptions(wd.fs, wd.f, workloadPolicies[wd.reopens%len(workloadPolicies)])
	o.MemTableSize = 256 << 10
	o.TargetFileSizes[0] = 64 << 10
	wd.db = openDB(wd.t, "db", o)
}

// check checks the database and every open snapshot against their oracles.
func (wd *workloadDB) check(when string) {
	checkReader(wd.t, when, wd.db, bytes.Compare, wd.wl.want, wd.universe)
	for i, s := range wd.snaps {
		checkReader(wd.t, fmt.Sprintf("%s, snapshot %d", when, i), s.snap, bytes.Compare, s.want, wd.universe)
	}
}

func (wd *workloadDB) closeSnaps() {
	for _, s := range wd.snaps {
		if err := s.snap.Close(); err != nil {
			wd.t.Fatal(err)
		}
	}
	wd.snaps = nil
}

// maintain ends round r with, at random, a flush, a compaction of a random
// range, a snapshot, a check and a reopen, or nothing.
func (wd *workloadDB) maintain(r int) {
	t, rng := wd.t, wd.wl.rng
	switch x := rng.IntN(10); {
	case x < 3:
		if err := wd.db.Flush(); err != nil {
			t.Fatal(err)
		}
	case x < 5:
		lo := rng.IntN(workloadKeys)
		if err := wd.db.Compact(context.Background(), key("k", lo), key("k", lo+1+rng.IntN(workloadKeys)), rng.IntN(2) == 0); err != nil {
			t.Fatal(err)
		}
	case x < 7:
		if len(wd.snaps) < 3 {
			wd.snaps = append(wd.snaps, snapshotCheck{wd.db.NewSnapshot(), wd.wl.want.clone()})
		}
	case x < 8:
		wd.check(fmt.Sprintf("round %d before reopen", r))
		wd.closeSnaps()
		wd.hits += filterMetrics(wd.db).Hits
		closeDB(t, wd.db)
		wd.reopens++
		wd.open()
	}
}
