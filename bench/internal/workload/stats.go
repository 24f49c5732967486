package workload

import (
	"math"
	"slices"
)

// ratioStat is the median of paired ratios with a distribution-free
// confidence interval for it.
type ratioStat struct {
	N        int
	Median   float64
	Lo, Hi   float64
	Coverage float64 // the interval's exact coverage (sign test), e.g. 0.979 for 10 pairs
}

// pairedRatios returns x[i]/base[i] for the pairs where both exist.
func pairedRatios(x, base []float64) []float64 {
	var r []float64
	for i := range min(len(x), len(base)) {
		if base[i] > 0 {
			r = append(r, x[i]/base[i])
		}
	}
	return r
}

// medianCI returns the median of r and the sign-test interval
// [r(k), r(n+1-k)] of the order statistics, with the largest k whose
// two-sided coverage is at least 95%; with too few values for that
// (n < 6), the interval is [min, max] and its coverage is below 95%, which
// Coverage says.
func medianCI(r []float64) ratioStat {
	n := len(r)
	if n == 0 {
		return ratioStat{Median: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	s := slices.Clone(r)
	slices.Sort(s)
	st := ratioStat{N: n}
	if n%2 == 1 {
		st.Median = s[n/2]
	} else {
		st.Median = (s[n/2-1] + s[n/2]) / 2
	}
	// tail(k) = P(Bin(n, 1/2) <= k-1).
	tail := func(k int) float64 {
		p := 0.0
		for i := 0; i < k; i++ {
			p += binom(n, i)
		}
		return p / math.Pow(2, float64(n))
	}
	k := 1
	for k+1 <= (n+1)/2 && tail(k+1) <= 0.025 {
		k++
	}
	st.Lo, st.Hi = s[k-1], s[n-k]
	st.Coverage = 1 - 2*tail(k)
	return st
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

func median(x []float64) float64 { return medianCI(x).Median }

// rateRatioCI returns a 95% interval for the ratio of two event rates seen
// as x and y events in the same number of operations. Given x+y events, x
// is binomial with p = ratio/(1+ratio); Wilson's score interval for p is
// mapped back to the ratio. hi is +Inf when y is 0.
func rateRatioCI(x, y float64) (lo, hi float64) {
	n := x + y
	if n == 0 {
		return 0, math.Inf(1)
	}
	const z = 1.959964
	p := x / n
	den := 1 + z*z/n
	center := (p + z*z/(2*n)) / den
	half := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / den
	odds := func(q float64) float64 {
		if q >= 1 {
			return math.Inf(1)
		}
		return max(q, 0) / (1 - q)
	}
	return odds(center - half), odds(center + half)
}
