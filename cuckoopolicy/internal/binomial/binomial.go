// Package binomial gives exact binomial tail probabilities, for the tests
// that hold measured false-positive counts against theory: at the few false
// positives expected from wide fingerprints a normal approximation misjudges
// the tails (with 1.15 expected, 9 or more happen about once in 290,000
// draws; a bound of five normal standard deviations rejects them).
package binomial

import "math"

// Tails returns P(X <= k) and P(X >= k) for X ~ Binomial(n, p), summed term
// by term in log space. Terms more than 40 standard deviations (and 20) from
// the mean, below 1e-300, are left out unless k is among them.
func Tails(n int, p float64, k int) (le, ge float64) {
	switch {
	case p <= 0:
		return 1, step(k <= 0)
	case p >= 1:
		return step(k >= n), 1
	}
	lf := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	ln, lp, lq := lf(n), math.Log(p), math.Log1p(-p)
	mean, w := float64(n)*p, 40*math.Sqrt(float64(n)*p*(1-p))+20
	from := max(0, min(k, int(mean-w)))
	to := min(n, max(k, int(mean+w)))
	for i := from; i <= to; i++ {
		q := math.Exp(ln - lf(i) - lf(n-i) + float64(i)*lp + float64(n-i)*lq)
		if i <= k {
			le += q
		}
		if i >= k {
			ge += q
		}
	}
	return le, ge
}

// Unlikely reports whether k is in a tail of Binomial(n, p) of probability
// below alpha, on either side.
func Unlikely(n int, p float64, k int, alpha float64) bool {
	le, ge := Tails(n, p, k)
	return le < alpha || ge < alpha
}

func step(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
