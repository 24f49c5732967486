package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/bits-and-blooms/bloom/v3"
	linvon "github.com/linvon/cuckoo-filter"
	panmari "github.com/panmari/cuckoofilter"
	seiflotfy "github.com/seiflotfy/cuckoofilter"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/filters"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/keys"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/markdown"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/progress"
)

// munLimTable1 is the false-positive rate Mun and Lim report (Table I) for
// their Cuckoo Bloom filter and a standard bloom filter at equal memory,
// |U| = 3|S|, by log2|S|.
var munLimTable1 = map[int][2]float64{13: {0.080, 0.091}, 15: {0.083, 0.093}, 17: {0.082, 0.092}}

// cbfRow is the Cuckoo Bloom filter against a standard bloom filter at equal
// memory for one set size.
type cbfRow struct {
	LogS        int
	BitsPerItem float64
	F, K        int     // the CBF configuration with the lowest FPR
	CBF         float64 // its false-positive rate, mean of runs
	Bloom       float64 // standard bloom filter, k = round(bits ln 2)
	BloomTheory float64
	Wildcards   float64 // cells turned wildcard, share of cells
	Sweep       []cbfConfig
	FalseNeg    int
}

// cbfConfig is one (f, k) of the sweep.
type cbfConfig struct {
	F, K int
	FPR  float64
}

