package pebbletest

import (
	"math"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// FPRBound is a statistical upper bound on the number of false positives
// among n absent probes of a cuckoo filter block described by info: each
// probe compares its fingerprint with at most 8*load occupied slots, each
// matching with probability 1/(2^f-1), so the expected count is at most
// lambda = n*8*load/(2^f-1); the bound adds 5 standard deviations (Poisson)
// and a small constant for tiny lambdas.
func FPRBound(info cuckoopolicy.Info, n int) (lambda, bound float64) {
	if info.Buckets <= 0 || info.FingerprintBits <= 0 {
		return math.Inf(1), math.Inf(1)
	}
	load := float64(info.Keys) / float64(4*info.Buckets)
	lambda = float64(n) * 8 * load / (math.Exp2(float64(info.FingerprintBits)) - 1)
	return lambda, lambda + 5*math.Sqrt(lambda) + 5
}
