package plan

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// TestPlanNeverLoses fits plans on random LSM shapes, among them client
// LSMs whose base level is L5 and LSMs with every key in L6 under an L0
// planned as its flushes, at the bytes a random reference takes on them:
// by the model, the plan never takes more than the reference's bytes
// (unless they are below a live plan's least blocks, BelowLeast) and
// never has more false positives than the reference or than
// FilterPolicy(B), for any B, on the reference's levels within the same
// bytes. Short: 200 shapes; default 1,000; PEBBLE_CUCKOO_LONG=1: 20,000.
func TestPlanNeverLoses(t *testing.T) {
	r := rand.New(rand.NewPCG(pebbletest.Seed(t), 3))
	n := pebbletest.Scale(200, 1_000, 20_000)
	for i := range n {
		s := randomShape(r)
		switch i % 3 {
		case 1: // base level L5: L1 to L4 never formed
			for l := 1; l < 5; l++ {
				s.keys[l], s.tables[l], s.probes[l], s.sizes[l] = 0, 0, 0, nil
			}
		case 2: // every key in L6, L0 planned as two flushes
			for l := range 6 {
				s.keys[l], s.tables[l], s.probes[l], s.sizes[l] = 0, 0, 0, nil
			}
			s.flushedL0(uint64(50 + r.IntN(100_000)))
		}
		ref := randomReference(r)
		for _, live := range []bool{false, true} {
			cfg := Config{UseL6: s.probes[6] > 0}.withDefaults()
			m := cfg.model()
			m.live = live
			rep := s.report(cfg, ref, ref, m, 0)
			checkNeverLoses(t, i, s, cfg, ref, rep, live)
		}
	}
}

// checkNeverLoses checks one report against the simple configurations.
func checkNeverLoses(t *testing.T, i int, s shape, cfg Config, ref Plan, rep Report, live bool) {
	t.Helper()
	if !cfg.UseL6 {
		s.probes[6] = 0
	}
	if rep.Bytes > rep.Budget+1 && !rep.BelowLeast {
		t.Fatalf("shape %d (live %v): plan %v takes %d bytes over its budget of %d", i, live, rep.Plan, rep.Bytes, rep.Budget)
	}
	alts := []Plan{ref}
	for b := cuckoopolicy.MinBitsPerKey; b <= cfg.CapBitsPerKey; b++ {
		var q Plan
		for l, p := range ref {
			if p != nil {
				q[l] = cuckoopolicy.FilterPolicy(b)
			}
		}
		alts = append(alts, q)
	}
	for _, q := range alts {
		if live {
			q = liveFamily(q)
		}
		e := s.estimate(q)
		if e.Bytes > rep.Budget {
			continue
		}
		if rep.FalsePositives > e.FalsePositives*(1+1e-9)+1e-15 {
			t.Fatalf("shape %d (live %v), budget %d: plan %v meets %.6g false positives in %d bytes; %v meets %.6g in %d",
				i, live, rep.Budget, rep.Plan, rep.FalsePositives, rep.Bytes, q, e.FalsePositives, e.Bytes)
		}
	}
	if rep.Budget > 0 && math.IsNaN(rep.BudgetBitsPerKey) {
		t.Fatalf("shape %d: budget %d bytes, %v bits per key", i, rep.Budget, rep.BudgetBitsPerKey)
	}
}

// randomReference is bloom or cuckoo filters of a random budget on L0-L5
// (or every level), as services run them.
func randomReference(r *rand.Rand) Plan {
	b := 4 + r.IntN(13)
	var p pebble.FilterPolicy = bloom.FilterPolicy(b)
	if r.IntN(2) == 0 {
		p = cuckoopolicy.FilterPolicy(b)
	}
	ref := Plan{p, p, p, p, p, p, nil}
	if r.IntN(3) == 0 {
		ref[6] = p
	}
	return ref
}

// TestBudgetFollowsReference checks the budget rules on one shape: by
// default the reference's bytes, which grow with the keys; capped by
// MaxFilterBytes; MaxFilterBytes itself with Fixed.
func TestBudgetFollowsReference(t *testing.T) {
	s := uniform([7]uint64{4_000, 0, 0, 0, 0, 100_000, 1_000_000}, [7]int{2, 0, 0, 0, 0, 10, 100}, [7]float64{2, 0, 0, 0, 0, 1, 0})
	ref := defaultReference()
	want := s.estimate(ref).Bytes
	if got := (Config{}).budget(&s, ref); got != want || want == 0 {
		t.Errorf("default budget %d, want the reference's %d", got, want)
	}
	if got := (Config{MaxFilterBytes: want / 2}).budget(&s, ref); got != want/2 {
		t.Errorf("capped budget %d, want the cap %d", got, want/2)
	}
	if got := (Config{MaxFilterBytes: 2 * want, Fixed: true}).budget(&s, ref); got != 2*want {
		t.Errorf("fixed budget %d, want %d", got, 2*want)
	}
	grown := uniform([7]uint64{4_000, 0, 0, 0, 0, 800_000, 8_000_000}, [7]int{2, 0, 0, 0, 0, 80, 800}, [7]float64{2, 0, 0, 0, 0, 1, 0})
	if got := (Config{}).budget(&grown, ref); float64(got) < 7*float64(want) {
		t.Errorf("budget on an LSM grown 8x: %d, want about 8x the %d before", got, want)
	}
	// The reference: explicit, then the options, then the tables' filters,
	// then bloom(10) on L0-L5.
	c16 := cuckoopolicy.FilterPolicy(16)
	explicit := Plan{c16}
	cases := []struct {
		cfg       Config
		opts, cur Plan
		want      Plan
	}{
		{Config{Reference: &explicit}, ref, ref, explicit},
		{Config{}, Plan{1: c16}, ref, Plan{1: c16}},
		{Config{}, Plan{}, Plan{2: c16}, Plan{2: c16}},
		{Config{}, Plan{}, Plan{}, defaultReference()},
	}
	for _, c := range cases {
		if got := c.cfg.reference(c.opts, c.cur); got != c.want {
			t.Errorf("reference(%v, %v) with %+v: %v, want %v", c.opts, c.cur, c.cfg, got, c.want)
		}
	}
}
