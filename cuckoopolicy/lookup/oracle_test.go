package lookup

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// TestMatchesGet runs random operations (sets, deletes, single deletes,
// merges, range deletions, flushes, compactions) on a database whose keys
// spread over L0 to L6, and asks every key of the grid and of absent probes
// through each reader (the database, live snapshots, indexed batches): Get,
// Filtered.Get, Adaptive.Get and the Has of each must answer exactly as the
// reader's own Get, value bytes and error. Each config is one comparer (Pebble's
// default, CockroachDB's) with or without a filter written on L6 (tables
// that move down to L6 unchanged keep theirs).
//
// -short runs fewer operations, PEBBLE_CUCKOO_LONG=1 many more;
// PEBBLE_CUCKOO_SEED replays a failure's seed.
func TestMatchesGet(t *testing.T) {
	t.Parallel()
	seed := pebbletest.Seed(t)
	ops := pebbletest.Scale(300, 1200, 20000)
	grid := pebbletest.Scale(120, 300, 3000)
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRun(t, c, seed, grid)
			defer r.close()
			for range ops {
				r.step()
			}
			r.checkAll()
			r.log()
		})
	}
}

// run is one randomized run: the database, its live snapshots, what it has
// written (to tell deleted and merged keys apart in the counts), and what
// the checks have asked.
type run struct {
	t      *testing.T
	cfg    config
	rng    *rand.Rand
	db     *pebble.DB
	grid   int
	once   []uint8 // per once key: 0 never written, 1 set, 2 single deleted
	last   map[string]byte
	snaps  []*pebble.Snapshot
	adapt  Adaptive
	counts map[string]int
	levels [7]bool // levels seen holding tables after a flush or compaction, or at a check
	asks   int     // keys a check of a snapshot or batch asks
}

