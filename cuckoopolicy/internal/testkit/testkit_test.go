package testkit

import (
	"math"
	"testing"
)

func TestFPR(t *testing.T) {
	for _, tc := range []struct {
		f    int
		load float64
	}{{4, 0.5}, {8, 0.95}, {12, 0.95}, {32, 0.97}} {
		direct := 1 - math.Pow(1-1/(math.Exp2(float64(tc.f))-1), 8*tc.load)
		approx := 8 * tc.load / math.Exp2(float64(tc.f))
		got := FPR(tc.f, tc.load)
		if math.Abs(got-direct) > 1e-12*direct+1e-15 {
			t.Errorf("FPR(%d, %v) = %g, direct formula %g", tc.f, tc.load, got, direct)
		}
		if tc.f >= 8 && math.Abs(got/approx-1) > 0.01 {
			t.Errorf("FPR(%d, %v) = %g, not near 8*load/2^f = %g", tc.f, tc.load, got, approx)
		}
	}
}

func TestKeys(t *testing.T) {
	var k Keys
	if k.Len() != 0 {
		t.Fatalf("zero Keys has %d keys", k.Len())
	}
	k.Add([]byte("a"))
	k.Add(nil)
	k.Add([]byte("bc"))
	if k.Len() != 3 || string(k.At(0)) != "a" || len(k.At(1)) != 0 || string(k.At(2)) != "bc" {
		t.Fatalf("Keys holds %d keys: %q %q %q", k.Len(), k.At(0), k.At(1), k.At(2))
	}
	s := SequentialKeys(3)
	if string(s.At(2)) != "key-00000002" {
		t.Fatalf("SequentialKeys: %q", s.At(2))
	}
	seen := map[string]bool{}
	r := RandomKeys(Rand(1, 2), 1000)
	for i := range r.Len() {
		seen[string(r.At(i))] = true
	}
	if len(seen) != 1000 {
		t.Fatalf("RandomKeys: %d distinct of 1000", len(seen))
	}
}

// TestLong checks that only PEBBLE_CUCKOO_LONG=1 asks for long runs, as in
// package pebbletest.
func TestLong(t *testing.T) {
	for v, want := range map[string]bool{"": false, "1": true, "0": false, "true": false} {
		t.Setenv("PEBBLE_CUCKOO_LONG", v)
		if got := Long(); got != want {
			t.Errorf("PEBBLE_CUCKOO_LONG=%q: Long() = %v, want %v", v, got, want)
		}
	}
}
