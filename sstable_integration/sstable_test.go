package sstableintegration

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/cockroachkvs"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// tableFormats are the table formats the sstable tests write: the oldest
// Pebble v2.1.7 supports (row blocks), the newest row format, the first
// columnar one and the newest.
var tableFormats = []sstable.TableFormat{
	sstable.TableFormatMinSupported,
	sstable.TableFormatPebblev4,
	sstable.TableFormatPebblev5,
	sstable.TableFormatMax,
}

// TestPolicyNames pins the on-disk name and the OPTIONS-file parser.
func TestPolicyNames(t *testing.T) {
	t.Parallel()
	mustEqualNames(t,
		cuckoopolicy.FilterPolicy(-3), cuckoopolicy.FilterPolicy(0), cuckoopolicy.FilterPolicy(1),
		cuckoopolicy.FilterPolicy(10), cuckoopolicy.FilterPolicy(16), cuckoopolicy.FilterPolicy(1000),
		cuckoopolicy.Policy{}, cuckoopolicy.Policy{FingerprintBits: 4},
		cuckoopolicy.Policy{FingerprintBits: 32, SemiSort: true, LoadFactor: 0.5},
	)
	for _, tc := range []struct {
		name string
		want string
	}{
		{cuckooName, cuckooName},
		{bloomName, bloomName},
		{"none", "none"},
	} {
		p, err := cuckoopolicy.ParseFilterPolicy(tc.name)
		if err != nil {
			t.Fatalf("ParseFilterPolicy(%q): %v", tc.name, err)
		}
		if p.Name() != tc.want {
			t.Fatalf("ParseFilterPolicy(%q).Name() = %q, want %q", tc.name, p.Name(), tc.want)
		}
	}
	if p, _ := cuckoopolicy.ParseFilterPolicy("none"); p != pebble.NoFilterPolicy {
		t.Fatalf(`ParseFilterPolicy("none") = %#v, want pebble.NoFilterPolicy`, p)
	}
	for _, bad := range []string{"", "pebble_cuckoo.v2", "bloom", "rocksdb.BuiltinBloomFilter "} {
		if p, err := cuckoopolicy.ParseFilterPolicy(bad); err == nil {
			t.Fatalf("ParseFilterPolicy(%q) = %#v, want an error", bad, p)
		}
	}
}

// tableKeys returns n distinct present keys (values derived from them) and m
// absent keys, in the format "user/%016x" so that keys are neither sequential
// nor of one length.
func tableKeys(rng *rand.Rand, n, m int) (present map[string]string, absent [][]byte) {
	present = make(map[string]string, n)
	for len(present) < n {
		k := fmt.Sprintf("user/%x", rng.Uint64())
		present[k] = "v:" + k
	}
	seen := map[string]bool{}
	for len(absent) < m {
		k := fmt.Sprintf("user/%x", rng.Uint64())
		if _, ok := present[k]; ok || seen[k] {
			continue
		}
		seen[k] = true
		absent = append(absent, []byte(k))
	}
	return present, absent
}

