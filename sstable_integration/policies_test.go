package sstableintegration

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// TestOptionsRoundTrip writes the policy into an OPTIONS file and reads it
// back with ParseFilterPolicy as ParseHooks.NewFilterPolicy: the file names
// the policy on every level, Options.Parse rebuilds it, and a database opened
// with the parsed options uses the filters and finds every key.
func TestOptionsRoundTrip(t *testing.T) {
	t.Parallel()
	seed := pebbletest.Seed(t)
	hooks := &pebble.ParseHooks{NewFilterPolicy: cuckoopolicy.ParseFilterPolicy}

	// A mix of policies survives Options.String and Options.Parse per level.
	mixed := &pebble.Options{}
	for i, p := range []pebble.FilterPolicy{
		pebble.NoFilterPolicy, bloom.FilterPolicy(10), cuckoopolicy.FilterPolicy(10),
		cuckoopolicy.Policy{FingerprintBits: 13}, bloom.FilterPolicy(10), cuckoopolicy.FilterPolicy(16),
		cuckoopolicy.FilterPolicy(12),
	} {
		mixed.Levels[i].FilterPolicy = p
	}
	mixed.EnsureDefaults()
	s := mixed.String()
	var parsed pebble.Options
	if err := parsed.Parse(s, hooks); err != nil {
		t.Fatalf("Parse: %v\n%s", err, s)
	}
	for i := range mixed.Levels {
		if got, want := parsed.Levels[i].FilterPolicy.Name(), mixed.Levels[i].FilterPolicy.Name(); got != want {
			t.Fatalf("L%d: parsed filter policy %q, want %q", i, got, want)
		}
	}
	parsed.EnsureDefaults()
	if got := filterPolicyLines(parsed.String()); !slices.Equal(got, filterPolicyLines(s)) {
		t.Fatalf("filter_policy lines after a round trip: %q, want %q", got, filterPolicyLines(s))
	}

	// A database's own OPTIONS file.
	eachFormat(t, seed, func(t *testing.T, f dbFormat, rng *rand.Rand, fs *vfs.MemFS) {
		n := pebbletest.Scale(2000, 4000, 20000)
		want := writeDB(t, fs, f, cuckoopolicy.FilterPolicy(12), n, 3)

		names, err := fs.List("db")
		if err != nil {
			t.Fatal(err)
		}
		var optionsFile string
		for _, name := range names {
			if strings.HasPrefix(name, "OPTIONS-") && name > optionsFile {
				optionsFile = name
			}
		}
		if optionsFile == "" {
			t.Fatalf("no OPTIONS file in %v", names)
		}
		data := readAll(t, fs, fs.PathJoin("db", optionsFile))
		lines := filterPolicyLines(data)
		if len(lines) != 7 || slices.ContainsFunc(lines, func(l string) bool { return l != "filter_policy="+cuckooName }) {
			t.Fatalf("%s: filter_policy lines %q, want %d times filter_policy=%s", optionsFile, lines, 7, cuckooName)
		}
		var o pebble.Options
		if err := o.Parse(data, hooks); err != nil {
			t.Fatalf("Parse(%s): %v", optionsFile, err)
		}
		for i := range o.Levels {
			if o.Levels[i].FilterPolicy == nil || o.Levels[i].FilterPolicy.Name() != cuckooName {
				t.Fatalf("L%d: parsed filter policy %#v, want the cuckoo policy", i, o.Levels[i].FilterPolicy)
			}
		}
		o.FS = fs
		o.Logger = pebbletest.QuietLogger{}
		db := openDB(t, "db", &o)
		absent := absentOdd(rng, "k", n, n/2)
		checkFiltered(t, "reopened with parsed options", db, want, absent)
		closeDB(t, db)
	})
}

func filterPolicyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "filter_policy=") {
			out = append(out, l)
		}
	}
	return out
}

