package sstableintegration

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// Flags of the metamorphic test; doc.go lists them with the environment
// variables of pebbletest.
var (
	flagMetaSeeds = flag.Int("metamorphic.seeds", 0, "number of metamorphic seeds to run (0: 4, 2 with -short, 200 when long)")
	flagMetaSeed  = flag.Uint64("metamorphic.seed", 0, "run the metamorphic comparison for this one seed only")
	flagMetaOps   = flag.Int("metamorphic.ops", 0, "operations per metamorphic run (0: 3000, 2000 with -short, 5000 when long)")
)

// cuckooName is the on-disk identifier of the policy: the metaindex holds
// "fullfilter." + cuckooName and the OPTIONS file filter_policy=cuckooName.
// It is pinned here on purpose: changing it orphans every filter on disk.
const cuckooName = "pebble_cuckoo.v1"

// bloomName is Pebble's name for its bloom filter policy.
const bloomName = "rocksdb.BuiltinBloomFilter"

// dbFormat is a format major version with the table format it writes.
type dbFormat struct {
	name string
	fmv  pebble.FormatMajorVersion
}

// dbFormats are the oldest format major version Pebble v2.1.7 opens (it writes
// row-oriented tables, TableFormatPebblev3) and the newest (columnar tables,
// TableFormatPebblev7).
var dbFormats = []dbFormat{
	{"row", pebble.FormatMinSupported},
	{"columnar", pebble.FormatNewest},
}

// eachFormat runs test as a subtest for each of dbFormats, on an empty
// in-memory filesystem, with a generator seeded with seed: the same draws
// for every format.
func eachFormat(t *testing.T, seed uint64, test func(t *testing.T, f dbFormat, rng *rand.Rand, fs *vfs.MemFS)) {
	t.Helper()
	for _, f := range dbFormats {
		t.Run(f.name, func(t *testing.T) {
			test(t, f, pebbletest.Rand(seed), vfs.NewMem())
		})
	}
}

// dbOptions returns options with policy set on all seven levels (L0's default
// is no filter, so leaving any level unset would leave it unfiltered).
func dbOptions(fs vfs.FS, f dbFormat, policy pebble.FilterPolicy) *pebble.Options {
	o := &pebble.Options{
		FS:                 fs,
		FormatMajorVersion: f.fmv,
		Logger:             pebbletest.QuietLogger{},
	}
	setPolicy(o, policy)
	return o
}

// setPolicy sets policy on every level and rebuilds the Filters map from the
// levels, as Options.EnsureDefaults does.
func setPolicy(o *pebble.Options, policy pebble.FilterPolicy) {
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = policy
	}
	o.Filters = nil
	if policy != pebble.NoFilterPolicy {
		o.Filters = map[string]pebble.FilterPolicy{policy.Name(): policy}
	}
}

func openDB(t testing.TB, dir string, o *pebble.Options) *pebble.DB {
	t.Helper()
	db, err := pebble.Open(dir, o)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return db
}

func closeDB(t testing.TB, db *pebble.DB) {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// filterMetrics returns the database's cumulative filter hits and misses.
func filterMetrics(db *pebble.DB) sstable.FilterMetrics {
	return db.Metrics().Filter
}

// oracle is the map of what was written: key to value. A key missing from it
// must be missing from the database.
type oracle map[string]string

func (o oracle) clone() oracle {
	c := make(oracle, len(o))
	for k, v := range o {
		c[k] = v
	}
	return c
}

func (o oracle) sortedKeys(cmp func(a, b []byte) int) []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return cmp([]byte(keys[i]), []byte(keys[j])) < 0 })
	return keys
}

