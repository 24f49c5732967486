package sstableintegration

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/cockroachkvs"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// crdbOptions are dbOptions with CockroachDB's key encoding: Comparer.Split
// cuts the MVCC timestamp off, so filters hold key prefixes.
func crdbOptions(fs vfs.FS, f dbFormat, policy pebble.FilterPolicy) *pebble.Options {
	o := dbOptions(fs, f, policy)
	o.Comparer = &cockroachkvs.Comparer
	o.KeySchema = cockroachkvs.KeySchema.Name
	o.KeySchemas = sstable.MakeKeySchemas(&cockroachkvs.KeySchema)
	o.BlockPropertyCollectors = cockroachkvs.BlockPropertyCollectors
	return o
}

// mvccVersion is one version of a CockroachDB key.
type mvccVersion struct {
	wall    uint64
	logical uint32
	value   string
}

func (v mvccVersion) compare(w mvccVersion) int {
	return cmp.Or(cmp.Compare(v.wall, w.wall), cmp.Compare(v.logical, w.logical))
}

// mvccData is an oracle of CockroachDB keys: each roach key (without the
// sentinel) with its versions, newest first.
type mvccData map[string][]mvccVersion

func (d mvccData) oracle() oracle {
	o := oracle{}
	for roach, versions := range d {
		for _, v := range versions {
			o[string(cockroachkvs.EncodeMVCCKey(nil, []byte(roach), v.wall, v.logical))] = v.value
		}
	}
	return o
}

// at returns the newest version at or below the timestamp, if any.
func (d mvccData) at(roach string, wall uint64, logical uint32) (mvccVersion, bool) {
	ts := mvccVersion{wall: wall, logical: logical}
	for _, v := range d[roach] {
		if v.compare(ts) <= 0 {
			return v, true
		}
	}
	return mvccVersion{}, false
}

func roachKey(rng *rand.Rand) string {
	return fmt.Sprintf("/Table/%d/1/%x", 100+rng.IntN(8), rng.Uint64())
}

// addVersions gives roach one to six new versions, newer than any it has.
func (d mvccData) addVersions(rng *rand.Rand, roach string, tag string) {
	wall := uint64(1_000_000)
	if vs := d[roach]; len(vs) > 0 {
		wall = vs[0].wall
	}
	for i := 0; i < 1+rng.IntN(6); i++ {
		wall += 1 + uint64(rng.IntN(1000))
		v := mvccVersion{wall: wall, logical: uint32(rng.IntN(3)), value: fmt.Sprintf("%s@%d.%s", roach, wall, tag)}
		d[roach] = append([]mvccVersion{v}, d[roach]...)
	}
}

