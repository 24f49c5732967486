package binomial

import (
	"math"
	"testing"
)

// TestTails checks Tails against sums of exact binomial terms computed with
// integer coefficients, and the edge cases.
func TestTails(t *testing.T) {
	for _, c := range []struct {
		n int
		p float64
	}{{10, 0.5}, {20, 0.1}, {30, 0.93}, {1, 0.25}} {
		for k := -1; k <= c.n+1; k++ {
			var le, ge float64
			coef := 1.0 // C(n, i)
			for i := 0; i <= c.n; i++ {
				q := coef * math.Pow(c.p, float64(i)) * math.Pow(1-c.p, float64(c.n-i))
				if i <= k {
					le += q
				}
				if i >= k {
					ge += q
				}
				coef = coef * float64(c.n-i) / float64(i+1)
			}
			gle, gge := Tails(c.n, c.p, k)
			if math.Abs(gle-le) > 1e-9 || math.Abs(gge-ge) > 1e-9 {
				t.Errorf("Tails(%d, %v, %d) = %v, %v; want %v, %v", c.n, c.p, k, gle, gge, le, ge)
			}
		}
	}
	if le, ge := Tails(100, 0, 0); le != 1 || ge != 1 {
		t.Errorf("p=0, k=0: %v %v", le, ge)
	}
	if le, ge := Tails(100, 0, 1); le != 1 || ge != 0 {
		t.Errorf("p=0, k=1: %v %v", le, ge)
	}
	if le, ge := Tails(100, 1, 99); le != 0 || ge != 1 {
		t.Errorf("p=1, k=99: %v %v", le, ge)
	}
	// The case that made the tests use exact tails: 9 false positives with
	// 1.15 expected is rare (3.5e-6) but not an error at 1e-9.
	if _, ge := Tails(20000, 1.15/20000, 9); ge < 3e-6 || ge > 4e-6 || Unlikely(20000, 1.15/20000, 9, 1e-9) {
		t.Errorf("P(X >= 9) with 1.15 expected: %v", ge)
	}
	if !Unlikely(20000, 1.15/20000, 20, 1e-9) || !Unlikely(1000000, 1e-3, 800, 1e-9) {
		t.Error("far tails not flagged")
	}
}
