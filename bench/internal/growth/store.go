package growth

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/keys"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/progress"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// stream is the key stream every database is fed: key i and its value are
// fixed functions of (Seed, i), and the value starts with i, so a scan can
// tell which key an entry claims to be.
type stream struct {
	keys, absent keys.Gen
	valueSize    int
	valueSeed    uint64
}

func newStream(cfg Config) stream {
	return stream{
		keys:      keys.Gen{Seed: cfg.Seed, Width: keys.ShortLen},
		absent:    keys.Gen{Seed: cfg.Seed ^ 0x616273656e74, Width: keys.ShortLen},
		valueSize: cfg.ValueSize,
		valueSeed: keys.Mix64(cfg.Seed ^ 0x76616c7565),
	}
}

// put writes key i and its value into k and v (len(v) == s.valueSize): i,
// then random bytes, which compress no more than real values of that size
// would.
func (s stream) put(k, v []byte, i int) {
	s.keys.Put(k, uint64(i))
	binary.LittleEndian.PutUint64(v, uint64(i))
	var tmp [8]byte
	for n := 8; n < len(v); n += 8 {
		binary.LittleEndian.PutUint64(tmp[:], keys.Mix64(s.valueSeed+uint64(i)*0x9e3779b97f4a7c15+uint64(n)))
		copy(v[n:], tmp[:])
	}
}

// store is one policy's database.
type store struct {
	name string // the policy's, as reports name it
	opts *pebble.Options
	db   *pebble.DB
	live *plan.Live // a live plan's, else nil
	ldb  *plan.DB   // what live.Start returned, closed in db's stead
	plan plan.Plan  // a kept plan, as applied
}

// open creates the database of policy p, with its filters set by setup.
func (s *scenario) open(p int, setup func(*store)) (*store, error) {
	st, err := openStore(s.cfg, filepath.Join(s.dir, fmt.Sprintf("db%d", p)), policyNames[p], setup)
	if err != nil {
		return nil, err
	}
	s.stores[p] = st
	return st, nil
}

// openStore creates the database named name in dir, with cfg's shape and
// its filters set by setup.
func openStore(cfg Config, dir, name string, setup func(*store)) (*store, error) {
	st := &store{name: name, opts: &pebble.Options{
		MemTableSize:    cfg.MemTableSize,
		LBaseMaxBytes:   cfg.LBaseMaxBytes,
		TargetFileSizes: [7]int64{cfg.TargetFileSize},
		DisableWAL:      true, // the databases are rebuilt, never recovered
		Logger:          quietLogger{},
	}}
	setup(st)
	st.opts.EnsureDefaults()
	db, err := pebble.Open(dir, st.opts)
	if err != nil {
		return nil, fmt.Errorf("growth: open %s: %w", name, err)
	}
	st.db = db
	return st, nil
}

// quietLogger drops Pebble's informational lines.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	pebble.DefaultLogger.Errorf(format, args...)
}
func (quietLogger) Fatalf(format string, args ...any) {
	pebble.DefaultLogger.Fatalf(format, args...)
}

// write puts keys [lo, hi) of the stream in committed batches of batchKeys
// keys.
func (st *store) write(ctx context.Context, s stream, lo, hi, batchKeys int) error {
	k := make([]byte, s.keys.Width)
	v := make([]byte, s.valueSize)
	b := st.db.NewBatch()
	defer func() { _ = b.Close() }()
	for i := lo; i < hi; i++ {
		s.put(k, v, i)
		if err := b.Set(k, v, nil); err != nil {
			return err
		}
		if int(b.Count()) >= batchKeys || i == hi-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := st.db.Apply(b, pebble.NoSync); err != nil {
				return fmt.Errorf("growth: write %s: %w", st.name, err)
			}
			b.Reset()
		}
	}
	return nil
}

// settle flushes the memtable and waits, at most limit, until no flush or
// compaction runs or is wanted (every level's score above L6 below 1); it returns
// whether that happened.
func (st *store) settle(ctx context.Context, limit time.Duration) (bool, error) {
	if err := st.db.Flush(); err != nil {
		return false, fmt.Errorf("growth: flush %s: %w", st.name, err)
	}
	return st.idle(ctx, limit)
}

// idle waits, at most limit, until no flush or compaction runs and none is
// due, and reports whether that came.
func (st *store) idle(ctx context.Context, limit time.Duration) (bool, error) {
	deadline := time.Now().Add(limit)
	quiet := 0
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		m := st.db.Metrics()
		idle := m.Compact.NumInProgress == 0 && m.Flush.NumInProgress == 0 && m.Levels[0].Sublevels < int32(st.opts.L0CompactionThreshold)
		for _, l := range m.Levels[:len(m.Levels)-1] { // L6 compacts nowhere
			idle = idle && l.Score < 1
		}
		if !idle {
			quiet = 0
		} else if quiet++; quiet >= 3 {
			return true, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false, nil
}

// Verified is one database's read-back of the keys written.
type Verified struct {
	Keys       int // keys written
	Found      int // of them, read back with their value
	Lost       int // of them, missing or with another value
	Unexpected int // entries that are no key written with its value
}

// verify scans the database and checks it holds keys [0, n) of the stream
// with their values, and nothing else.
func (st *store) verify(s stream, n int) (Verified, error) {
	v := Verified{Keys: n}
	seen := make([]bool, n)
	it, err := st.db.NewIter(nil)
	if err != nil {
		return v, err
	}
	k := make([]byte, s.keys.Width)
	val := make([]byte, s.valueSize)
	for ok := it.First(); ok; ok = it.Next() {
		got := it.Value()
		i := -1
		if len(got) == len(val) {
			i = int(binary.LittleEndian.Uint64(got))
		}
		if i < 0 || i >= n || seen[i] {
			v.Unexpected++
			continue
		}
		s.put(k, val, i)
		if !bytes.Equal(it.Key(), k) || !bytes.Equal(got, val) {
			v.Unexpected++
			continue
		}
		seen[i] = true
		v.Found++
	}
	if err := it.Close(); err != nil {
		return v, fmt.Errorf("growth: verify %s: %w", st.name, err)
	}
	v.Lost = n - v.Found
	return v, nil
}

// close closes the database, through the live plan's DB where Start gave
// one (it stops the plan first).
func (st *store) close() {
	if st.ldb != nil {
		_ = st.ldb.Close()
		return
	}
	if st.live != nil {
		st.live.Stop()
	}
	_ = st.db.Close()
}

// verifyAll reads the first n keys of the stream back from every store
// into verified, and returns ErrLostKeys where a store lost one, returned
// one with another value, or found absent keys (found(i) of store i's).
func verifyAll(pr *progress.Printer, stores []*store, s stream, n int, verified []Verified, found func(int) int) error {
	lost := false
	for i, st := range stores {
		pr.Stage("verify: %s", st.name)
		v, err := st.verify(s, n)
		if err != nil {
			return err
		}
		verified[i] = v
		lost = lost || v.Lost > 0 || v.Unexpected > 0 || found(i) > 0
	}
	if lost {
		return ErrLostKeys
	}
	return nil
}

// closeAll closes every store opened.
func closeAll(stores []*store) {
	for _, st := range stores {
		if st != nil {
			st.close()
		}
	}
}
