package cuckoopolicy

import (
	"math"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
)

// This file is the one byte model: what a filter block of each policy costs
// on a table of n distinct keys, and the false-positive rate it gives there.
// The writer sizes its tables with config.buckets, and tableBuckets and
// blockBytes below call it, so a plan costs a candidate exactly as the writer
// will build it. Bloom's sizing is Pebble v2.1.7's (bloom.go, Finish).

// tableBuckets is the bucket count the static builder starts from for n
// distinct keys, and the fingerprint width: the writer's size, raised to one
// bucket per four keys.
func (c config) tableBuckets(n uint64) (f int, m uint64) {
	if n == 0 {
		return c.f, 0
	}
	k := int(min(n, math.MaxInt32))
	f = c.width(k)
	return f, max(c.buckets(f, k), (n+cuckoohash.Slots-1)/cuckoohash.Slots, 1)
}

// blockBytes is the filter block the writer appends for n distinct keys:
// the packed table and the short trailer (blockLen). The builder grows a
// table only when placement fails at the planned load, which the budget
// rule's loads leave room to avoid.
// A raw bloom block (rawBloom) is bloom.FilterPolicy's table itself.
func (c config) blockBytes(n uint64) float64 {
	if c.rawBloom(n) {
		return bloomBlockBytes(c.bitsPerKey, n)
	}
	f, m := c.tableBuckets(n)
	tb, _ := cuckoohash.TableBytes(m, uint(f), c.semi)
	return float64(blockLen(tb))
}

// rate is the false-positive rate of the block for n distinct keys: the
// cuckoo table's (cuckooRate), or bloom's for a raw bloom block.
func (c config) rate(n uint64) float64 {
	if c.rawBloom(n) {
		return bloomRate(c.bitsPerKey, n)
	}
	return c.cuckooRate(n)
}

// cuckooRate is the false-positive rate of the cuckoo table for n distinct
// keys: a lookup meets the fingerprints of two buckets at the table's load.
func (c config) cuckooRate(n uint64) float64 {
	f, m := c.tableBuckets(n)
	if m == 0 {
		return 0
	}
	return cuckooRate(f, float64(n)/(4*float64(m)))
}

// cuckooRate is the false-positive rate of a cuckoo table of f-bit
// fingerprints at the given load: a lookup meets the 8*load fingerprints of
// its two buckets.
func cuckooRate(f int, load float64) float64 {
	return -math.Expm1(8 * load * math.Log1p(-1/(math.Exp2(float64(f))-1)))
}

// rateExp[f] is -log1p(-1/(2^f-1)): cuckooRate(f, load) is
// 1-exp(-8*load*rateExp[f]).
var rateExp = func() (t [cuckoohash.MaxFingerprintBits + 1]float64) {
	for f := cuckoohash.MinFingerprintBits; f <= cuckoohash.MaxFingerprintBits; f++ {
		t[f] = -math.Log1p(-1 / (math.Exp2(float64(f)) - 1))
	}
	return t
}()

// Pebble's bloom block: whole 64-byte lines, an odd number of them, and a
// 5-byte trailer; k = 0.69*b probes (at least 1, at most 30) in one line.
const (
	bloomLineBits = 512
	bloomTrailer  = 5
)

func bloomLines(b int, n uint64) uint64 {
	if n == 0 {
		return 0
	}
	l := (n*uint64(b) + bloomLineBits - 1) / bloomLineBits
	if l%2 == 0 {
		l++
	}
	return l
}

// bloomBlockBytes is bloom.FilterPolicy(b)'s block for n distinct keys.
func bloomBlockBytes(b int, n uint64) float64 {
	return float64(bloomLines(b, n)*bloomLineBits/8 + bloomTrailer)
}

func bloomProbes(b int) int { return min(max(int(float64(b)*0.69), 1), 30) }

// bloomRate is bloom.FilterPolicy(b)'s false-positive rate on a table of n
// distinct keys: the measured curve (bloomFPR, large tables) scaled by what
// the line rounding gives small tables, from the blocked-bloom rate with
// Poisson-distributed keys per line.
func bloomRate(b int, n uint64) float64 {
	if n == 0 {
		return 0
	}
	lines := bloomLines(b, n)
	if lines >= 64 { // rounding adds under 1/64 of the bits
		return bloomFPR[b]
	}
	k := bloomProbes(b)
	r := bloomFPR[b] * blockedBloom(float64(n)/float64(lines), k) / blockedBloom(bloomLineBits/float64(b), k)
	// Pebble's 32-bit hash leaves a floor of about 0.24% whatever the bits.
	return min(max(r, bloomFPR[MaxBitsPerKey]), 1)
}

// blockedMemo keeps blockedBloom's answers: a plan asks for the same few
// hundred table sizes at every budget. It is emptied when it reaches
// blockedMemoMax entries, so a long-running live plan does not grow it
// without bound.
var blockedMemo struct {
	sync.Mutex
	m map[[2]float64]float64
}

const blockedMemoMax = 1 << 16

// blockedBloom is the false-positive rate of a blocked bloom filter of
// 512-bit lines holding lambda keys on average, k probes a key.
func blockedBloom(lambda float64, k int) float64 {
	key := [2]float64{lambda, float64(k)}
	blockedMemo.Lock()
	v, ok := blockedMemo.m[key]
	blockedMemo.Unlock()
	if ok {
		return v
	}
	q := math.Pow(1-1.0/bloomLineBits, float64(k)) // a line bit stays clear per key
	p := math.Exp(-lambda)                         // Poisson(j; lambda)
	clear := 1.0                                   // q^j
	sum, mass := 0.0, 0.0
	for j := 0; j < 4096 && (mass < 1-1e-12 || float64(j) < lambda); j++ {
		if j > 0 {
			p *= lambda / float64(j)
			clear *= q
		}
		sum += p * math.Pow(1-clear, float64(k))
		mass += p
	}
	blockedMemo.Lock()
	if blockedMemo.m == nil || len(blockedMemo.m) >= blockedMemoMax {
		blockedMemo.m = make(map[[2]float64]float64)
	}
	blockedMemo.m[key] = sum
	blockedMemo.Unlock()
	return sum
}

// tableCost returns a policy's block bytes and false-positive rate on a
// table of n distinct keys; a policy this model does not know (another
// family) costs as no filter. A nil policy and
// pebble.NoFilterPolicy cost nothing and pass every key.
func tableCost(p pebble.FilterPolicy, n uint64) (bytes, rate float64) {
	switch v := p.(type) {
	case nil:
		return 0, 1
	case FilterPolicy:
		c := v.config()
		return c.blockBytes(n), c.rate(n)
	case Policy:
		c := v.config()
		return c.blockBytes(n), c.rate(n)
	case unfilteredPolicy:
		return trailerLen, 1
	case bloom.FilterPolicy:
		b := max(int(v), 1)
		return bloomBlockBytes(b, n), bloomRate(min(b, MaxBitsPerKey), n)
	case bloomBlocks:
		if n == 0 {
			return trailerLen, 0
		}
		b, r := tableCost(bloom.FilterPolicy(v), n)
		return b + trailerLen, r
	}
	return 0, 1 // pebble.NoFilterPolicy, or a family the model does not know
}
