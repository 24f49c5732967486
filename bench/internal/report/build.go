package report

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	pbloom "github.com/cockroachdb/pebble/v2/bloom"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/filters"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/keys"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/markdown"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/progress"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// buildPoint is the cost of building one filter.
type buildPoint struct {
	Kind          string
	KeyLen        int
	Keys          int
	KeysPerSec    float64 // warm: a build after a GC and one build of the same filter
	NsPerKey      float64
	ColdNsPerKey  float64 // cold: the first build after a GC and the other filters' builds
	AllocPerKey   float64 // runtime.MemStats.TotalAlloc delta / keys, output included; the most of any build
	WarmAlloc     float64 // the least of any build (pools and reused buffers warm)
	TempPerKey    float64 // AllocPerKey less the output filter's bytes per key
	OutBitsPerKey float64
}

// buildResult is the build experiment.
type buildResult struct {
	Points []buildPoint
	BySize []sizePoint // FilterPolicy(B) against bloom(B), paired, by table size
}

// Get returns the point for (kind, key length).
func (r *buildResult) get(kind string, keyLen int) (buildPoint, bool) {
	for _, p := range r.Points {
		if p.Kind == kind && p.KeyLen == keyLen {
			return p, true
		}
	}
	return buildPoint{}, false
}

// kindHighLoadBuild is the paper's semi-sorted configuration near the load
// threshold (12.3 bits a key): most of its build is eviction walks. Its
// builds are set against bloom(12).
const kindHighLoadBuild = "cuckoo Policy{f=13 semi, load 0.975}"

// buildBase names the bloom filter a build is compared with, or "" for
// Pebble's bloom filters themselves: bloom(12) for the rows near 12 bits per
// key (the high-load build, plain Policy{f=12} and the dynamic filter's
// inserts at f=12 and 13), bloom(16) for the 16-bit budgets, and bloom(10)
// for every other row.
func buildBase(kind string) string {
	switch {
	case strings.HasPrefix(kind, "pebble bloom"):
		return ""
	case kind == kindHighLoadBuild || strings.Contains(kind, "f=12") || strings.Contains(kind, "f=13"):
		return "pebble bloom(12)"
	case strings.Contains(kind, "16") && !strings.Contains(kind, "fuse"):
		return "pebble bloom(16)"
	}
	return "pebble bloom(10)"
}

// BuildKinds are the filters whose build cost is measured.
func buildKinds() []filters.Kind {
	return []filters.Kind{
		filters.PolicyKind("cuckoo FilterPolicy(10)", cuckoopolicy.FilterPolicy(10)),
		filters.PolicyKind("pebble bloom(10)", pbloom.FilterPolicy(10)),
		filters.PolicyKind("cuckoo FilterPolicy(16)", cuckoopolicy.FilterPolicy(16)),
		filters.PolicyKind("pebble bloom(16)", pbloom.FilterPolicy(16)),
		filters.PolicyKind("cuckoo plain Policy{f=12}", cuckoopolicy.Policy{FingerprintBits: 12}),
		filters.PolicyKind(kindHighLoadBuild, cuckoopolicy.Policy{FingerprintBits: 13, SemiSort: true, LoadFactor: 0.975}),
		filters.PolicyKind("pebble bloom(12)", pbloom.FilterPolicy(12)),
		filters.FuseKind[uint8]("binary fuse 8 (incl. xxhash of keys)"),
	}
}