// measureCBF runs the Mun-Lim comparison: |S| members, 2|S| non-members
// (|U| = 3|S|), the CBF and a standard bloom filter at CBFBitsPerItem bits
// per member. The CBF's cell width f and positions k are not given in the
// description; every (f, k) with f = 2..8, k = 1..3 runs and the best is
// reported beside the sweep. The sweep runs at the first size; the
// others run its best configuration.
func measureCBF(c Config, pr *progress.Printer) ([]cbfRow, error) {
	var rows []cbfRow
	var bestF, bestK int
	for _, logS := range c.CBFLogSizes {
		n := 1 << logS
		pr.Stage("peers: Cuckoo Bloom filter, |S| = 2^%d", logS)
		row := cbfRow{LogS: logS, BitsPerItem: c.CBFBitsPerItem}
		total := c.CBFBitsPerItem * float64(n)
		kb := max(1, int(math.Round(c.CBFBitsPerItem*math.Ln2)))
		row.BloomTheory = math.Pow(1-math.Exp(-float64(kb)*float64(n)/total), float64(kb))
		var wild float64
		best := math.Inf(1)
		configs := []cbfConfig{{F: bestF, K: bestK}}
		if len(rows) == 0 { // sweep at the first size, keep its best
			configs = nil
			for f := 2; f <= 8; f++ {
				for k := 1; k <= 3; k++ {
					configs = append(configs, cbfConfig{F: f, K: k})
				}
			}
		}
		for _, cf := range configs {
			f, k := cf.F, cf.K
			var fpr, w float64
			for run := range c.CBFRuns {
				seed := c.Seed*7919 + uint64(logS*100+run)
				members := keys.Gen{Seed: seed, Width: keys.ShortLen}
				absent := keys.Gen{Seed: seed + 1<<40, Width: keys.ShortLen}
				cb, err := newCuckooBloom(total, f, k)
				if err != nil {
					return nil, err
				}
				members.First(n).Each(cb.Add)
				members.First(n).Each(func(key []byte) {
					if !cb.Contains(key) {
						row.FalseNeg++
					}
				})
				fp := 0
				absent.First(2 * n).Each(func(key []byte) {
					if cb.Contains(key) {
						fp++
					}
				})
				fpr += float64(fp) / float64(2*n)
				w += float64(cb.wildcards) / float64(cb.m)
			}
			fpr /= float64(c.CBFRuns)
			row.Sweep = append(row.Sweep, cbfConfig{F: f, K: k, FPR: fpr})
			if fpr < best {
				best, row.F, row.K, row.CBF = fpr, f, k, fpr
				wild = w / float64(c.CBFRuns)
			}
		}
		row.Wildcards = wild
		bestF, bestK = row.F, row.K
		for run := range c.CBFRuns {
			seed := c.Seed*7919 + uint64(logS*100+run)
			members := keys.Gen{Seed: seed, Width: keys.ShortLen}
			absent := keys.Gen{Seed: seed + 1<<40, Width: keys.ShortLen}
			b := bloom.New(uint(total), uint(kb))
			members.First(n).Each(func(k []byte) { b.Add(k) })
			fp := 0
			absent.First(2 * n).Each(func(key []byte) {
				if b.Test(key) {
					fp++
				}
			})
			row.Bloom += float64(fp) / float64(2*n) / float64(c.CBFRuns)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// peerRow is one cuckoo filter implementation filled to its capacity.
type peerRow struct {
	Name            string
	FingerprintBits string
	Capacity        int     // keys asked for
	BitsPerItem     float64 // table bits / keys stored at capacity
	FPR             float64
	InsertNs        float64 // mean over the fill to capacity
	LookupNegNs     float64
	LookupPosNs     float64
	FailedAtCap     int // inserts refused while filling to capacity
	LostAtCap       int // keys reported inserted, then not found (false negatives)
	Over            int // further insert attempts past capacity
	OverInsertNs    float64
	FailedOver      int
	LostOver        int
	LoadAtCap       float64
	Note            string
}

// peerFilter is what the peer comparison needs of a filter.
type peerFilter interface {
	insert(key []byte) bool
	contains(key []byte) bool
	bits() float64 // table size in bits
}

type peerKind struct {
	name, fbits string
	new         func(capacity int) (peerFilter, error)
}

type seifPeer struct{ f *seiflotfy.Filter }

func (p seifPeer) insert(k []byte) bool   { return p.f.Insert(k) }
func (p seifPeer) contains(k []byte) bool { return p.f.Lookup(k) }
func (p seifPeer) bits() float64          { return 8 * float64(len(p.f.Encode())) }

type panPeer struct{ f *panmari.Filter }

func (p panPeer) insert(k []byte) bool   { return p.f.Insert(k) }
func (p panPeer) contains(k []byte) bool { return p.f.Lookup(k) }
func (p panPeer) bits() float64 {
	if p.f.LoadFactor() == 0 {
		return 0
	}
	return 16 * float64(p.f.Count()) / p.f.LoadFactor()
}

type linvonPeer struct{ f *linvon.Filter }

func (p linvonPeer) insert(k []byte) bool   { return p.f.Add(k) }
func (p linvonPeer) contains(k []byte) bool { return p.f.Contain(k) }
func (p linvonPeer) bits() float64          { return 8 * float64(p.f.SizeInBytes()) }

type dynPeer struct{ d dynFilter }

func (p dynPeer) insert(k []byte) bool   { return p.d.Insert(k) == nil }
func (p dynPeer) contains(k []byte) bool { return p.d.Contains(k) }
func (p dynPeer) bits() float64          { return p.d.bits() }

func peerKinds() []peerKind {
	dyn := func(f int, semi bool) func(int) (peerFilter, error) {
		return func(n int) (peerFilter, error) {
			d, err := newDynamic(n, dynConfig{FingerprintBits: f, SemiSort: semi})
			if err != nil {
				return nil, err
			}
			return dynPeer{d}, nil
		}
	}
	return []peerKind{
		{name: "seiflotfy/cuckoofilter", fbits: "8", new: func(n int) (peerFilter, error) {
			return seifPeer{seiflotfy.NewFilter(uint(n))}, nil
		}},
		{name: "ours cuckoo.Filter", fbits: "8", new: dyn(8, false)},
		{name: "linvon/cuckoo-filter single", fbits: "12", new: func(n int) (peerFilter, error) {
			return linvonPeer{linvon.NewFilter(4, 12, uint(n), linvon.TableTypeSingle)}, nil
		}},
		{name: "ours cuckoo.Filter", fbits: "12", new: dyn(12, false)},
		{name: "linvon/cuckoo-filter packed (semi-sorted)", fbits: "13", new: func(n int) (peerFilter, error) {
			return linvonPeer{linvon.NewFilter(4, 13, uint(n), linvon.TableTypePacked)}, nil
		}},
		{name: "ours cuckoo.Filter semi-sorted", fbits: "13", new: dyn(13, true)},
		{name: "panmari/cuckoofilter v1.0.6", fbits: "16", new: func(n int) (peerFilter, error) {
			return panPeer{panmari.NewFilter(uint(n))}, nil
		}},
		{name: "ours cuckoo.Filter", fbits: "16", new: dyn(16, false)},
	}
}

// measurePeers fills each implementation to its capacity and then tries
// PeerOver*capacity more inserts. The
// capacity is 95% of PeerKeys, so the libraries that round the table to a
// power of two get PeerKeys/4 buckets and a 95% load; ours sizes its own
// table for the capacity. Lost keys are keys whose insert returned success
// and that a lookup then misses: false negatives.
func measurePeers(c Config, pr *progress.Printer) ([]peerRow, error) {
	n := int(0.95 * float64(c.PeerKeys))
	members := keys.Gen{Seed: c.Seed*1000 + 51, Width: keys.ShortLen}
	absent := keys.Gen{Seed: c.Seed*1000 + 52, Width: keys.ShortLen}
	negQ := absent.Set(0, min(c.PeerQueries, 1<<20))
	posQ := members.Set(0, min(n, 1<<20))
	var rows []peerRow
	for _, pk := range peerKinds() {
		pr.Stage("peers: %s (%s-bit), capacity %d", pk.name, pk.fbits, n)
		row := peerRow{Name: pk.name, FingerprintBits: pk.fbits, Capacity: n}
		f, err := pk.new(n)
		if err != nil {
			row.Note = err.Error()
			rows = append(rows, row)
			continue
		}
		over := max(1, int(c.PeerOver*float64(n)))
		ok := make([]bool, n+over)
		buf := make([]byte, keys.ShortLen)
		start := time.Now()
		for i := range n {
			members.Put(buf, uint64(i))
			ok[i] = f.insert(buf)
			if !ok[i] {
				row.FailedAtCap++
			}
		}
		row.InsertNs = float64(time.Since(start).Nanoseconds()) / float64(n)
		lost := func(upto int) int {
			l := 0
			for i := range upto {
				if ok[i] {
					members.Put(buf, uint64(i))
					if !f.contains(buf) {
						l++
					}
				}
			}
			return l
		}
		row.LostAtCap = lost(n)
		stored := n - row.FailedAtCap
		if b := f.bits(); b > 0 {
			row.BitsPerItem = b / float64(stored)
			// slots = bits / fingerprint bits
			row.LoadAtCap = float64(stored) / (b / fbitsPerSlot(pk.fbits, pk.name))
		}
		hits := filters.CountStream(filterFunc(f.contains), absent, c.PeerQueries)
		row.FPR = float64(hits) / float64(c.PeerQueries)
		ff := filterFunc(f.contains)
		row.LookupNegNs, row.LookupPosNs = math.Inf(1), math.Inf(1)
		for range 3 {
			neg, _ := timeCount(ff, negQ, c.LookupMinTime)
			pos, _ := timeCount(ff, posQ, c.LookupMinTime)
			row.LookupNegNs, row.LookupPosNs = math.Min(row.LookupNegNs, neg), math.Min(row.LookupPosNs, pos)
		}

		// Past capacity.
		row.Over = over
		start = time.Now()
		for i := n; i < n+over; i++ {
			members.Put(buf, uint64(i))
			ok[i] = f.insert(buf)
			if !ok[i] {
				row.FailedOver++
			}
		}
		row.OverInsertNs = float64(time.Since(start).Nanoseconds()) / float64(over)
		row.LostOver = lost(n + over)
		rows = append(rows, row)
	}
	return rows, nil
}

// fbitsPerSlot is the stored bits per slot: f, or f-1 when semi-sorted.
func fbitsPerSlot(fbits, name string) float64 {
	var f float64
	fmt.Sscan(fbits, &f)
	if strings.Contains(name, "semi") {
		f--
	}
	return f
}

// filterFunc adapts a lookup function to Filter.
type filterFunc func([]byte) bool

func (f filterFunc) Contains(k []byte) bool { return f(k) }
func (f filterFunc) Count(q *keys.Set) int {
	c := 0
	for i := range q.Len() {
		if f(q.At(i)) {
			c++
		}
	}
	return c
}
func (f filterFunc) Bytes() int { return 0 }

// writePeers writes section 6: the Cuckoo Bloom filter against a standard
// bloom filter, and the Go cuckoo-filter libraries against ours.
func (r *report) writePeers(w *markdown.Doc) {
	if !w.Section("6. Seed systems and peers", r.CBF != nil || r.Peers != nil) {
		return
	}
	if len(r.CBF) > 0 {
		r.writeCBF(w)
	}
	if len(r.Peers) > 0 {
		r.writePeerTable(w)
	}
}

func (r *report) writeCBF(w *markdown.Doc) {
	fmt.Fprintf(w, "**Cuckoo Bloom filter (Mun and Lim)**, implemented in bench/report/cbf.go from its description "+
		"(see the doc comment there for the choices it leaves open). |S| members, |U| = 3|S|: FPR over the "+
		"2|S| non-members, mean of %d runs, at %.1f bits per member for both filters; the standard bloom "+
		"filter uses k = round(bits·ln 2). The CBF's cell width f and positions k are not given in its description: "+
		"the first size sweeps f = 2..8, k = 1..3 and the best configuration is shown and used for the other sizes.\n\n",
		r.Config.CBFRuns, r.Config.CBFBitsPerItem)
	var rows [][]string
	for _, x := range r.CBF {
		paper := ""
		if p, ok := munLimTable1[x.LogS]; ok {
			paper = fmt.Sprintf("%.3f / %.3f", p[0], p[1])
		}
		rows = append(rows, []string{fmt.Sprintf("2^%d", x.LogS), fmt.Sprintf("f=%d k=%d", x.F, x.K),
			fmt.Sprintf("%.4f", x.CBF), fmt.Sprintf("%.4f", x.Bloom), fmt.Sprintf("%.4f", x.BloomTheory),
			pct(x.Wildcards), fmt.Sprint(x.FalseNeg), paper})
	}
	w.Table([]string{"|S|", "CBF config", "CBF FPR", "bloom FPR", "bloom theory", "wildcard cells", "false negatives", "paper CBF / bloom"}, rows)
	for _, row := range r.CBF {
		if len(row.Sweep) < 2 {
			continue
		}
		var sw []string
		for _, s := range row.Sweep {
			sw = append(sw, fmt.Sprintf("f=%d,k=%d: %.3f", s.F, s.K, s.FPR))
		}
		fmt.Fprintf(w, "CBF FPR by (f, k) at |S| = 2^%d: %s.\n\n", row.LogS, strings.Join(sw, "; "))
	}
}

func (r *report) writePeerTable(w *markdown.Doc) {
	fmt.Fprintf(w, "**Go cuckoo-filter libraries against cuckoo.Filter**, grouped by fingerprint size (equal "+
		"memory per slot). Capacity %d keys (95%% of a power of two, so the power-of-two libraries run at 95%% "+
		"load); then %d more inserts past capacity. *lost* counts keys whose insert reported success and that "+
		"a lookup later misses: false negatives. Lookup ns: the fastest of 3 timed loops of at least %s over 2^20 (or capacity) queries.\n\n",
		r.Peers[0].Capacity, r.Peers[0].Over, r.Config.LookupMinTime)
	var rows [][]string
	for _, p := range r.Peers {
		if p.Note != "" {
			rows = append(rows, []string{p.Name, p.FingerprintBits, p.Note, "", "", "", "", "", "", "", ""})
			continue
		}
		rows = append(rows, []string{p.Name, p.FingerprintBits, f2(p.BitsPerItem), pct(p.LoadAtCap), pct(p.FPR),
			f1(p.InsertNs), f1(p.LookupNegNs), f1(p.LookupPosNs),
			fmt.Sprintf("%d / %d", p.FailedAtCap, p.LostAtCap), fmt.Sprintf("%d / %d", p.FailedOver, p.LostOver),
			f1(p.OverInsertNs)})
	}
	w.Table([]string{"implementation", "f", "bits/item", "load", "FPR", "insert ns", "lookup ns (absent)",
		"lookup ns (present)", "at capacity: failed / lost", "past capacity: failed / lost", "insert ns past capacity"}, rows)
}

// peerVerdicts: the libraries that lose keys, the dynamic filter's speed
// beside each, and the Cuckoo Bloom filter against a standard bloom filter.
func (r *report) peerVerdicts() []string {
	var v []string
	for _, p := range r.Peers {
		if p.Note != "" {
			continue
		}
		if p.LostAtCap > 0 || p.LostOver > 0 {
			v = append(v, fmt.Sprintf("%s (%s-bit) loses keys: %d false negatives at capacity, %d after inserting past it.", p.Name, p.FingerprintBits, p.LostAtCap, p.LostOver))
		}
	}
	v = append(v, peerSpeed(r.Peers)...)
	for _, row := range r.CBF {
		w := "below"
		if row.CBF >= row.Bloom {
			w = "not below"
		}
		paper := ""
		if p, ok := munLimTable1[row.LogS]; ok {
			paper = fmt.Sprintf(" (paper: %.3f vs %.3f)", p[0], p[1])
		}
		v = append(v, fmt.Sprintf("Cuckoo Bloom filter at |S| = 2^%d, %.1f bits/member: FPR %.4f, %s the standard bloom filter's %.4f%s.",
			row.LogS, row.BitsPerItem, row.CBF, w, row.Bloom, paper))
	}
	return v
}

// peerSpeed sets the dynamic filter's insert and lookup times beside each Go
// library's at the same fingerprint size, as ratios (above 1: ours slower).
func peerSpeed(rows []peerRow) []string {
	var v []string
	for _, p := range rows {
		if p.Note != "" || strings.HasPrefix(p.Name, "ours") || p.InsertNs <= 0 || p.LookupNegNs <= 0 || p.LookupPosNs <= 0 {
			continue
		}
		for _, o := range rows {
			if !strings.HasPrefix(o.Name, "ours") || o.FingerprintBits != p.FingerprintBits {
				continue
			}
			v = append(v, fmt.Sprintf("Dynamic filter against %s (%s-bit): %s takes %.2fx its time per insert (%.1f against %.1f ns), %.2fx per absent lookup and %.2fx per present lookup.",
				p.Name, p.FingerprintBits, o.Name, o.InsertNs/p.InsertNs, o.InsertNs, p.InsertNs, o.LookupNegNs/p.LookupNegNs, o.LookupPosNs/p.LookupPosNs))
			break
		}
	}
	return v
}