// TestDBSwitchPolicies opens one database in turn with bloom, cuckoo, no
// filter and other cuckoo configurations. Each phase writes a table of its
// own keys (left alone afterwards, so tables of every policy coexist), then
// sets, overwrites and deletes keys of a shared range over a few flushes and
// compacts that range (rewriting those tables with the phase's policy). Every
// key written so far stays readable, with the level policy's Filters only and
// with both families registered; a final full compaction leaves only the last
// policy's tables.
func TestDBSwitchPolicies(t *testing.T) {
	t.Parallel()
	seed := pebbletest.Seed(t)
	for _, f := range dbFormats {
		t.Run(f.name, func(t *testing.T) {
			phases := []pebble.FilterPolicy{
				bloom.FilterPolicy(10),
				cuckoopolicy.FilterPolicy(10),
				pebble.NoFilterPolicy,
				cuckoopolicy.FilterPolicy(16),
				bloom.FilterPolicy(12),
				cuckoopolicy.Policy{FingerprintBits: 14},
			}
			if pebbletest.Long() {
				phases = append(phases, phases...)
			}
			sw := &switchRun{t: t, f: f, fs: vfs.NewMem(), rng: pebbletest.Rand(seed), want: oracle{}, used: map[string]bool{}}
			for i := 0; i < switchKeys; i++ {
				sw.universe = append(sw.universe, key("k", i))
			}
			for p, policy := range phases {
				sw.phase(p, policy)
			}
			// Automatic compactions and a last full compaction leave only
			// the last phase's policy.
			last := phases[len(phases)-1]
			db := openDB(t, "db", dbOptions(sw.fs, f, last))
			checkReader(t, "with automatic compactions", db, bytes.Compare, sw.want, sw.universe)
			if err := db.Compact(context.Background(), []byte("a"), []byte("z"), false); err != nil {
				t.Fatal(err)
			}
			checkReader(t, "after the final compaction", db, bytes.Compare, sw.want, sw.universe)
			if counts := policyCounts(t, db, sw.fs, "db"); len(counts) != 1 || counts[last.Name()] == 0 {
				t.Fatalf("after a full compaction, tables by filter policy %v; want all %q", counts, last.Name())
			}
			closeDB(t, db)
		})
	}
}

// switchKeys are the "k" keys every phase of TestDBSwitchPolicies
// overwrites and deletes; switchPhaseKeys those each phase writes once.
const switchKeys, switchPhaseKeys = 4000, 500

// switchRun is one database of TestDBSwitchPolicies across its phases.
type switchRun struct {
	t        *testing.T
	f        dbFormat
	fs       vfs.FS
	rng      *rand.Rand
	want     oracle
	universe [][]byte        // every key written, and absent ones beside them
	used     map[string]bool // policy names of the phases so far
}

// phase opens the database with policy, writes and compacts, and checks
// that every table of every phase so far is read, through the filter of
// its own policy when Filters holds both families.
func (sw *switchRun) phase(p int, policy pebble.FilterPolicy) {
	t := sw.t
	sw.used[policy.Name()] = true
	o := dbOptions(sw.fs, sw.f, policy)
	o.DisableAutomaticCompactions = true
	db := openDB(t, "db", o)
	sw.write(db, p)
	if err := db.Compact(context.Background(), key("k", 0), key("k", switchKeys), false); err != nil {
		t.Fatal(err)
	}
	what := fmt.Sprintf("phase %d (%s)", p, policyString(policy))
	checkReader(t, what, db, bytes.Compare, sw.want, sw.universe)
	counts := policyCounts(t, db, sw.fs, "db")
	t.Logf("%s: tables by filter policy %v", what, counts)
	for name := range sw.used {
		if name == pebble.NoFilterPolicy.Name() {
			name = ""
		}
		if counts[name] == 0 {
			t.Fatalf("%s: no table left with policy %q: %v", what, name, counts)
		}
	}
	closeDB(t, db)

	// Again with both families registered in Filters, so that every table
	// is read through its own filter.
	o = dbOptions(sw.fs, sw.f, policy)
	o.DisableAutomaticCompactions = true
	if o.Filters == nil {
		o.Filters = map[string]pebble.FilterPolicy{}
	}
	o.Filters[cuckooName] = cuckoopolicy.FilterPolicy(10)
	o.Filters[bloomName] = bloom.FilterPolicy(10)
	db = openDB(t, "db", o)
	checkReader(t, what+" with both families in Filters", db, bytes.Compare, sw.want, sw.universe)
	closeDB(t, db)
}

// write writes phase p's own keys into a table nothing compacts later,
// then three flushed rounds of sets and deletes of "k" keys.
func (sw *switchRun) write(db *pebble.DB, p int) {
	t, rng := sw.t, sw.rng
	flush := func() {
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	space := fmt.Sprintf("p%02d", p)
	for i := 0; i < switchPhaseKeys; i++ {
		k := key(space, i)
		if err := db.Set(k, k, nil); err != nil {
			t.Fatal(err)
		}
		sw.want[string(k)] = string(k)
		sw.universe = append(sw.universe, k, key(space, switchPhaseKeys+i))
	}
	flush()
	for round := 0; round < 3; round++ {
		for op := 0; op < 600; op++ {
			k := key("k", rng.IntN(switchKeys))
			if rng.IntN(5) == 0 {
				if err := db.Delete(k, nil); err != nil {
					t.Fatal(err)
				}
				delete(sw.want, string(k))
				continue
			}
			v := fmt.Sprintf("p%d.%d.%d", p, round, op)
			if err := db.Set(k, []byte(v), nil); err != nil {
				t.Fatal(err)
			}
			sw.want[string(k)] = v
		}
		flush()
	}
}
