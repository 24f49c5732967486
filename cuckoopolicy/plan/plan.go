package plan

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/family"
)

// Plan gives each LSM level, L0 to L6, its filter policy; a nil entry means
// no filter. The zero Plan writes no filters. A Plan is a value: Apply
// copies what it needs.
//
// A plan may mix this package's policies, Pebble's bloom filter and any
// other pebble.FilterPolicy. Pebble stores each level's policy name, not its
// budget, in the OPTIONS file: parsed back with ParseHooks, every cuckoo level
// comes back as cuckoopolicy.FilterPolicy(10), every bloom level as bloom.FilterPolicy(10)
// and every level without a filter as pebble.NoFilterPolicy. Those read the
// tables' filters whatever their budgets, but write new tables at 10 bits per
// key: a program keeps its plan in code and applies it at every open.
type Plan [7]pebble.FilterPolicy

// String returns the plan level by level, runs of equal policies merged, as
// in "L0-L3 cuckoo(20) L4 cuckoo(16) L5 cuckoo(12) L6 none". cuckoopolicy.FilterPolicy(b)
// reads cuckoo(b), bloom.FilterPolicy(b) bloom(b), a nil entry or
// pebble.NoFilterPolicy none, a cuckoopolicy.Policy cuckoo{f=F semi load=L}; any other
// policy its Name.
func (p Plan) String() string {
	var b strings.Builder
	for l := 0; l < len(p); {
		e := l
		s := policyLabel(p[l])
		for e+1 < len(p) && policyLabel(p[e+1]) == s {
			e++
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if e > l {
			fmt.Fprintf(&b, "L%d-L%d %s", l, e, s)
		} else {
			fmt.Fprintf(&b, "L%d %s", l, s)
		}
		l = e + 1
	}
	return b.String()
}

func policyLabel(p pebble.FilterPolicy) string {
	switch v := p.(type) {
	case nil:
		return "none"
	case *liveLevel:
		return policyLabel(v.current())
	case cuckoopolicy.FilterPolicy:
		return fmt.Sprintf("cuckoo(%d)", int(v))
	case bloom.FilterPolicy:
		return fmt.Sprintf("bloom(%d)", int(v))
	case cuckoopolicy.Policy:
		return policyConfigLabel(v)
	case fmt.Stringer:
		if p.Name() == cuckoopolicy.PolicyName { // bloom blocks, unfiltered blocks
			return v.String()
		}
	}
	if p == pebble.NoFilterPolicy {
		return "none"
	}
	return p.Name()
}

func policyConfigLabel(p cuckoopolicy.Policy) string {
	f, semi, bits, load := family.Layout(p)
	layout := "plain"
	if semi {
		layout = "semi"
	}
	if bits > 0 {
		return fmt.Sprintf("cuckoo{f=%d %s %d bits}", f, layout, bits)
	}
	return fmt.Sprintf("cuckoo{f=%d %s load=%g}", f, layout, load)
}

// Apply configures opts to write each level's filters with that level's
// policy of p and to keep reading the filters tables already carry. It sets
// every level's cuckoopolicy.FilterPolicy (a nil entry becomes pebble.NoFilterPolicy: in
// Pebble a nil level policy copies the level above's, which is not "no
// filter") and pebble.TableFilter as its FilterType, and registers in
// opts.Filters, creating the map if it is nil and keeping every entry already
// there, each policy of the plan, Pebble's bloom filter (bloom.FilterPolicy(10),
// which reads bloom blocks of every budget) and this package's reader
// (cuckoopolicy.FilterPolicy(10), which reads every block this package writes). Why the
// readers matter is said at Apply.
//
// Apply is idempotent. It panics if opts is nil, as a programming error.
func Apply(opts *pebble.Options, p Plan) {
	if opts == nil {
		panic("plan: Apply with nil *pebble.Options")
	}
	for i := range opts.Levels {
		fp := p[i]
		if fp == nil {
			fp = pebble.NoFilterPolicy
		}
		opts.Levels[i].FilterPolicy = fp
		opts.Levels[i].FilterType = pebble.TableFilter
	}
	if opts.Filters == nil {
		opts.Filters = make(map[string]pebble.FilterPolicy)
	}
	readers := append(p[:len(p):len(p)], bloom.FilterPolicy(10), cuckoopolicy.FilterPolicy(10))
	for _, r := range readers {
		if r == nil || r == pebble.NoFilterPolicy {
			continue
		}
		if _, ok := opts.Filters[r.Name()]; !ok {
			opts.Filters[r.Name()] = r
		}
	}
}

// Progressive returns the preset plan for an LSM of the usual shape (each
// level about ten times the one above it, L6 holding about nine keys in ten):
//
//	L0-L4 cuckoo(16) L5 cuckoo(13) L6 cuckoo{f=8 semi load=0.97}
//
// It is the counterpart of the "progressive" bloom plan of Pebble's
// development branch (bloom at 16 bits per key on L0 to L3, 14 on L4, 10 on
// L5, 8 on L6): on an LSM of that shape it takes no more filter bytes, and
// an absent Get, which never reads L6 filters, meets far fewer false
// positives, as a cuckoo filter halves its rate with every bit where
// Pebble's bloom filter stalls. L6 pays for the upper levels' bits with
// fewer bits per key than bloom(8): lookups that read L6 filters
// (IterOptions.UseL6Filters) and little else can meet more false positives
// than under the bloom plan, and on an LSM whose L6 holds a smaller share of
// the keys (many versions per key) it takes a few percent more bytes.
// For another shape or memory, Fit fits a plan to the database.
func Progressive() Plan {
	return Plan{
		cuckoopolicy.FilterPolicy(16), cuckoopolicy.FilterPolicy(16), cuckoopolicy.FilterPolicy(16), cuckoopolicy.FilterPolicy(16), cuckoopolicy.FilterPolicy(16),
		cuckoopolicy.FilterPolicy(13),
		cuckoopolicy.Policy{FingerprintBits: 8, SemiSort: true, LoadFactor: 0.97},
	}
}