// measureBuild times filter builds over keys held in one flat buffer (so key
// generation is not timed) and measures the bytes allocated meanwhile:
// runtime.MemStats.TotalAlloc after minus before, divided by the keys. It
// counts every allocation of the build, freed or not, including the output;
// TempPerKey subtracts the output. It is an upper bound on the peak temporary
// memory, which is what a compaction pays. Five builds of each kind run
// interleaved; the fastest time is kept, and the most bytes allocated (the
// first build, before pools and buffers are warm) beside the least.
func measureBuild(c Config, pr *progress.Printer) (*buildResult, error) {
	r := &buildResult{}
	for _, width := range []int{keys.ShortLen, keys.LongLen} {
		n := c.BuildKeys
		if width > keys.ShortLen {
			n = max(1, n/4) // long keys: a quarter of the keys, same order of bytes
		}
		ks := keys.Gen{Seed: c.Seed*1000 + 31, Width: width}.Set(0, n)
		kinds := append(buildKinds(),
			dynamicBuildKind("cuckoo.Filter Insert (f=12)", dynConfig{FingerprintBits: 12}),
			dynamicBuildKind("cuckoo.Filter Insert (f=13 semi-sorted)", dynConfig{FingerprintBits: 13, SemiSort: true}))
		best := make([]buildPoint, len(kinds))
		for rep := range 5 { // interleaved, so noise spreads over all kinds
			for i, k := range kinds {
				pr.Stage("build %d/5: %s, %d keys of %d bytes", rep+1, k.Name, n, width)
				// A cold build after two GCs, then a warm one after one:
				// the first pays for memory the other filters' builds left
				// behind (page faults on fresh pages, pools emptied: one GC
				// moves pooled objects to the victim cache, the second
				// drops them; with one, a cuckoo build found the pools the
				// previous cuckoo kind had filled), the second reuses what
				// the first left (the heap keeps its pages).
				for warm := range 2 {
					runtime.GC()
					if warm == 0 {
						runtime.GC()
					}
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					start := time.Now()
					f, err := k.Build(ks)
					el := time.Since(start)
					runtime.ReadMemStats(&after)
					if err != nil {
						return nil, fmt.Errorf("build %s: %w", k.Name, err)
					}
					ns := float64(el.Nanoseconds()) / float64(n)
					alloc := float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
					out := float64(f.Bytes()) / float64(n)
					p := &best[i]
					if rep == 0 && warm == 0 {
						*p = buildPoint{Kind: k.Name, KeyLen: width, Keys: n, OutBitsPerKey: 8 * out,
							NsPerKey: math.Inf(1), ColdNsPerKey: math.Inf(1), WarmAlloc: math.Inf(1)}
					}
					if warm == 1 {
						p.NsPerKey = min(p.NsPerKey, ns)
						p.KeysPerSec = 1e9 / p.NsPerKey
					} else {
						p.ColdNsPerKey = min(p.ColdNsPerKey, ns)
					}
					if alloc > p.AllocPerKey {
						p.AllocPerKey, p.TempPerKey = alloc, alloc-out
					}
					p.WarmAlloc = min(p.WarmAlloc, alloc)
				}
			}
		}
		r.Points = append(r.Points, best...)
	}
	r.BySize = measureBuildSizes(c, pr)
	return r, nil
}

// dynamicBuildKind inserts every key into a cuckoo.Filter of capacity n.
func dynamicBuildKind(name string, cfg dynConfig) filters.Kind {
	return filters.Kind{Name: name, Build: func(ks keys.Seq) (filters.Filter, error) {
		d, err := newDynamic(ks.Len(), cfg)
		if err != nil {
			return nil, err
		}
		ks.Each(func(k []byte) {
			if err == nil {
				err = d.Insert(k)
			}
		})
		if err != nil {
			return nil, err
		}
		return dynAsFilter{d}, nil
	}}
}

// dynAsFilter presents a dynamic filter as a Filter.
type dynAsFilter struct{ d dynFilter }

func (f dynAsFilter) Contains(key []byte) bool { return f.d.Contains(key) }
func (f dynAsFilter) Count(q *keys.Set) int    { return filters.CountEach(f, q) }
func (f dynAsFilter) Bytes() int               { return int(f.d.bits() / 8) }

