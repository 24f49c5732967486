package workload

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// TestLookupPaths runs the lookup paths and their db.Get paths on the slow
// device in the MVCC shape (CockroachDB's comparer) and the state shape,
// and checks that every policy answered every key right, that the lookups
// read L6 filters (every present key a true positive, more probes per
// absent key than db.Get), that db.Get under bloom(10)-noL6 was timed beside
// them, and that the report has the lookups section.
func TestLookupPaths(t *testing.T) {
	cfg := Defaults("tiny")
	cfg.Ops, cfg.Reps, cfg.CountOps, cfg.Budgets = 40, 2, 300, []int{10}
	cfg.Delay = time.Microsecond // the test counts; it does not time the device
	cfg.Shapes, cfg.Regimes, cfg.LoadRounds = []string{"mvcc", "state"}, []string{"slow"}, 0
	cfg.Paths = append([]string{"get-absent", "get-present", "get-mix"}, lookupPaths...)
	cfg.Out = t.TempDir()
	cfg.Dir = filepath.Join(t.TempDir(), "data")
	res, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost != 0 || res.Phantom != 0 {
		t.Fatalf("%d keys lost, %d absent keys found", res.Lost, res.Phantom)
	}
	for _, s := range cfg.Shapes {
		d, _ := res.db(s, cuckooName(10))
		if d.Shape.Tables[6] == 0 {
			t.Fatalf("%s: no L6 table, nothing for the lookups to filter", s)
		}
		for _, p := range lookupPaths {
			for _, pol := range []string{cuckooName(10), planBloomNoL6} {
				for _, c := range res.lookupCells(s, "slow", p) {
					for _, k := range c {
						if cs := res.Cells[k][pol]; cs == nil || len(cs.NsPerOp) != cfg.Reps || cs.Lost != 0 || cs.Phantom != 0 {
							t.Errorf("%v %s: not timed in every repetition, or keys lost", k, pol)
						}
					}
				}
			}
		}
		tc := res.Truth[s][cuckooName(10)]
		if got := tc["lookup-present"]; got.TP < got.Ops {
			t.Errorf("%s: %d true positives for %d present lookups: L6 filters not read", s, got.TP, got.Ops)
		}
		if l, g := tc["lookup-absent"], tc["get-absent"]; l.Hits+l.Misses <= g.Hits+g.Misses {
			t.Errorf("%s: %d filter probes for absent lookups, %d for absent Gets: L6 filters not read", s, l.Hits+l.Misses, g.Hits+g.Misses)
		}
	}
	report, err := os.ReadFile(filepath.Join(cfg.Out, "WORKLOAD.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Lookups through L6 filters", "| mvcc | slow | absent | 1 | get-absent | bloom(10)-noL6 |", "| state | slow | mix | 2 | lookup-mix | cuckoo(10) |"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// TestLookupChecks checks that the checks of the get and lookup paths catch
// a wrong answer: a lost key, a wrong value, a phantom.
func TestLookupChecks(t *testing.T) {
	ks := keyspace{seed: 1, kind: keysPlain, n: 10}
	n := ks.valueLen()
	good := value(make([]byte, n), n, 3, 0)
	answer := func(val []byte, err error) getter {
		return func([]byte) ([]byte, io.Closer, error) {
			if err != nil {
				return nil, nil, err
			}
			return val, io.NopCloser(nil), nil
		}
	}
	boom := errors.New("boom")
	for _, c := range []struct {
		get     getter
		present bool
		want    opResult
		err     error
	}{
		{answer(good, nil), true, opRight, nil},
		{answer(value(make([]byte, n), n, 4, 0), nil), true, opLost, nil},
		{answer(nil, pebble.ErrNotFound), true, opLost, nil},
		{answer(good, nil), false, opPhantom, nil},
		{answer(nil, pebble.ErrNotFound), false, opRight, nil},
		{answer(nil, boom), false, opRight, boom},
	} {
		got, err := getOne(c.get, ks.key(nil, 3), c.present, n, 3, 0)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("present %v: %v, %v; want %v, %v", c.present, got, err, c.want, c.err)
		}
	}
}

// TestLookupVerdicts checks the lookup targets on constructed cells: the
// data-block reads per operation scaled by each path's operations, the
// time ratios paired across the lookup's and the Get's cells, each subject
// (cuckoo(10), and whatif -cache's plan where it has a database), and the
// twin rule of both cells on pressure1.
func TestLookupVerdicts(t *testing.T) {
	r := &Result{Config: Config{Threads: []int{1}}, Cells: map[cellKey]map[string]*cellStats{}}
	plan4 := cachePlanName("pressure4")
	cell := func(s, g, p, x string, us float64, ops, data int64) {
		k := cellKey{Shape: s, Regime: g, Path: p, Threads: 1}
		if r.Cells[k] == nil {
			r.Cells[k] = map[string]*cellStats{}
		}
		cs := &cellStats{NsPerOp: nearReps(1000 * us), Ops: ops}
		cs.IO.Reads[kindData] = data
		r.Cells[k][x] = cs
	}
	var dbs []dbRow
	for _, n := range []string{planBloomNoL6, planBase, twinName, cuckooName(10), plan4} {
		dbs = append(dbs, dbRow{Cfg: policyCfg{Name: n}})
	}
	for _, s := range []string{"blockstore", "state"} {
		r.Shapes = append(r.Shapes, shapeResult{Spec: shapeSpec{Name: s}, DBs: dbs})
	}
	// blockstore: whatif's plan (budget above 0) meets every target, on
	// four times the Get's operations; state: no plan, cuckoo(10) reads too
	// many data blocks and is slow on present keys.
	// state/pressure1: budget 0, whatif recommends bloom(10)-noL6 itself,
	// whose lookups are judged against its own Gets.
	r.CachePlans = []cachePlan{{Shape: "blockstore", Regime: "pressure4", Budget: 1000, Policy: plan4},
		{Shape: "state", Regime: "pressure1", Budget: 0, Policy: planBloomNoL6}}
	cell("blockstore", "pressure4", "get-absent", planBloomNoL6, 100, 1000, 1000)
	cell("blockstore", "pressure4", "lookup-absent", plan4, 5, 4000, 40) // 0.01 per op: 0.01x
	cell("blockstore", "pressure4", "lookup-absent", cuckooName(10), 50, 4000, 4000)
	cell("blockstore", "pressure4", "get-present", planBloomNoL6, 100, 1000, 1000)
	cell("blockstore", "pressure4", "lookup-present", plan4, 102, 1000, 1000)
	cell("state", "pressure4", "get-absent", planBloomNoL6, 100, 1000, 1000)
	cell("state", "pressure4", "lookup-absent", cuckooName(10), 8, 1000, 30) // 0.03x
	cell("state", "pressure4", "get-present", planBloomNoL6, 100, 1000, 1000)
	cell("state", "pressure4", "lookup-present", cuckooName(10), 105, 1000, 1000)
	// pressure1: cuckoo(10) 1.05x on absent keys, above 1.02 but inside the
	// Get cell's twin; 1.10x on present keys, above both twins.
	for _, p := range lookupPaths {
		cell("state", "pressure1", getPathOf(p), planBloomNoL6, 100, 1000, 1000)
		cell("state", "pressure1", p, planBloomNoL6, 101, 1000, 1000)
		cell("state", "pressure1", getPathOf(p), planBase, 100, 1000, 1000)
		cell("state", "pressure1", p, planBase, 100, 1000, 1000)
		cell("state", "pressure1", getPathOf(p), twinName, 100, 1000, 1000)
		cell("state", "pressure1", p, twinName, 100, 1000, 1000)
		x := map[string]float64{"lookup-absent": 105, "lookup-present": 110, "lookup-mix": 100}[p]
		cell("state", "pressure1", p, cuckooName(10), x, 1000, 1000)
	}
	k := cellKey{Shape: "state", Regime: "pressure1", Path: "get-absent", Threads: 1}
	r.Cells[k][twinName].NsPerOp = []float64{98e3, 108e3, 99e3, 107e3, 100e3, 106e3, 101e3, 105e3, 102e3, 104e3}
	if got, _ := r.lookupPolicy(lookupSubjects[1], "blockstore", "pressure4"); got != plan4 {
		t.Errorf("whatif's plan on blockstore %q, want %q", got, plan4)
	}
	if got, why := r.lookupPolicy(lookupSubjects[1], "state", "pressure4"); got != "" || why == "" {
		t.Errorf("whatif's plan on state %q (%s), want none", got, why)
	}
	vs := r.lookupVerdicts()
	if len(vs) != 8 {
		t.Fatalf("%d verdicts, want 8", len(vs))
	}
	// cuckoo(10)'s rows, then whatif's plan's: misses, and the shapes not
	// judged.
	for i, c := range []struct{ misses, unjudged []string }{
		{[]string{"blockstore/pressure4", "state/pressure4"}, nil},
		{[]string{"blockstore/pressure4/lookup-absent/t=1"}, nil},
		{[]string{"state/pressure4/lookup-present/t=1"}, []string{"blockstore/pressure4/lookup-present/t=1"}},
		{[]string{"state/pressure1/lookup-present/t=1"}, nil},
		{nil, []string{"state/pressure4:"}},
		{nil, []string{"state/pressure4:"}},
		{nil, []string{"state/pressure4:"}},
		{nil, nil},
	} {
		v := vs[i]
		var missed, unjudged []string
		for _, m := range v.Misses {
			missed = append(missed, m[:strings.Index(m, " ")])
		}
		for _, u := range v.Unjudged {
			unjudged = append(unjudged, u[:strings.Index(u, " ")])
		}
		if !v.Judged || !slices.Equal(missed, c.misses) || !slices.Equal(unjudged, c.unjudged) {
			t.Errorf("%s: judged %v, misses %q, not judged %q; want misses %v, not judged %v", v.Target, v.Judged, v.Misses, v.Unjudged, c.misses, c.unjudged)
		}
	}
	if !strings.Contains(vs[4].Detail, "blockstore/pressure4 "+plan4+" 0.0100") {
		t.Errorf("reads detail %q: blockstore's ratio not scaled to its operations", vs[4].Detail)
	}
}
