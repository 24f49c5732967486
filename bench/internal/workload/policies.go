package workload

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// Policy families.
const (
	famNone   = "none"
	famBloom  = "bloom"
	famCuckoo = "cuckoo"
	famPlan   = "plan" // a filter policy per level (the filter plans)
)

// policyCfg is one filter configuration of a measured database.
type policyCfg struct {
	Name     string
	Family   string
	B        int    // uniform budget; 0 when per-level
	Levels   [7]int // per-level budgets when PerLevel (0: no filter)
	PerLevel bool
	Tuned    *cuckoopolicy.Policy // an explicit cuckoo configuration, on every level
	TunedFor int                  // the bloom budget whose rate Tuned matches
	Plan     *plan.Plan           // famPlan: the policy of each level (nil: none)
}

func (p policyCfg) policy(b int) pebble.FilterPolicy {
	if p.Tuned != nil {
		return *p.Tuned
	}
	switch {
	case p.Family == famNone || b <= 0:
		return pebble.NoFilterPolicy
	case p.Family == famBloom:
		return bloom.FilterPolicy(b)
	default:
		return cuckoopolicy.FilterPolicy(b)
	}
}

// levels is the filter policy of each level, L0 to L6.
func (p policyCfg) levels() plan.Plan {
	var ls plan.Plan
	for l := range ls {
		switch {
		case p.Plan != nil:
			ls[l] = p.Plan[l]
		case p.PerLevel:
			ls[l] = p.policy(p.Levels[l])
		default:
			ls[l] = p.policy(p.B)
		}
		if ls[l] == nil {
			ls[l] = pebble.NoFilterPolicy
		}
	}
	return ls
}

// apply configures opts with the policy of each level: plan.Apply
// (which also registers the readers of bloom's and cuckoo's blocks).
func (p policyCfg) apply(opts *pebble.Options) {
	plan.Apply(opts, p.levels())
}

func (p policyCfg) levelsString() string {
	var s []string
	for l, b := range p.Levels {
		s = append(s, fmt.Sprintf("L%d:%d", l, b))
	}
	return strings.Join(s, " ")
}

// fprCurve is a false-positive rate per bits-per-key budget, measured
// in-process through the policy's NewWriter and MayContain.
type fprCurve struct {
	Family   string
	FPR      [33]float64 // index b; FPR[0] = 1 (no filter)
	Measured [33]bool    // false: extrapolated, too few false positives seen
	FP       [33]int
}

// minBudget is the smallest budget a family takes.
func minBudget(family string) int {
	if family == famCuckoo {
		return cuckoopolicy.MinBitsPerKey
	}
	return 1
}

// measureFPR builds each budget's filter over n random 16-byte keys and asks
// it about probes other random keys. Where fewer than 50 false positives are
// seen, a cuckoo rate is extrapolated from the last well-measured budget,
// halving per bit as its fingerprints grow by one bit; a bloom rate keeps the
// last well-measured value (Pebble's bloom stalls with its 32-bit hash).
func measureFPR(family string, n, probes int, seed uint64) fprCurve {
	c := fprCurve{Family: family}
	c.FPR[0], c.Measured[0] = 1, true
	keys := make([]byte, 16*n)
	for i := range n {
		binary.BigEndian.PutUint64(keys[16*i:], mix(seed^uint64(i)))
		binary.BigEndian.PutUint64(keys[16*i+8:], mix(seed+uint64(i)))
	}
	probe := make([]byte, 16)
	last := 0
	for b := 1; b <= 32; b++ {
		if b < minBudget(family) {
			c.FPR[b] = 1
			continue
		}
		p := policyCfg{Family: family}.policy(b)
		w := p.NewWriter(pebble.TableFilter)
		for i := range n {
			w.AddKey(keys[16*i : 16*i+16])
		}
		filter := w.Finish(nil)
		fp := 0
		for i := range probes {
			binary.BigEndian.PutUint64(probe, mix(^seed^uint64(i)))
			binary.BigEndian.PutUint64(probe[8:], mix(seed*3+uint64(i)))
			if p.MayContain(pebble.TableFilter, filter, probe) {
				fp++
			}
		}
		c.FP[b] = fp
		if fp >= 50 || last == 0 {
			c.FPR[b], c.Measured[b] = float64(fp)/float64(probes), true
			last = b
			continue
		}
		if family == famCuckoo {
			c.FPR[b] = c.FPR[last] * math.Pow(0.5, float64(b-last))
		} else {
			c.FPR[b] = c.FPR[last]
		}
	}
	return c
}

// matchBudget returns the smallest cuckoo budget whose measured rate is at
// most target, or 0 if none up to 32 is.
func matchBudget(cuckoo fprCurve, target float64) int {
	for b := cuckoopolicy.MinBitsPerKey; b <= 32; b++ {
		if cuckoo.FPR[b] <= target {
			return b
		}
	}
	return 0
}

