package workload

import (
	"bytes"
	"encoding/base32"
	"runtime"
	"strings"
	"testing"
)

// checkShapes checks what a run must have built: every database of a shape
// with the first one's LSM, every entry in exactly one table, the burst's
// and deep's L0 sublevels, deep's populated levels, and the lockstep loads.
func checkShapes(t *testing.T, res *Result) {
	t.Helper()
	r := &runner{cfg: res.Config}
	for _, s := range res.Shapes {
		if got := res.identicalShape(s); got != "yes" {
			t.Errorf("%s: identical LSMs: %s", s.Spec.Name, got)
		}
		var entries uint64
		for _, tb := range s.DBs[0].Sig.Tables {
			entries += tb.Entries
		}
		if want := uint64(r.entries(s.Spec)); entries != want {
			t.Errorf("%s: %d entries in the tables, want %d", s.Spec.Name, entries, want)
		}
		switch {
		case s.Spec.Burst && s.Layout.Sublevels < 2:
			t.Errorf("burst: %d L0 sublevels", s.Layout.Sublevels)
		case s.Spec.Deep:
			if err := checkDeep(s.Spec, s.Layout); err != nil {
				t.Errorf("deep: %v", err)
			}
		}
		for _, d := range s.DBs {
			if d.Shape.Sublevels != s.Layout.Sublevels {
				t.Errorf("%s %s: %d sublevels in db.Metrics, the layout has %d", s.Spec.Name, d.Cfg.Name, d.Shape.Sublevels, s.Layout.Sublevels)
			}
		}
		if !r.measuresLoading(s.Spec) {
			if len(s.Loads) != 0 {
				t.Errorf("%s: %d loads measured, want none", s.Spec.Name, len(s.Loads))
			}
			continue
		}
		if want := 2 * len(res.Config.Budgets) * res.Config.LoadRounds; len(s.Loads) != want {
			t.Errorf("%s: %d loads, want %d", s.Spec.Name, len(s.Loads), want)
		}
		for _, l := range s.Loads {
			if l.Written == 0 || l.Wall <= 0 || (runtime.GOOS == "linux" && l.CPU <= 0) {
				t.Errorf("%s %s round %d: %+v", s.Spec.Name, l.Policy, l.Round, l)
			}
		}
	}
}

// TestKeyspaces checks every key space against a map oracle: present keys
// distinct from each other and from absent ones, and each form as its
// shape describes it.
func TestKeyspaces(t *testing.T) {
	for _, kind := range []keyKind{keysPlain, keysMVCC, keysBlock, keysState} {
		ks := keyspace{seed: 7, kind: kind, n: 4000}
		seen := map[string]uint64{}
		for _, i := range []uint64{0, 1 << 40} {
			for j := i; j < i+4000; j++ {
				k := string(ks.key(nil, j))
				if prev, dup := seen[k]; dup {
					t.Fatalf("kind %d: keys %d and %d are both %x", kind, prev, j, k)
				}
				seen[k] = j
				checkForm(t, kind, []byte(k))
			}
		}
	}
	if n := (keyspace{kind: keysState}).valueLen(); n != stateValueLen {
		t.Errorf("state values are %d bytes", n)
	}
}

func checkForm(t *testing.T, kind keyKind, k []byte) {
	t.Helper()
	switch kind {
	case keysPlain:
		if len(k) != 16 {
			t.Fatalf("plain key of %d bytes", len(k))
		}
	case keysBlock:
		rest, ok := bytes.CutPrefix(k, []byte("/blocks/"))
		mh, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(string(rest))
		if !ok || err != nil || len(mh) != 34 || mh[0] != 0x12 || mh[1] != 0x20 {
			t.Fatalf("block key %q: not /blocks/ and a base32 sha2-256 multihash", k)
		}
	case keysState:
		if !(k[0] == 'a' && len(k) == 33 || k[0] == 'o' && len(k) == 65) {
			t.Fatalf("state key %x: neither an account nor a storage slot", k)
		}
	}
}

// TestDeepLevelKeys checks the deep shape's sizes: every level populated,
// a ratio of 10 between levels above the floor, and the total.
func TestDeepLevelKeys(t *testing.T) {
	for _, n := range []int{6000, 300_000, 3_000_000} {
		sub, levels := deepLevelKeys(n, 50)
		total := 0
		for l, k := range levels {
			total += k
			if k < 50 {
				t.Errorf("n=%d: L%d holds %d keys", n, l, k)
			}
		}
		if total != n || levels[0] != deepSublevels*sub {
			t.Errorf("n=%d: levels %v (sublevel %d) add up to %d", n, levels, sub, total)
		}
		for l := 2; l < 6; l++ {
			if levels[l] > 50 && levels[l+1]/levels[l] != 10 && levels[l+1]/levels[l] != 9 {
				t.Errorf("n=%d: L%d/L%d = %d/%d", n, l+1, l, levels[l+1], levels[l])
			}
		}
	}
}

// TestSublevels checks assignSublevels against hand-drawn cases.
func TestSublevels(t *testing.T) {
	ts := []tableSig{
		{Lo: "a", Hi: "z"}, // seq 1: sublevel 0
		{Lo: "b", Hi: "c"}, // seq 2: over the first
		{Lo: "d", Hi: "e"}, // seq 3: over the first, beside the second
		{Lo: "c", Hi: "d"}, // seq 4: over the second and third
		{Lo: "x", Hi: "y", Level: 1},
	}
	assignSublevels(ts, []uint64{1, 2, 3, 4, 0})
	for j, want := range []int{0, 1, 1, 2, 0} {
		if ts[j].Sublevel != want {
			t.Errorf("table %d: sublevel %d, want %d", j, ts[j].Sublevel, want)
		}
	}
}

// TestIdentical checks that a time ratio is refused where the two
// databases' LSMs differ, naming the level, and accepted where they do not.
func TestIdentical(t *testing.T) {
	sig := func(l5Hi string, seq uint64) lsmSig {
		return lsmSig{Sublevels: 1, Tables: []tableSig{
			{Level: 0, Lo: "a", Hi: "z", Entries: 10, Seq: 9},
			{Level: 5, Lo: "b", Hi: l5Hi, Entries: 20, Seq: seq},
			{Level: 6, Lo: "a", Hi: "z", Entries: 300, Seq: 1},
		}}
	}
	row := func(name string, s lsmSig) dbRow { return dbRow{Cfg: policyCfg{Name: name}, Sig: s} }
	r := &Result{Shapes: []shapeResult{{Spec: shapeSpec{Name: "steady"}, DBs: []dbRow{
		row("bloom(10)", sig("m", 5)), row("cuckoo(10)", sig("m", 5)),
		row("bloom(12)", sig("m", 5)), row("cuckoo(12)", sig("n", 5)),
		row("bloom(16)", sig("m", 5)), row("cuckoo(16)", sig("m", 6)),
	}}}}
	if ok, why := r.identical("steady", "cuckoo(10)", "bloom(10)"); !ok {
		t.Errorf("the same LSMs: not identical (%s)", why)
	}
	for _, b := range []string{"12", "16"} {
		if ok, why := r.identical("steady", "cuckoo("+b+")", "bloom("+b+")"); ok || !strings.Contains(why, "level 5") {
			t.Errorf("B=%s: identical %v (%s), want a difference on level 5", b, ok, why)
		}
	}
	if ok, _ := r.identical("burst", "cuckoo(10)", "bloom(10)"); ok {
		t.Error("a shape not run is identical")
	}
	if got := r.identicalShape(r.Shapes[0]); !strings.HasPrefix(got, "not identical") {
		t.Errorf("identicalShape: %q", got)
	}
}