// checkReader asserts that r (a DB or a snapshot) holds exactly what o holds:
// every key of o by Get and by SeekPrefixGE (with UseL6Filters, so that L6
// filters are consulted too), every absent probe missing both ways, and a full
// scan equal to o. Keys must be whole prefixes or exact versioned keys, so
// that SeekPrefixGE(k) lands on k when k is present.
func checkReader(t testing.TB, what string, r pebble.Reader, cmp func(a, b []byte) int, o oracle, absent [][]byte) {
	t.Helper()
	f := &pebbletest.Failures{T: t, What: what}
	for k, want := range o {
		got, closer, err := r.Get([]byte(k))
		switch {
		case err == pebble.ErrNotFound:
			f.Add("Get(%q): lost key, want %q", k, want)
		case err != nil:
			f.Add("Get(%q): %v", k, err)
		default:
			if string(got) != want {
				f.Add("Get(%q) = %q, want %q", k, got, want)
			}
			_ = closer.Close()
		}
	}
	for _, k := range absent {
		if _, ok := o[string(k)]; ok {
			continue
		}
		if v, closer, err := r.Get(k); err == nil {
			f.Add("Get(%q) = %q, want not found", k, v)
			_ = closer.Close()
		} else if err != pebble.ErrNotFound {
			f.Add("Get(%q): %v", k, err)
		}
	}

	it, err := r.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		t.Fatalf("%s: NewIter: %v", what, err)
	}
	for k, want := range o {
		if !it.SeekPrefixGE([]byte(k)) || !bytes.Equal(it.Key(), []byte(k)) {
			f.Add("SeekPrefixGE(%q): lost key (iter error %v)", k, it.Error())
			continue
		}
		if v, err := it.ValueAndErr(); err != nil || string(v) != want {
			f.Add("SeekPrefixGE(%q) value = %q (err %v), want %q", k, v, err, want)
		}
	}
	for _, k := range absent {
		if _, ok := o[string(k)]; ok {
			continue
		}
		if it.SeekPrefixGE(k) && bytes.Equal(it.Key(), k) {
			f.Add("SeekPrefixGE(%q) found %q, want nothing", k, it.Value())
		}
		if err := it.Error(); err != nil {
			f.Add("SeekPrefixGE(%q): %v", k, err)
		}
	}

	keys := o.sortedKeys(cmp)
	i := 0
	for valid := it.First(); valid; valid = it.Next() {
		if i >= len(keys) || !bytes.Equal(it.Key(), []byte(keys[i])) {
			want := "end"
			if i < len(keys) {
				want = fmt.Sprintf("%q", keys[i])
			}
			f.Add("scan: key %q at position %d, want %s", it.Key(), i, want)
			break
		}
		if v := it.Value(); string(v) != o[keys[i]] {
			f.Add("scan: %q = %q, want %q", keys[i], v, o[keys[i]])
		}
		i++
	}
	if err := it.Error(); err != nil {
		f.Add("scan: %v", err)
	} else if i < len(keys) && f.Len() == 0 {
		f.Add("scan stopped at %d of %d keys; next expected %q", i, len(keys), keys[i])
	}
	if err := it.Close(); err != nil {
		f.Add("iterator close: %v", err)
	}
	f.Check()
}

// dbFPRBound returns a statistical upper bound on the false positives among
// n absent probes of the database's cuckoo filters, from the parameters of
// its worst filter block (the highest per-probe false-positive expectation).
func dbFPRBound(t testing.TB, db *pebble.DB, fs vfs.FS, dir string, n int) (lambda, bound float64) {
	t.Helper()
	for _, tf := range liveTables(t, db, fs, dir) {
		_, block, _ := readFilterBlock(t, fs, tf.path, sstable.ReaderOptions{})
		info, err := cuckoopolicy.Inspect(block)
		if err != nil {
			t.Fatalf("Inspect the filter of %s: %v", tf.path, err)
		}
		if l, b := pebbletest.FPRBound(info, n); l > lambda {
			lambda, bound = l, b
		}
	}
	return lambda, bound
}

// tableFile describes one physical sstable of a database.
type tableFile struct {
	level int
	path  string
	props *sstable.Properties
}

// liveTables lists the database's sstables with their properties.
func liveTables(t testing.TB, db *pebble.DB, fs vfs.FS, dir string) []tableFile {
	t.Helper()
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatalf("SSTables: %v", err)
	}
	var out []tableFile
	for level, tables := range levels {
		for _, ti := range tables {
			out = append(out, tableFile{
				level: level,
				path:  fs.PathJoin(dir, fmt.Sprintf("%06d.sst", ti.BackingSSTNum)),
				props: ti.Properties,
			})
		}
	}
	return out
}

// policyCounts counts the database's tables by the filter policy their
// properties name ("" for none).
func policyCounts(t testing.TB, db *pebble.DB, fs vfs.FS, dir string) map[string]int {
	m := map[string]int{}
	for _, tf := range liveTables(t, db, fs, dir) {
		m[tf.props.FilterPolicyName]++
	}
	return m
}

// requireAllCuckoo asserts that every table of the database carries a cuckoo
// filter of nonzero size, and returns the number of tables.
func requireAllCuckoo(t testing.TB, db *pebble.DB, fs vfs.FS, dir string) int {
	t.Helper()
	tables := liveTables(t, db, fs, dir)
	for _, tf := range tables {
		if tf.props.FilterPolicyName != cuckooName || tf.props.FilterSize == 0 {
			t.Fatalf("table %s in L%d: filter policy %q, filter size %d; want %q with a filter",
				tf.path, tf.level, tf.props.FilterPolicyName, tf.props.FilterSize, cuckooName)
		}
	}
	return len(tables)
}