func newRun(t *testing.T, c config, seed uint64, grid int) *run {
	db, err := pebble.Open("db", c.options(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	return &run{t: t, cfg: c, rng: pebbletest.Rand(seed), db: db, grid: grid,
		once: make([]uint8, grid), last: map[string]byte{}, counts: map[string]int{},
		adapt: Adaptive{Comparer: c.keys.comparer()}, asks: pebbletest.Scale(24, 60, 60)}
}

func (r *run) close() {
	for _, s := range r.snaps {
		r.must(s.Close())
	}
	r.must(r.db.Close())
}

func (r *run) must(err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatal(err)
	}
}

// step does one random operation.
func (r *run) step() {
	p := r.rng.IntN(100)
	switch {
	case p < 75:
		r.write(r.db, r.rng.IntN(100))
	case p < 83:
		r.must(r.db.Flush())
		r.seeLevels()
	case p < 87:
		a, b := r.span()
		r.must(r.db.Compact(r.t.Context(), a, b, false))
		r.seeLevels()
	case p < 91:
		r.snapshot()
	case p < 94:
		r.batch()
	default:
		r.checkSample()
	}
}

// seeLevels notes the levels that hold tables now.
func (r *run) seeLevels() {
	for l, m := range r.db.Metrics().Levels {
		r.levels[l] = r.levels[l] || m.TablesCount > 0
	}
}

// write does one write on w: a set, delete, merge or range deletion of grid
// keys, a set or single deletion of a once key.
func (r *run) write(w pebble.Writer, p int) {
	k := r.cfg.keys.key(r.rng.IntN(r.grid))
	v := fmt.Appendf(nil, "%d.%s", r.rng.Uint32(), strings.Repeat("v", r.rng.IntN(4)*100))
	op := byte('s')
	switch {
	case p < 50:
		r.must(w.Set(k, v, pebble.NoSync))
	case p < 60:
		r.must(w.Delete(k, pebble.NoSync))
		op = 'd'
	case p < 75:
		r.must(w.Merge(k, v, pebble.NoSync))
		op = 'm'
	case p < 80:
		a, b := r.span()
		r.must(w.DeleteRange(a, b, pebble.NoSync))
		if w == r.db {
			r.deleteRange(a, b)
		}
		return
	default:
		r.writeOnce(w)
		return
	}
	r.note(w, k, op)
}

// writeOnce sets a once key never written, or single deletes one that was
// set: each once key sees one set, then at most one single deletion.
func (r *run) writeOnce(w pebble.Writer) {
	i := r.rng.IntN(r.grid)
	k := r.cfg.keys.once(i)
	switch r.once[i] {
	case 0:
		r.must(w.Set(k, []byte("once"), pebble.NoSync))
		r.note(w, k, 's')
	case 1:
		r.must(w.SingleDelete(k, pebble.NoSync))
		r.note(w, k, 'd')
	default:
		return
	}
	r.once[i]++
}

// note records the last write of k, for the counts; writes to batches that
// may be dropped are not recorded.
func (r *run) note(w pebble.Writer, k []byte, op byte) {
	if w == r.db {
		r.last[string(k)] = op
	}
}

// deleteRange records the deletion of [a, b), for the counts.
func (r *run) deleteRange(a, b []byte) {
	cmp := r.cfg.keys.comparer().Compare
	for k := range r.last {
		if cmp([]byte(k), a) >= 0 && cmp([]byte(k), b) < 0 {
			r.last[k] = 'r'
		}
	}
}

// span returns grid keys a < b.
func (r *run) span() (a, b []byte) {
	i := r.rng.IntN(r.grid - 1)
	j := i + 1 + r.rng.IntN(min(r.grid-i-1, r.grid/24+1))
	return r.cfg.keys.key(i), r.cfg.keys.key(j)
}

// snapshot takes a snapshot, keeping at most three, and checks the oldest.
func (r *run) snapshot() {
	if len(r.snaps) == 3 {
		r.check("snapshot", r.snaps[0], r.sample(r.asks))
		r.must(r.snaps[0].Close())
		r.snaps = r.snaps[1:]
	}
	r.snaps = append(r.snaps, r.db.NewSnapshot())
}

// batch writes into an indexed batch, checks it, and commits or drops it.
func (r *run) batch() {
	b := r.db.NewIndexedBatch()
	for range 1 + r.rng.IntN(20) {
		r.write(b, r.rng.IntN(80)) // no once keys: the batch may be dropped
	}
	r.check("indexed batch", b, r.sample(r.asks))
	if r.rng.IntN(2) == 0 {
		r.must(b.Close())
		return
	}
	// Record the batch's writes as the database's by replaying its log.
	reader := b.Reader()
	for kind, k, v, ok, err := reader.Next(); ok; kind, k, v, ok, err = reader.Next() {
		r.must(err)
		switch kind {
		case pebble.InternalKeyKindRangeDelete:
			r.deleteRange(k, v)
		case pebble.InternalKeyKindSet:
			r.last[string(k)] = 's'
		case pebble.InternalKeyKindDelete:
			r.last[string(k)] = 'd'
		case pebble.InternalKeyKindMerge:
			r.last[string(k)] = 'm'
		}
	}
	r.must(b.Commit(pebble.NoSync))
}

// sample returns n random grid keys, once keys and probes.
func (r *run) sample(n int) [][]byte {
	var keys [][]byte
	for range n / 3 {
		keys = append(keys, r.cfg.keys.key(r.rng.IntN(r.grid)), r.cfg.keys.once(r.rng.IntN(r.grid)))
	}
	return r.cfg.keys.probes(keys, r.rng, n/3, r.grid)
}

// all returns every grid key, once key and a probe per grid key.
func (r *run) all() [][]byte {
	var keys [][]byte
	for i := range r.grid {
		keys = append(keys, r.cfg.keys.key(i), r.cfg.keys.once(i))
	}
	return r.cfg.keys.probes(keys, r.rng, r.grid, r.grid)
}

func (r *run) checkSample() {
	r.check("db", r.db, r.sample(r.asks*3/2))
}

func (r *run) checkAll() {
	r.check("db", r.db, r.all())
	for _, s := range r.snaps {
		r.check("snapshot", s, r.all())
	}
}

func (r *run) log() {
	r.t.Logf("%s: levels seen holding tables %v; asked %v; %d keys lost", r.cfg.name, r.levels, r.counts, r.counts["lost"])
	for _, k := range []string{"present", "absent", "deleted", "merged"} {
		if r.counts[k] == 0 {
			r.t.Errorf("no %s key asked", k)
		}
	}
	// A -short run writes too little for a level between to hold tables
	// every time.
	between := testing.Short() || slices.Contains(r.levels[1:6], true)
	if !r.levels[0] || !r.levels[6] || !between {
		r.t.Errorf("levels seen %v: want L0, L6 and one between", r.levels)
	}
}
