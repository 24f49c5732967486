package filters

import (
	"math"
	"testing"

	pbloom "github.com/cockroachdb/pebble/v2/bloom"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/keys"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// TestKinds builds every kind over the same keys: no member is answered
// absent, Count agrees with Contains key by key, and CountStream with Count.
func TestKinds(t *testing.T) {
	const n = 5000
	members := keys.Gen{Seed: 1, Width: keys.ShortLen}
	absent := keys.Gen{Seed: 2, Width: keys.ShortLen}
	q := absent.Set(0, 20000)
	for _, k := range []Kind{
		PolicyKind("cuckoo", cuckoopolicy.FilterPolicy(10)),
		PolicyKind("bloom", pbloom.FilterPolicy(10)),
		PolicyKind("plain", cuckoopolicy.Policy{FingerprintBits: 12}),
		FuseKind[uint8]("fuse8"),
		FuseKind[uint16]("fuse16"),
		StdBloomKind(10),
	} {
		f, err := k.Build(members.First(n))
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		if got := f.Count(members.Set(0, n)); got != n {
			t.Errorf("%s: %d of %d members found", k.Name, got, n)
		}
		hits := f.Count(q)
		if each := CountEach(f, q); each != hits {
			t.Errorf("%s: Count %d, Contains one by one %d", k.Name, hits, each)
		}
		if stream := CountStream(f, absent, q.Len()); stream != hits {
			t.Errorf("%s: Count %d, CountStream %d", k.Name, hits, stream)
		}
		if hits > q.Len()/20 || f.Bytes() <= 0 {
			t.Errorf("%s: %d false positives of %d, %d bytes", k.Name, hits, q.Len(), f.Bytes())
		}
	}
}

func TestIdealBloomFPR(t *testing.T) {
	if math.Abs(IdealBloomFPR(10)-0.0082) > 0.0002 {
		t.Errorf("ideal bloom at 10 bits: %v", IdealBloomFPR(10))
	}
}