// levelCounts returns the number of tables on each level.
func levelCounts(db *pebble.DB) [7]int64 {
	var c [7]int64
	m := db.Metrics()
	for i := range c {
		c[i] = m.Levels[i].TablesCount
	}
	return c
}

// kv is one point key of a hand-built sstable.
type kv struct {
	key, value []byte
}

// writeTable writes kvs (sorted, unique) as one sstable at path.
func writeTable(t testing.TB, fs vfs.FS, path string, wo sstable.WriterOptions, kvs []kv) {
	t.Helper()
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), wo)
	for _, e := range kvs {
		if err := w.Set(e.key, e.value); err != nil {
			t.Fatalf("Set(%q): %v", e.key, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close writer: %v", err)
	}
}

// openTable opens the sstable at path.
func openTable(fs vfs.FS, path string, ro sstable.ReaderOptions) (*sstable.Reader, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	r, err := sstable.NewReader(context.Background(), readable, ro)
	if err != nil {
		_ = readable.Close()
		return nil, err
	}
	return r, nil
}

// readFilterBlock returns the raw filter block of the table at path and its
// metaindex name, failing unless there is exactly one filter block.
func readFilterBlock(t testing.TB, fs vfs.FS, path string, ro sstable.ReaderOptions) (name string, block []byte, layout *sstable.Layout) {
	t.Helper()
	r, err := openTable(fs, path, ro)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer r.Close()
	layout, err = r.Layout()
	if err != nil {
		t.Fatalf("layout of %s: %v", path, err)
	}
	if len(layout.Filter) != 1 {
		t.Fatalf("%s: %d filter blocks in the metaindex (%v), want 1", path, len(layout.Filter), layout.Filter)
	}
	h := layout.Filter[0]
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block = make([]byte, h.Length)
	if _, err := f.ReadAt(block, int64(h.Offset)); err != nil {
		t.Fatalf("read filter block of %s: %v", path, err)
	}
	return h.Name, block, layout
}

// checkKeyCount asserts that a block built from n distinct keys holds n
// entries, less the pairs of keys it may legitimately merge: two keys with
// the same two buckets and the same fingerprint are one entry (the filter
// cannot tell them apart). With m buckets and f-bit fingerprints a pair
// collides with probability about 2/(m^2 (2^f-1)); the loss may not exceed
// that expectation over all pairs by more than 5 standard deviations.
func checkKeyCount(t testing.TB, what string, info cuckoopolicy.Info, n int) {
	t.Helper()
	m := float64(info.Buckets)
	lambda := float64(n) * float64(n-1) / 2 * 2 / (m * m * (math.Exp2(float64(info.FingerprintBits)) - 1))
	merged := n - info.Keys
	if merged < 0 || float64(merged) > lambda+5*math.Sqrt(lambda)+1 {
		t.Fatalf("%s: Inspect counts %d entries for %d distinct keys (%+v); at most %.2f merges expected",
			what, info.Keys, n, info, lambda)
	}
}

// countingPolicy wraps a policy and counts its use; it keeps the wrapped
// policy's name, so any instance reads the blocks it writes. It is comparable
// (Pebble compares policies with !=) as long as the wrapped policy is.
type countingPolicy struct {
	pebble.FilterPolicy
	c *policyCounters
}

type policyCounters struct {
	writers, keys, probes, absent atomic.Int64
	blocks                        [numBlockKinds]atomic.Int64 // filter blocks written, by kind
}

// blockKind is what a filter block written through a countingPolicy is.
type blockKind int

const (
	cuckooBlock     blockKind = iota // the cuckoo family's cuckoo table
	rawBloomBlock                    // the family's raw bloom block: bloom's own table, no trailer
	bloomBlock                       // the family's bloom table inside its trailer
	unfilteredBlock                  // the family's block that holds no filter
	invalidBlock                     // the family's block that Inspect rejects
	otherBlock                       // another policy's block (Pebble's bloom)
	numBlockKinds
)

var blockKindNames = [numBlockKinds]string{"cuckoo", "raw bloom", "bloom", "unfiltered", "invalid", "other"}

// blockCounts are filter blocks by kind.
type blockCounts [numBlockKinds]int64

// String lists the nonzero counts, as in "cuckoo 12, raw bloom 3".
func (b blockCounts) String() string {
	var parts []string
	for k, n := range b {
		if n != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", blockKindNames[k], n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// blockString lists c's blocks by kind.
func (c *policyCounters) blockString() string {
	var b blockCounts
	for k := range b {
		b[k] = c.blocks[k].Load()
	}
	return b.String()
}

func (p countingPolicy) MayContain(ft pebble.FilterType, filter, key []byte) bool {
	p.c.probes.Add(1)
	ok := p.FilterPolicy.MayContain(ft, filter, key)
	if !ok {
		p.c.absent.Add(1)
	}
	return ok
}

func (p countingPolicy) NewWriter(ft pebble.FilterType) pebble.FilterWriter {
	p.c.writers.Add(1)
	return countingWriter{p.FilterPolicy.NewWriter(ft), p.c, p.FilterPolicy.Name() == cuckooName}
}

type countingWriter struct {
	pebble.FilterWriter
	c      *policyCounters
	family bool // the cuckoo family's writer, whose blocks Inspect reads
}

func (w countingWriter) AddKey(key []byte) {
	w.c.keys.Add(1)
	w.FilterWriter.AddKey(key)
}

// Finish counts the block by kind.
func (w countingWriter) Finish(dst []byte) []byte {
	out := w.FilterWriter.Finish(dst)
	kind := otherBlock
	if w.family {
		info, err := cuckoopolicy.Inspect(out[len(dst):])
		switch {
		case err != nil:
			kind = invalidBlock
		case info.RawBloom:
			kind = rawBloomBlock
		case info.BloomBlock:
			kind = bloomBlock
		case info.Unfiltered:
			kind = unfilteredBlock
		default:
			kind = cuckooBlock
		}
	}
	w.c.blocks[kind].Add(1)
	return out
}

// randomCuckoo draws a cuckoo policy: a budget FilterPolicy(B), including
// budgets outside the useful range that the policy must clamp, or an explicit
// Policy with a fingerprint width from 4 to 32 bits, either layout.
func randomCuckoo(rng *rand.Rand) pebble.FilterPolicy {
	switch rng.IntN(3) {
	case 0:
		return cuckoopolicy.FilterPolicy([]int{6, 8, 10, 12, 16, 20}[rng.IntN(6)])
	case 1:
		return cuckoopolicy.FilterPolicy(rng.IntN(42) - 1) // -1 .. 40
	default:
		return cuckoopolicy.Policy{
			FingerprintBits: 4 + rng.IntN(29),
			SemiSort:        rng.IntN(2) == 0,
		}
	}
}

// mustEqualNames asserts that every policy of the family reports cuckooName.
func mustEqualNames(t testing.TB, policies ...pebble.FilterPolicy) {
	t.Helper()
	for _, p := range policies {
		if p.Name() != cuckooName {
			t.Fatalf("%#v.Name() = %q, want %q for every budget and configuration", p, p.Name(), cuckooName)
		}
	}
}

// sortedKVs turns a map into sorted kvs under cmp.
func sortedKVs(m map[string]string, cmp func(a, b []byte) int) []kv {
	out := make([]kv, 0, len(m))
	for k, v := range m {
		out = append(out, kv{[]byte(k), []byte(v)})
	}
	slices.SortFunc(out, func(a, b kv) int { return cmp(a.key, b.key) })
	return out
}

// significantlyFewer reports whether count a is below count b by at least k
// standard deviations of their difference, treating both as Poisson counts
// (the variance of a-b is then a+b).
func significantlyFewer(a, b int64, k float64) bool {
	return float64(b-a) >= k*math.Sqrt(float64(a+b)) && b > a
}

// policyString names a policy for test names and logs: cuckoo(10),
// cuckoo{f=13,semi}, bloom(10), none.
func policyString(p pebble.FilterPolicy) string {
	switch p := p.(type) {
	case cuckoopolicy.FilterPolicy:
		return fmt.Sprintf("cuckoo(%d)", int(p))
	case cuckoopolicy.Policy:
		s := fmt.Sprintf("cuckoo{f=%d", p.FingerprintBits)
		if p.SemiSort {
			s += ",semi"
		}
		if p.LoadFactor != 0 {
			s += fmt.Sprintf(",load=%g", p.LoadFactor)
		}
		return s + "}"
	case countingPolicy:
		return policyString(p.FilterPolicy)
	case bloom.FilterPolicy:
		return fmt.Sprintf("bloom(%d)", int(p))
	}
	if p == pebble.NoFilterPolicy {
		return "none"
	}
	return p.Name()
}