// writeBuild writes section 4: the build table, and the builds of the lookup
// section's filters.
func (r *report) writeBuild(w *markdown.Doc) {
	if !w.Section("4. Build throughput and temporary memory", r.Build != nil) {
		return
	}
	w.WriteString("Keys come from one flat buffer (generation not timed); the writer's AddKey for every key, then " +
		"Finish. Five rounds interleave the filters; in each, a filter is built twice: *cold* is the first " +
		"of the two, after two GCs, which finds the memory the other filters' builds left (fresh pages to fault in, pools the GCs " +
		"emptied), *warm* the second, after one GC, which reuses what the first left, as back-to-back builds of sstables do. " +
		"Both are the fastest of the 5 rounds; keys/s, ns/key and the throughput ratio are warm. A filter that " +
		"allocates more per key pays more when cold. *alloc B/key* is runtime.MemStats.TotalAlloc after minus before, over the keys: every " +
		"byte allocated during the build, freed or not, the output included, for the build that allocated most " +
		"(the first: pools cold), and after the slash for the one that allocated least (pools warm); *temp B/key* " +
		"subtracts the output from the first. It bounds the build's peak temporary memory from above. Binary fuse includes hashing the keys into a " +
		"[]uint64 (8 bytes a key), which it needs. Each filter's ratio is to the Pebble bloom filter nearest " +
		"in bits per key, named beside it: bloom(12) for plain f=12, the dynamic filter's inserts and the paper's " +
		"configuration near the load threshold, " + kindHighLoadBuild + " (12.3 bits a key, most of its " +
		"build in eviction walks).\n\n")
	var rows [][]string
	for _, p := range r.Build.Points {
		ratio, cold := "", ""
		if bp, ok := r.Build.get(buildBase(p.Kind), p.KeyLen); ok {
			ratio = fmt.Sprintf("%.2fx vs %s", p.KeysPerSec/bp.KeysPerSec, bp.Kind)
			cold = fmt.Sprintf(" (%.2fx)", bp.ColdNsPerKey/p.ColdNsPerKey)
		}
		rows = append(rows, []string{p.Kind, fmt.Sprint(p.KeyLen), fmt.Sprint(p.Keys),
			fmt.Sprintf("%.2fM", p.KeysPerSec/1e6), f1(p.NsPerKey), ratio, f1(p.ColdNsPerKey) + cold,
			f1(p.AllocPerKey) + " / " + f1(p.WarmAlloc), f1(p.TempPerKey), f2(p.OutBitsPerKey)})
	}
	w.Table([]string{"filter", "key bytes", "keys", "keys/s", "ns/key", "throughput ratio", "cold ns/key (ratio)", "alloc B/key (most / least)", "temp B/key", "output bits/key"}, rows)
	r.writeBuildSizes(w)
	if r.Lookup != nil && len(r.Lookup.Builds) > 0 {
		w.WriteString("Builds of the lookup section's filters, one run each, key generation included " +
			"(the beyond-cache ones show how build cost grows with the table):\n\n")
		rows = nil
		for _, p := range r.Lookup.Builds {
			ratio := ""
			for _, q := range r.Lookup.Builds {
				if q.Kind == kindBloom && q.Keys == p.Keys && p.Kind != kindBloom {
					ratio = fmt.Sprintf("%.2fx", p.KeysPerSec/q.KeysPerSec)
				}
			}
			rows = append(rows, []string{p.Kind, fmt.Sprint(p.Keys), fmt.Sprintf("%.2fM", p.KeysPerSec/1e6), f1(p.NsPerKey), ratio, f2(p.OutBitsPerKey)})
		}
		w.Table([]string{"filter", "keys", "keys/s", "ns/key", "throughput vs pebble bloom", "output bits/key"}, rows)
	}
}

// buildVerdicts sets the budgeted builds and the build near the load
// threshold beside Pebble's bloom.
func (r *report) buildVerdicts() []string {
	bd := r.Build
	if bd == nil {
		return nil
	}
	var v []string
	for _, kl := range []int{keys.ShortLen, keys.LongLen} {
		c, ok1 := bd.get("cuckoo FilterPolicy(10)", kl)
		bl, ok2 := bd.get("pebble bloom(10)", kl)
		if ok1 && ok2 {
			v = append(v, fmt.Sprintf("Build, %d-byte keys: cuckoo FilterPolicy(10) %.2fM keys/s, %.2fx Pebble's bloom(10) (cold: %.2fx); %.1f against %.1f bytes allocated per key (first build).",
				kl, c.KeysPerSec/1e6, c.KeysPerSec/bl.KeysPerSec, bl.ColdNsPerKey/c.ColdNsPerKey, c.AllocPerKey, bl.AllocPerKey))
		}
	}
	c, ok1 := bd.get(kindHighLoadBuild, keys.ShortLen)
	bl, ok2 := bd.get(buildBase(kindHighLoadBuild), keys.ShortLen)
	if ok1 && ok2 {
		v = append(v, fmt.Sprintf("Build near the load threshold, %d-byte keys: %s %.2fM keys/s, %.2fx Pebble's bloom(12) (cold: %.2fx).",
			keys.ShortLen, kindHighLoadBuild, c.KeysPerSec/1e6, c.KeysPerSec/bl.KeysPerSec, bl.ColdNsPerKey/c.ColdNsPerKey))
	}
	return v
}