// probeTable opens the table at path with ro, looks up every present key and
// every absent one with SeekPrefixGE, and returns the filter metrics of the
// absent probes. It fails on a lost key, a wrong value, or a phantom.
func probeTable(t *testing.T, fs vfs.FS, path string, ro sstable.ReaderOptions,
	present map[string]string, absent [][]byte) (presentMetrics, absentMetrics sstable.FilterMetrics) {
	t.Helper()
	var tracker sstable.FilterMetricsTracker
	ro.FilterMetricsTracker = &tracker
	r, err := openTable(fs, path, ro)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer r.Close()
	it, err := r.NewIter(sstable.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	f := &pebbletest.Failures{T: t, What: path}
	for k, want := range present {
		kv := it.SeekPrefixGE([]byte(k), []byte(k), 0)
		if kv == nil || !bytes.Equal(kv.K.UserKey, []byte(k)) {
			f.Add("SeekPrefixGE(%q): lost key (iter error %v)", k, it.Error())
			continue
		}
		v, _, err := kv.Value(nil)
		if err != nil || string(v) != want {
			f.Add("SeekPrefixGE(%q) = %q (err %v), want %q", k, v, err, want)
		}
	}
	presentMetrics = tracker.Load()
	for _, k := range absent {
		if kv := it.SeekPrefixGE(k, k, 0); kv != nil && bytes.Equal(kv.K.UserKey, k) {
			f.Add("SeekPrefixGE(%q): found an absent key", k)
		}
		if err := it.Error(); err != nil {
			f.Add("SeekPrefixGE(%q): %v", k, err)
		}
	}
	f.Check()
	m := tracker.Load()
	absentMetrics = sstable.FilterMetrics{Hits: m.Hits - presentMetrics.Hits, Misses: m.Misses - presentMetrics.Misses}
	return presentMetrics, absentMetrics
}

// TestSSTableFilter writes single sstables with sstable.NewWriter and the
// cuckoo policy in row and columnar formats and checks the metaindex name, the
// properties, the block's own description, that absent keys are skipped within
// the false-positive bound the block's parameters imply, that every present
// key is found, that any instance of the family reads the block the same way,
// and that a reader whose Filters map lacks the policy reads correctly without
// it.
func TestSSTableFilter(t *testing.T) {
	t.Parallel()
	seed := pebbletest.FixedSeed(t, 1) // statistical: fresh with PEBBLE_CUCKOO_LONG=1
	n, m := pebbletest.Scale(1000, 4000, 20000), pebbletest.Scale(5000, 20000, 100000)
	policies := []pebble.FilterPolicy{
		cuckoopolicy.FilterPolicy(10),
		cuckoopolicy.FilterPolicy(12),
		cuckoopolicy.FilterPolicy(16),
		cuckoopolicy.Policy{FingerprintBits: 13, SemiSort: true},
		cuckoopolicy.Policy{FingerprintBits: 8, SemiSort: false},
		cuckoopolicy.Policy{FingerprintBits: 17, SemiSort: false, LoadFactor: 0.8},
	}
	for _, tf := range tableFormats {
		for pi, policy := range policies {
			t.Run(fmt.Sprintf("%s/%s", tf, policyString(policy)), func(t *testing.T) {
				rng := pebbletest.Rand(seed + uint64(pi))
				present, absent := tableKeys(rng, n, m)
				fs := vfs.NewMem()
				wo := sstable.WriterOptions{TableFormat: tf, FilterPolicy: policy, BlockSize: 1024}
				writeTable(t, fs, "t.sst", wo, sortedKVs(present, bytes.Compare))

				ro := sstable.ReaderOptions{Filters: map[string]pebble.FilterPolicy{cuckooName: policy}}
				block := checkFilterMeta(t, fs, "t.sst", ro)
				info := checkInspect(t, block, policy, n)

				// Present keys all pass the filter; absent ones are skipped
				// within the bound implied by the block's parameters.
				pm, am := probeTable(t, fs, "t.sst", ro, present, absent)
				if pm.Hits != 0 || pm.Misses != int64(n) {
					t.Fatalf("present probes: %d filtered, %d passed; want 0 and %d", pm.Hits, pm.Misses, n)
				}
				if am.Hits+am.Misses != int64(m) {
					t.Fatalf("absent probes: %d consulted the filter, want %d", am.Hits+am.Misses, m)
				}
				lambda, bound := pebbletest.FPRBound(info, m)
				t.Logf("%+v: %d of %d absent keys passed (FPR %.4f%%, theory <= %.1f), %.2f bits/key",
					info, am.Misses, m, 100*float64(am.Misses)/float64(m), lambda, 8*float64(len(block))/float64(n))
				if float64(am.Misses) > bound {
					t.Fatalf("absent probes: %d false positives, above the bound %.1f (expected <= %.1f)", am.Misses, bound, lambda)
				}

				// Any instance of the family decodes the block identically.
				for _, other := range []pebble.FilterPolicy{cuckoopolicy.FilterPolicy(3), cuckoopolicy.Policy{}} {
					ro2 := sstable.ReaderOptions{Filters: map[string]pebble.FilterPolicy{cuckooName: other}}
					_, am2 := probeTable(t, fs, "t.sst", ro2, present, absent)
					if am2 != am {
						t.Fatalf("reading with %s: absent metrics %+v, with the writer's policy %+v", policyString(other), am2, am)
					}
				}

				// Without the policy in Filters the table is read unfiltered.
				for _, filters := range []map[string]pebble.FilterPolicy{
					nil,
					{bloomName: bloom.FilterPolicy(10)},
				} {
					pm, am := probeTable(t, fs, "t.sst", sstable.ReaderOptions{Filters: filters}, present, absent)
					if pm.Hits+pm.Misses+am.Hits+am.Misses != 0 {
						t.Fatalf("Filters %v: the filter was consulted (%+v, %+v)", filters, pm, am)
					}
				}
			})
		}
	}
}

// checkFilterMeta checks that the metaindex names the table's filter block
// after the policy, and that the properties name the policy and the
// block's size; it returns the block.
func checkFilterMeta(t *testing.T, fs vfs.FS, path string, ro sstable.ReaderOptions) []byte {
	t.Helper()
	name, block, _ := readFilterBlock(t, fs, path, ro)
	if name != "fullfilter."+cuckooName {
		t.Fatalf("metaindex filter block %q, want %q", name, "fullfilter."+cuckooName)
	}
	r, err := openTable(fs, path, ro)
	if err != nil {
		t.Fatal(err)
	}
	props, err := r.ReadPropertiesBlock(t.Context(), nil)
	_ = r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if props.FilterPolicyName != cuckooName || props.FilterSize != uint64(len(block)) || len(block) == 0 {
		t.Fatalf("properties: filter policy %q size %d; want %q size %d (the block's length)",
			props.FilterPolicyName, props.FilterSize, cuckooName, len(block))
	}
	return block
}

// checkInspect checks that the block, built by policy over n keys,
// describes itself: its key count, and the layout the policy asks for.
func checkInspect(t *testing.T, block []byte, policy pebble.FilterPolicy, n int) cuckoopolicy.Info {
	t.Helper()
	info, err := cuckoopolicy.Inspect(block)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	checkKeyCount(t, "Inspect", info, n)
	wantSemi := true
	if p, ok := policy.(cuckoopolicy.Policy); ok {
		wantSemi = p.SemiSort
		if info.FingerprintBits != p.FingerprintBits {
			t.Fatalf("Inspect: %d-bit fingerprints, want %d", info.FingerprintBits, p.FingerprintBits)
		}
	}
	if info.SemiSort != wantSemi {
		t.Fatalf("Inspect: semi-sorted %v, want %v", info.SemiSort, wantSemi)
	}
	return info
}

// TestSSTableAnyBudget writes a table with every kind of budget a user might
// pass, including ones the policy must clamp, and every fingerprint width of
// both layouts: no key is ever lost and the false-positive count stays within
// the bound of the block's parameters.
func TestSSTableAnyBudget(t *testing.T) {
	t.Parallel()
	seed := pebbletest.FixedSeed(t, 1) // statistical: fresh with PEBBLE_CUCKOO_LONG=1
	var policies []pebble.FilterPolicy
	for _, b := range []int{-100, -1, 0, 1, 2, 3, 4, 5, 7, 9, 11, 13, 15, 17, 24, 31, 32, 33, 40, 64, 1000} {
		policies = append(policies, cuckoopolicy.FilterPolicy(b))
	}
	for f := 4; f <= 32; f++ {
		policies = append(policies,
			cuckoopolicy.Policy{FingerprintBits: f, SemiSort: true},
			cuckoopolicy.Policy{FingerprintBits: f, SemiSort: false})
	}
	policies = append(policies,
		cuckoopolicy.Policy{},
		cuckoopolicy.Policy{SemiSort: true, LoadFactor: 0.5},
		cuckoopolicy.Policy{FingerprintBits: 12, LoadFactor: 0.95})
	n, m := 700, 4000
	for i, policy := range policies {
		tf := tableFormats[i%len(tableFormats)]
		rng := pebbletest.Rand(seed + uint64(i))
		// Sizes from 1 key up, so tiny tables are covered too.
		nk := []int{1, 2, 3, 7, 64, n}[i%6]
		present, absent := tableKeys(rng, nk, m)
		fs := vfs.NewMem()
		writeTable(t, fs, "t.sst", sstable.WriterOptions{TableFormat: tf, FilterPolicy: policy}, sortedKVs(present, bytes.Compare))
		ro := sstable.ReaderOptions{Filters: map[string]pebble.FilterPolicy{cuckooName: policy}}
		_, block, _ := readFilterBlock(t, fs, "t.sst", ro)
		info, err := cuckoopolicy.Inspect(block)
		if err != nil {
			t.Fatalf("%s (%s): Inspect: %v", policyString(policy), tf, err)
		}
		checkKeyCount(t, policyString(policy), info, nk)
		if p, ok := policy.(cuckoopolicy.Policy); ok && p.FingerprintBits != 0 && info.FingerprintBits != p.FingerprintBits {
			t.Fatalf("%s: Inspect: %d-bit fingerprints", policyString(policy), info.FingerprintBits)
		}
		_, am := probeTable(t, fs, "t.sst", ro, present, absent)
		if _, bound := pebbletest.FPRBound(info, m); float64(am.Misses) > bound {
			t.Fatalf("%s: %d of %d absent keys passed, above the bound %.1f for %+v", policyString(policy), am.Misses, m, bound, info)
		}
	}
}

// TestSSTableSizeVersusBloom checks the budget contract on the same keys:
// FilterPolicy(B) writes a filter block no larger than bloom.FilterPolicy(B)
// (plus a trailer's worth of bytes) and skips at least as many absent keys,
// by a statistically significant margin. It runs a fixed seed, and a fresh
// one with PEBBLE_CUCKOO_LONG=1, whose five times as many absent keys widen
// the gap by more than two standard deviations.
func TestSSTableSizeVersusBloom(t *testing.T) {
	t.Parallel()
	seed := pebbletest.FixedSeed(t, 1)
	// Enough absent keys that at B=10 (about 1.1% against 0.75%) the gap
	// is some seven standard deviations, four above the 3 the test asks for.
	n, m := pebbletest.Scale(4000, 10000, 50000), pebbletest.Scale(80000, 80000, 400000)
	for _, b := range []int{10, 12, 16, 20} {
		for _, tf := range []sstable.TableFormat{sstable.TableFormatMinSupported, sstable.TableFormatMax} {
			rng := pebbletest.Rand(seed + uint64(b))
			present, absent := tableKeys(rng, n, m)
			kvs := sortedKVs(present, bytes.Compare)
			fs := vfs.NewMem()
			var sizes [2]int
			var passed [2]int64
			for i, policy := range []pebble.FilterPolicy{bloom.FilterPolicy(b), cuckoopolicy.FilterPolicy(b)} {
				path := fmt.Sprintf("%d.sst", i)
				writeTable(t, fs, path, sstable.WriterOptions{TableFormat: tf, FilterPolicy: policy}, kvs)
				ro := sstable.ReaderOptions{Filters: map[string]pebble.FilterPolicy{policy.Name(): policy}}
				_, block, _ := readFilterBlock(t, fs, path, ro)
				sizes[i] = len(block)
				_, am := probeTable(t, fs, path, ro, present, absent)
				passed[i] = am.Misses
			}
			t.Logf("B=%d %s: bloom %d bytes (%.2f bits/key) FPR %.3f%%; cuckoo %d bytes (%.2f bits/key) FPR %.3f%%",
				b, tf, sizes[0], 8*float64(sizes[0])/float64(n), 100*float64(passed[0])/float64(m),
				sizes[1], 8*float64(sizes[1])/float64(n), 100*float64(passed[1])/float64(m))
			if sizes[1] > sizes[0]+64 {
				t.Fatalf("B=%d: cuckoo filter %d bytes, bloom %d: the budget is exceeded", b, sizes[1], sizes[0])
			}
			if !significantlyFewer(passed[1], passed[0], 3) {
				t.Fatalf("B=%d: cuckoo passed %d absent keys, bloom %d: not fewer by 3 standard deviations", b, passed[1], passed[0])
			}
		}
	}
}

// TestSSTableVersions writes CockroachDB keys with several MVCC versions per
// key (the writer calls AddKey with equal consecutive prefixes) and checks
// that the block counts distinct prefixes and that prefix probes at any
// version find the key.
func TestSSTableVersions(t *testing.T) {
	t.Parallel()
	seed := pebbletest.Seed(t)
	rng := pebbletest.Rand(seed)
	cmp := cockroachkvs.Comparer.Compare
	for _, tf := range []sstable.TableFormat{sstable.TableFormatMinSupported, sstable.TableFormatMax} {
		fs := vfs.NewMem()
		present := map[string]string{}
		var prefixes [][]byte
		for i := 0; i < 2000; i++ {
			roach := fmt.Appendf(nil, "/Table/%d/%x", 50+rng.IntN(5), rng.Uint64())
			prefixes = append(prefixes, cockroachkvs.EncodeMVCCKey(nil, roach, 0, 0))
			for v := 0; v < 1+rng.IntN(6); v++ {
				k := cockroachkvs.EncodeMVCCKey(nil, roach, uint64(1000+10*v), uint32(rng.IntN(2)))
				present[string(k)] = fmt.Sprintf("%s@%d", roach, v)
			}
		}
		policy := cuckoopolicy.FilterPolicy(12)
		wo := sstable.WriterOptions{
			TableFormat:  tf,
			FilterPolicy: policy,
			Comparer:     &cockroachkvs.Comparer,
			KeySchema:    &cockroachkvs.KeySchema,
		}
		writeTable(t, fs, "t.sst", wo, sortedKVs(present, cmp))
		ro := sstable.ReaderOptions{
			Comparer:   &cockroachkvs.Comparer,
			KeySchemas: sstable.MakeKeySchemas(&cockroachkvs.KeySchema),
			Filters:    map[string]pebble.FilterPolicy{cuckooName: policy},
		}
		_, block, _ := readFilterBlock(t, fs, "t.sst", ro)
		info, err := cuckoopolicy.Inspect(block)
		if err != nil {
			t.Fatal(err)
		}
		// One entry per prefix, however many versions were added.
		checkKeyCount(t, fmt.Sprintf("%s, %d versions of %d prefixes", tf, len(present), len(prefixes)), info, len(prefixes))
		var tracker sstable.FilterMetricsTracker
		ro.FilterMetricsTracker = &tracker
		r, err := openTable(fs, "t.sst", ro)
		if err != nil {
			t.Fatal(err)
		}
		it, err := r.NewIter(sstable.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
		if err != nil {
			t.Fatal(err)
		}
		for k := range present {
			// Probe by the exact version and by a newer timestamp of the
			// same prefix: both must pass the filter.
			key := []byte(k)
			prefix := key[:cockroachkvs.Split(key)]
			if kv := it.SeekPrefixGE(prefix, key, 0); kv == nil || !bytes.Equal(kv.K.UserKey, key) {
				t.Fatalf("%s: SeekPrefixGE(%s) lost the key", tf, cockroachkvs.FormatKey(key))
			}
			newer := cockroachkvs.EncodeMVCCKey(nil, prefix[:len(prefix)-1], 1<<40, 0)
			if kv := it.SeekPrefixGE(prefix, newer, 0); kv == nil || !bytes.Equal(kv.K.UserKey[:cockroachkvs.Split(kv.K.UserKey)], prefix) {
				t.Fatalf("%s: SeekPrefixGE(%s) found no version", tf, cockroachkvs.FormatKey(newer))
			}
		}
		// Every probe passed the filter, and the filter was asked each time.
		if fm := tracker.Load(); fm.Hits != 0 || fm.Misses != int64(2*len(present)) {
			t.Fatalf("%s: %d present prefixes were filtered out, %d passed, of %d probes", tf, fm.Hits, fm.Misses, 2*len(present))
		}
		_ = it.Close()
		_ = r.Close()
	}
}
