package growth

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// tiny is a scenario of seconds, scaled down so that it still has levels
// above L6.
func tiny(t *testing.T) Config {
	return Config{
		Dir: t.TempDir(), Keys: 5_000, Doublings: 2, Absent: 2_000, Seed: 7,
		MemTableSize: 256 << 10, LBaseMaxBytes: 64 << 10, TargetFileSize: 32 << 10,
		RefitInterval: 100 * time.Millisecond, Settle: 20 * time.Second,
	}
}

func TestRunTiny(t *testing.T) {
	r, err := Run(context.Background(), tiny(t))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var md bytes.Buffer
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", md.String())
	if len(r.Checkpoints) != 3 {
		t.Fatalf("%d checkpoints, want 3", len(r.Checkpoints))
	}
	for p, v := range r.Verified {
		if v.Keys != 20_000 || v.Lost != 0 || v.Unexpected != 0 || r.absentFound(p) != 0 {
			t.Errorf("%s: %+v, %d absent keys found", policyNames[p], v, r.absentFound(p))
		}
	}
	for i, cp := range r.Checkpoints {
		if want := 1 << i; cp.Growth != want || cp.Keys != 5_000*want {
			t.Errorf("checkpoint %d: growth %d keys %d", i, cp.Growth, cp.Keys)
		}
		section := fmt.Sprintf("## %dx: %d keys\n", cp.Growth, cp.Keys)
		if !strings.Contains(md.String(), section) {
			t.Errorf("report lacks %q", section)
		}
		for p, row := range cp.Rows {
			if row.Policy != policyNames[p] || row.Absent.Gets != 2_000 {
				t.Errorf("%dx: row %d is %q with %d Gets", cp.Growth, p, row.Policy, row.Absent.Gets)
			}
			line := fmt.Sprintf("| %s | %d | %d |", row.Policy, cp.Keys, row.FilterBytes)
			if !strings.Contains(md.String(), line) {
				t.Errorf("report lacks %q", line)
			}
		}
	}
	// The live plan's bytes against its ceiling and its false positives
	// against a fresh plan are what the scenario measures, not invariants:
	// its report says where they fall short (bench/sample/growth.md).
}

// TestAbsentCount pins how absentGets counts on L0 tables it can predict:
// automatic compactions off, so each flush stays an L0 table spanning the
// whole key space. Without filters every Get reads one data block per table
// and Pebble counts no filter; with bloom(10) every table's filter is
// consulted once per Get, and the misses are the reads.
func TestAbsentCount(t *testing.T) {
	const tables, gets = 3, 1_000
	for _, tc := range []struct {
		name   string
		policy pebble.FilterPolicy
	}{{"none", pebble.NoFilterPolicy}, {"bloom(10)", bloom.FilterPolicy(10)}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Absent: gets, Seed: 3}.withDefaults()
			s := &scenario{cfg: cfg, stream: newStream(cfg)}
			opts := &pebble.Options{DisableAutomaticCompactions: true, Logger: quietLogger{}}
			cuckoopolicy.Apply(opts, tc.policy)
			db, err := pebble.Open(t.TempDir(), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			st := &store{db: db, opts: opts}
			for i := range tables {
				if err := st.write(context.Background(), s.stream, i*2_000, (i+1)*2_000, 1_000); err != nil {
					t.Fatal(err)
				}
				if err := db.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			s.stores[live] = st
			row, err := s.measure(st)
			if err != nil {
				t.Fatal(err)
			}
			a := row.Absent
			t.Logf("%+v", a)
			if row.Tables[0] != tables || a.Found != 0 {
				t.Fatalf("%d L0 tables, %d absent keys found", row.Tables[0], a.Found)
			}
			// A few absent keys fall outside a table's bounds.
			probes := a.Unfiltered + a.FilterHits + a.FilterMisses
			if probes < tables*gets*98/100 || probes > tables*gets {
				t.Errorf("%d probes, want about %d", probes, tables*gets)
			}
			if tc.policy == pebble.NoFilterPolicy && a.FilterHits+a.FilterMisses != 0 {
				t.Errorf("filters counted on tables without one: %+v", a)
			}
			if tc.policy != pebble.NoFilterPolicy && (a.Unfiltered != 0 || a.Reads() > probes/20) {
				t.Errorf("bloom(10): %+v", a)
			}
		})
	}
}

// TestRunReferenceTiny runs the reference scenario at a size of seconds and
// checks what it must do whatever the figures: every key read back from
// every database, no absent key found, a sample per batch, and each
// checkpoint's rows in the report.
func TestRunReferenceTiny(t *testing.T) {
	cfg := tiny(t)
	cfg.Doublings, cfg.Batch, cfg.Absent, cfg.MaxAbsent, cfg.Smoke = 3, 1_000, 1_000, 3_000, true
	r, err := RunReference(context.Background(), cfg)
	if err != nil {
		t.Fatalf("RunReference: %v", err)
	}
	var md bytes.Buffer
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", md.String())
	if len(r.Checkpoints) != 4 || len(r.Samples) != 40 {
		t.Fatalf("%d checkpoints, %d samples; want 4 and 40", len(r.Checkpoints), len(r.Samples))
	}
	for i, v := range r.Verified {
		if v.Keys != 40_000 || v.Found != v.Keys || v.Lost != 0 || v.Unexpected != 0 || r.absentFound(i) != 0 {
			t.Errorf("%s: %+v, %d absent keys found", r.Names[i], v, r.absentFound(i))
		}
	}
	for k, cp := range r.Checkpoints {
		if want := 1 << k; cp.Growth != want || cp.Keys != 5_000*want {
			t.Errorf("checkpoint %d: growth %d keys %d", k, cp.Growth, cp.Keys)
		}
		for i, row := range cp.Rows {
			a := row.Absent
			if a.Gets < cfg.Absent || a.Gets > cfg.MaxAbsent || a.Reads() < int64(cfg.FalsePositives) && a.Gets != cfg.MaxAbsent {
				t.Errorf("%dx %s: %d Gets for %d FP reads", cp.Growth, r.Names[i], a.Gets, a.Reads())
			}
			if row.FilterBytes == 0 {
				t.Errorf("%dx %s: no filter bytes on L0-L5", cp.Growth, r.Names[i])
			}
			line := fmt.Sprintf("| %s | %d | %d | %d |", r.Names[i], row.FilterBytes, upperEntries(row), a.Gets)
			if !strings.Contains(md.String(), line) {
				t.Errorf("report lacks %q", line)
			}
		}
		for i, st := range cp.Live {
			if st.Refits == 0 || st.Budget == 0 || st.FitError != nil {
				t.Errorf("%dx %s: %d refits, budget %d, error %v", cp.Growth, r.Names[liveDefault+i], st.Refits, st.Budget, st.FitError)
			}
		}
	}
	for _, s := range []string{"## Settled, at each doubling", "## Sampled while writing", "## Keys read back"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if strings.Contains(md.String(), " met") {
		t.Errorf("a smoke run's report gives verdicts")
	}
}