// sizePoint is FilterPolicy(B)'s build throughput against bloom(B)'s at one
// table size: the median, lowest and highest of the rounds' ratios.
type sizePoint struct {
	Bits, Keys              int
	Median, Lowest, Highest float64 // bloom's time over cuckoo's: above 1, cuckoo builds faster
	Rounds                  int
}

// buildSizes are the table sizes of the paired build: sstables' filters
// (1k to 64k keys, a 2 MiB table of 256-byte values holds about 8k) beside
// a large one.
var buildSizes = []int{1_000, 8_000, 64_000, 1_000_000}

// measureBuildSizes times FilterPolicy(B) and bloom.FilterPolicy(B) builds of
// 16-byte keys at each of buildSizes, paired: in each round the two build
// the same keys back to back, in an order that alternates from round to
// round, each timed over enough builds to take about 20 ms, and the round's
// ratio is bloom's time over cuckoo's. Noise from other work on the machine
// lands on both of a pair, and the median over rounds discards the rest.
func measureBuildSizes(c Config, pr *progress.Printer) []sizePoint {
	rounds := 21
	if c.Smoke {
		rounds = 3
	}
	var out []sizePoint
	var dst []byte
	build := func(p pebble.FilterPolicy, ks *keys.Set, reps int) time.Duration {
		start := time.Now()
		for range reps {
			w := p.NewWriter(pebble.TableFilter)
			ks.Each(w.AddKey)
			dst = w.Finish(dst[:0])
		}
		return time.Since(start)
	}
	for _, n := range buildSizes {
		if c.Smoke {
			n = min(n, 8_000)
		}
		ks := keys.Gen{Seed: c.Seed*1000 + 37, Width: keys.ShortLen}.Set(0, n)
		reps := max(1, 2_000_000/n) // about 20 ms of cuckoo builds
		for _, b := range []int{10, 16} {
			var cu, bl pebble.FilterPolicy = cuckoopolicy.FilterPolicy(b), pbloom.FilterPolicy(b)
			build(cu, ks, 1) // warm the pools and the buffer
			build(bl, ks, 1)
			ratios := make([]float64, 0, rounds)
			for r := range rounds {
				pr.Stage("paired build %d/%d: B=%d, %d keys", r+1, rounds, b, n)
				var tc, tb time.Duration
				if r%2 == 0 {
					tc, tb = build(cu, ks, reps), build(bl, ks, reps)
				} else {
					tb, tc = build(bl, ks, reps), build(cu, ks, reps)
				}
				ratios = append(ratios, float64(tb)/float64(tc))
			}
			slices.Sort(ratios)
			out = append(out, sizePoint{Bits: b, Keys: n, Median: ratios[len(ratios)/2],
				Lowest: ratios[0], Highest: ratios[len(ratios)-1], Rounds: rounds})
			if c.Smoke && n >= 8_000 {
				break
			}
		}
		if c.Smoke && n >= 8_000 {
			break
		}
	}
	return out
}

// writeBuildSizes writes the paired builds by table size.
func (r *report) writeBuildSizes(w *markdown.Doc) {
	if len(r.Build.BySize) == 0 {
		return
	}
	w.WriteString(fmt.Sprintf("Build throughput by table size, FilterPolicy(B) against bloom.FilterPolicy(B), 16-byte keys, paired: "+
		"in each of %d rounds the two build the same keys back to back (the order alternating), each timed over about 20 ms of builds; "+
		"the ratio is bloom's time over cuckoo's (above 1: cuckoo builds faster), the median of the rounds with the lowest and highest beside it.\n\n",
		r.Build.BySize[0].Rounds))
	var rows [][]string
	for _, p := range r.Build.BySize {
		rows = append(rows, []string{fmt.Sprint(p.Bits), fmt.Sprint(p.Keys), f2(p.Median), f2(p.Lowest) + " to " + f2(p.Highest)})
	}
	w.Table([]string{"B", "keys", "throughput ratio (median)", "lowest to highest"}, rows)
}