// spreadInput is what the per-level spread needs to know about a loaded LSM.
type spreadInput struct {
	Keys   [7]uint64  // entries per level
	Probes [7]float64 // filter probes per Get into the level (0: never probed)
	Bits   float64    // total filter bits to spend
}

// spread gives each level a budget by Monkey's rule (Dayan, Athanassoulis,
// Idreos, SIGMOD 2017): minimise sum_i Probes_i * FPR(b_i) subject to
// sum_i Keys_i * b_i <= Bits. It is greedy: starting from no filter
// anywhere, it repeatedly moves the level whose next budget step buys the
// largest drop in expected false positives per bit spent, until no step fits
// or none lowers the sum. A level no Get probes (L6) keeps 0 bits. Greedy is
// exact for convex FPR curves; the measured curves are convex within noise.
func spread(c fprCurve, in spreadInput) (b [7]int) {
	left := in.Bits
	next := func(l int) int {
		if b[l] == 0 {
			return minBudget(c.Family)
		}
		return b[l] + 1
	}
	defer func() {
		// A table keeps its filter when a compaction moves it down a level
		// unchanged (L0 flushes move into the base level): a level no Get
		// probes now, above the first probed level, gets that level's budget,
		// so that what it hands down is filtered as its new level would be.
		first := -1
		for l := range 6 {
			if b[l] > 0 {
				first = l
				break
			}
		}
		for l := 0; l < first; l++ {
			b[l] = b[first]
		}
	}()
	for {
		best, bestGain := -1, 0.0
		for l := range b {
			if in.Probes[l] == 0 || in.Keys[l] == 0 {
				continue
			}
			nb := next(l)
			if nb > 32 {
				continue
			}
			cost := float64(in.Keys[l]) * float64(nb-b[l])
			if cost > left {
				continue
			}
			gain := in.Probes[l] * (c.FPR[b[l]] - c.FPR[nb]) / cost
			if gain > bestGain {
				best, bestGain = l, gain
			}
		}
		if best < 0 {
			return b
		}
		nb := next(best)
		left -= float64(in.Keys[best]) * float64(nb-b[best])
		b[best] = nb
	}
}

// keysAndProbes returns n random 16-byte keys in one buffer and a function
// that fills probe i, a key not among them.
func keysAndProbes(n int, seed uint64) ([]byte, func(dst []byte, i int)) {
	keys := make([]byte, 16*n)
	for i := range n {
		binary.BigEndian.PutUint64(keys[16*i:], mix(seed^uint64(i)))
		binary.BigEndian.PutUint64(keys[16*i+8:], mix(seed+uint64(i)))
	}
	return keys, func(dst []byte, i int) {
		binary.BigEndian.PutUint64(dst, mix(^seed^uint64(i)))
		binary.BigEndian.PutUint64(dst[8:], mix(seed*3+uint64(i)))
	}
}

// measureOne returns a policy's false-positive rate and filter bits per key
// on n keys and the given number of probes.
func measureOne(p pebble.FilterPolicy, n, probes int, seed uint64) (fpr, bitsPerKey float64) {
	keys, probe := keysAndProbes(n, seed)
	w := p.NewWriter(pebble.TableFilter)
	for i := range n {
		w.AddKey(keys[16*i : 16*i+16])
	}
	filter := w.Finish(nil)
	k := make([]byte, 16)
	fp := 0
	for i := range probes {
		probe(k, i)
		if p.MayContain(pebble.TableFilter, filter, k) {
			fp++
		}
	}
	return float64(fp) / float64(probes), 8 * float64(len(filter)) / float64(n)
}

// tunedMatch is the cuckoo configuration with the fewest bits per key whose
// measured rate is at most target: for each fingerprint width f, the load
// at which the rate 8*load/2^f (semi-sorted buckets) meets the target, so
// bits per key (f-1)/load; the best width is then measured, and its load
// lowered by 2% at a time until the measured rate is at or below target.
// It returns false if no configuration reaches target.
func tunedMatch(target float64, n, probes int, seed uint64) (cuckoopolicy.Policy, float64, float64, bool) {
	best, bestBits := cuckoopolicy.Policy{}, math.Inf(1)
	for f := 5; f <= 32; f++ {
		load := math.Min(0.95, target*math.Pow(2, float64(f))/8)
		if load < cuckoopolicy.MinLoadFactor {
			continue
		}
		if bits := float64(f-1) / load; bits < bestBits {
			best, bestBits = cuckoopolicy.Policy{FingerprintBits: f, SemiSort: true, LoadFactor: load}, bits
		}
	}
	if math.IsInf(bestBits, 1) {
		return best, 0, 0, false
	}
	for range 20 {
		fpr, bits := measureOne(best, n, probes, seed)
		if fpr <= target {
			return best, fpr, bits, true
		}
		best.LoadFactor *= 0.98
		if best.LoadFactor < cuckoopolicy.MinLoadFactor {
			break
		}
	}
	return best, 0, 0, false
}
