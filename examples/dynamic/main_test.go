package main

import "testing"

// TestRun runs the example on a short stream for each layout. run checks
// itself against an exact set: it fails on a windowed ID the filter misses,
// an expired ID it cannot delete, or a checkpoint that does not restore.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		f    int
		semi bool
	}{{12, false}, {13, true}, {8, false}} {
		if err := run(60_000, 5_000, 0.2, tc.f, tc.semi, 7); err != nil {
			t.Errorf("f=%d semi=%v: %v", tc.f, tc.semi, err)
		}
	}
	for _, bad := range [][2]int{{0, 10}, {10, 0}} {
		if err := run(bad[0], bad[1], 0.1, 12, false, 1); err == nil {
			t.Errorf("run(events=%d, window=%d) accepted", bad[0], bad[1])
		}
	}
	if err := run(10, 10, 1.5, 12, false, 1); err == nil {
		t.Error("run accepted a redelivery share above 1")
	}
	if err := run(10, 10, 0.1, 40, false, 1); err == nil {
		t.Error("run accepted 40-bit fingerprints")
	}
}