// write sets every version of the given roach keys.
func (d mvccData) write(t testing.TB, db *pebble.DB, roaches []string) {
	t.Helper()
	b := db.NewBatch()
	for _, roach := range roaches {
		for _, v := range d[roach] {
			k := cockroachkvs.EncodeMVCCKey(nil, []byte(roach), v.wall, v.logical)
			if err := b.Set(k, []byte(v.value), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		t.Fatal(err)
	}
}

// checkMVCC reads every roach key through prefixes: SeekPrefixGE on the bare
// key finds the newest version, SeekPrefixGE at a random timestamp finds the
// newest version at or below it (or nothing), and db.Get finds every exact
// version.
func checkMVCC(t *testing.T, what string, rng *rand.Rand, db *pebble.DB, d mvccData, useL6 bool) {
	t.Helper()
	it, err := db.NewIter(&pebble.IterOptions{UseL6Filters: useL6})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	f := &pebbletest.Failures{T: t, What: what}
	for roach, versions := range d {
		bare := cockroachkvs.EncodeMVCCKey(nil, []byte(roach), 0, 0)
		newest := cockroachkvs.EncodeMVCCKey(nil, []byte(roach), versions[0].wall, versions[0].logical)
		if !it.SeekPrefixGE(bare) || !bytes.Equal(it.Key(), newest) || string(it.Value()) != versions[0].value {
			f.Add("SeekPrefixGE(%s): want %s", cockroachkvs.FormatKey(bare), cockroachkvs.FormatKey(newest))
		}
		oldest := versions[len(versions)-1].wall
		wall, logical := oldest-10+uint64(rng.IntN(int(versions[0].wall-oldest)+20)), uint32(rng.IntN(3))
		seek := cockroachkvs.EncodeMVCCKey(nil, []byte(roach), wall, logical)
		v, ok := d.at(roach, wall, logical)
		valid := it.SeekPrefixGE(seek)
		switch {
		case !ok && valid:
			f.Add("SeekPrefixGE(%s) = %s, want nothing", cockroachkvs.FormatKey(seek), cockroachkvs.FormatKey(it.Key()))
		case ok && (!valid || string(it.Value()) != v.value):
			f.Add("SeekPrefixGE(%s): lost version %d.%d", cockroachkvs.FormatKey(seek), v.wall, v.logical)
		}
		for _, v := range versions {
			k := cockroachkvs.EncodeMVCCKey(nil, []byte(roach), v.wall, v.logical)
			got, closer, err := db.Get(k)
			if err != nil {
				f.Add("Get(%s): %v", cockroachkvs.FormatKey(k), err)
				continue
			}
			if string(got) != v.value {
				f.Add("Get(%s) = %q, want %q", cockroachkvs.FormatKey(k), got, v.value)
			}
			_ = closer.Close()
		}
	}
	if err := it.Error(); err != nil {
		f.Add("iterator: %v", err)
	}
	f.Check()
}

// absentPrefixProbes seeks absent roach keys (bare and at a timestamp) with
// UseL6Filters and returns the filter metrics of the bare seeks.
func absentPrefixProbes(t *testing.T, db *pebble.DB, absent []string) sstable.FilterMetrics {
	t.Helper()
	it, err := db.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	before := filterMetrics(db)
	for _, roach := range absent {
		if k := cockroachkvs.EncodeMVCCKey(nil, []byte(roach), 0, 0); it.SeekPrefixGE(k) {
			t.Fatalf("SeekPrefixGE(%s) found %s", cockroachkvs.FormatKey(k), cockroachkvs.FormatKey(it.Key()))
		}
	}
	after := filterMetrics(db)
	for _, roach := range absent {
		if k := cockroachkvs.EncodeMVCCKey(nil, []byte(roach), 1<<40, 1); it.SeekPrefixGE(k) {
			t.Fatalf("SeekPrefixGE(%s) found %s", cockroachkvs.FormatKey(k), cockroachkvs.FormatKey(it.Key()))
		}
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return sstable.FilterMetrics{Hits: after.Hits - before.Hits, Misses: after.Misses - before.Misses}
}

// TestCockroachL6 writes CockroachDB keys with several MVCC versions each,
// compacts them into L6, and probes absent prefixes through iterators with
// UseL6Filters: with FilterPolicy(12), at least 99.5% of them must be skipped
// by the filter. Every version stays readable through prefixes and Get, and
// after more versions are flushed into L0 on top.
func TestCockroachL6(t *testing.T) {
	t.Parallel()
	seed := pebbletest.FixedSeed(t, 1) // statistical: fresh with PEBBLE_CUCKOO_LONG=1
	n, m := pebbletest.Scale(3000, 10000, 50000), pebbletest.Scale(8000, 20000, 200000)
	const target = 0.995
	for _, f := range dbFormats {
		t.Run(f.name, func(t *testing.T) {
			rng := pebbletest.Rand(seed)
			d := mvccData{}
			var roaches []string
			for len(roaches) < n {
				r := roachKey(rng)
				if _, ok := d[r]; !ok {
					d.addVersions(rng, r, "a")
					roaches = append(roaches, r)
				}
			}
			var absent []string
			for len(absent) < m {
				if r := roachKey(rng); d[r] == nil {
					absent = append(absent, r)
				}
			}
			slices.Sort(roaches)

			skipped := map[string]float64{}
			for _, policy := range []pebble.FilterPolicy{bloom.FilterPolicy(12), cuckoopolicy.FilterPolicy(12)} {
				fs := vfs.NewMem()
				db := openDB(t, "db", crdbOptions(fs, f, policy))
				d.write(t, db, roaches)
				if err := db.Compact(context.Background(), cockroachkvs.EncodeMVCCKey(nil, []byte("/"), 0, 0),
					cockroachkvs.EncodeMVCCKey(nil, []byte("0"), 0, 0), true); err != nil {
					t.Fatal(err)
				}
				if c := levelCounts(db); slices.Max(c[:6]) != 0 || c[6] == 0 {
					t.Fatalf("tables per level %v, want all in L6", c)
				}
				fm := absentPrefixProbes(t, db, absent)
				probes := fm.Hits + fm.Misses
				if probes < int64(m)*9/10 {
					t.Fatalf("%s: only %d of %d absent prefixes reached an L6 filter", policy.Name(), probes, m)
				}
				skipped[policy.Name()] = float64(fm.Hits) / float64(probes)
				t.Logf("%s(12): %d of %d absent prefixes skipped by L6 filters (%.3f%%)",
					policy.Name(), fm.Hits, probes, 100*skipped[policy.Name()])
				if policy.Name() == cuckooName {
					requireAllCuckoo(t, db, fs, "db")
					checkMVCC(t, "L6", rng, db, d, true)
					checkMVCC(t, "L6 without L6 filters", rng, db, d, false)

					// New versions for a third of the keys, flushed into L0
					// above L6: Get probes L0 filters by prefix.
					var newer []string
					for _, r := range roaches {
						if rng.IntN(3) == 0 {
							d.addVersions(rng, r, "b")
							newer = append(newer, r)
						}
					}
					d.write(t, db, newer)
					if err := db.Flush(); err != nil {
						t.Fatal(err)
					}
					checkMVCC(t, "L0 over L6", rng, db, d, true)
					var absentKeys [][]byte
					for _, r := range absent[:1000] {
						absentKeys = append(absentKeys, cockroachkvs.EncodeMVCCKey(nil, []byte(r), 1_000_500, 0))
					}
					checkReader(t, "L0 over L6", db, cockroachkvs.Comparer.Compare, d.oracle(), absentKeys)
				}
				closeDB(t, db)
			}
			if s := skipped[cuckooName]; s < target {
				t.Fatalf("cuckoo(12) skipped %.3f%% of absent prefixes in L6, want >= %.1f%%", 100*s, 100*target)
			}
		})
	}
}
