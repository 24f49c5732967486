package growth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/progress"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// RunReference's databases, in report order.
const (
	reference   = iota // bloom(10) on L0-L5, none on L6
	swap               // cuckoopolicy.FilterPolicy(10) on L0-L5, none on L6
	liveDefault        // a live plan refitting at most once per plan.DefaultRefitInterval
	liveFast           // a live plan refitting at most once per Config.RefitInterval
	numStores
)

// RunReference runs the reference scenario cfg describes and returns its
// report. On ErrLostKeys the report is complete; on another error (ctx's
// included) it holds what was measured so far. The databases are removed in
// every case.
func RunReference(ctx context.Context, cfg Config) (*ReferenceReport, error) {
	if cfg.Keys <= 0 {
		cfg.Keys = 250_000
	}
	if cfg.Doublings <= 0 {
		cfg.Doublings = 3
	}
	cfg = cfg.withDefaults()
	r := &ReferenceReport{Config: cfg, Intervals: [2]time.Duration{plan.DefaultRefitInterval, cfg.RefitInterval}}
	r.Names = [numStores]string{"reference bloom(10)", "swap cuckoo(10)",
		fmt.Sprintf("live (%s)", r.Intervals[0]), fmt.Sprintf("live (%s)", r.Intervals[1])}
	dir, err := os.MkdirTemp(cfg.Dir, "pebble-growth-")
	if err != nil {
		return r, fmt.Errorf("growth: %w", err)
	}
	defer os.RemoveAll(dir)
	s := &refScenario{cfg: cfg, dir: dir, pr: progress.New(cfg.Progress), r: r, stream: newStream(cfg)}
	defer s.close()
	if err := s.open(); err != nil {
		return r, err
	}
	from := 0
	for k := 0; k <= cfg.Doublings; k++ {
		to := cfg.Keys << k
		if err := s.write(ctx, from, to); err != nil {
			return r, err
		}
		if err := s.checkpoint(ctx, 1<<k); err != nil {
			return r, err
		}
		from = to
	}
	return r, s.verify()
}

// refScenario is a RunReference in progress: its four databases.
type refScenario struct {
	cfg    Config
	dir    string
	pr     *progress.Printer
	r      *ReferenceReport
	stream stream
	stores [numStores]*store
}

// open creates the four databases, as a client would: the reference's
// levels set on the options, and for a live plan NewLive with the zero
// Config, its Apply (which takes those levels as its reference), Open and
// Start.
func (s *refScenario) open() error {
	levels := func(p pebble.FilterPolicy) func(*store) {
		return func(st *store) {
			cuckoopolicy.Apply(st.opts, p)
			st.opts.Levels[6].FilterPolicy = pebble.NoFilterPolicy
			st.plan = plan.Plan{p, p, p, p, p, p}
		}
	}
	for i := range s.stores {
		setup := levels(bloom.FilterPolicy(10))
		switch i {
		case swap:
			setup = levels(cuckoopolicy.FilterPolicy(10))
		case liveDefault, liveFast:
			lp := plan.NewLive(plan.Config{}, s.r.Intervals[i-liveDefault])
			setup = func(st *store) {
				levels(bloom.FilterPolicy(10))(st)
				st.live = lp
				lp.Apply(st.opts)
			}
		}
		st, err := openStore(s.cfg, filepath.Join(s.dir, fmt.Sprintf("db%d", i)), s.r.Names[i], setup)
		if err != nil {
			return err
		}
		s.stores[i] = st
		if st.live == nil {
			continue
		}
		ldb, err := st.live.Start(st.db)
		if ldb == nil {
			return fmt.Errorf("growth: start %s: %w", st.name, err)
		}
		st.ldb = ldb
		if err != nil { // the first fit's, on the empty database: the plan runs on
			s.r.StartErrors[i-liveDefault] = err.Error()
		}
	}
	return nil
}

// write puts keys [lo, hi) into every database, Config.Batch keys to a
// committed batch, the databases in turn, and samples each one's L0-L5
// filter bytes after each of its batches.
func (s *refScenario) write(ctx context.Context, lo, hi int) error {
	s.pr.Stage("write keys %d to %d, batches of %d", lo, hi, s.cfg.Batch)
	for from := lo; from < hi; from += s.cfg.Batch {
		to := min(from+s.cfg.Batch, hi)
		smp := Sample{Keys: to}
		for i, st := range s.stores {
			if err := st.write(ctx, s.stream, from, to, s.cfg.Batch); err != nil {
				return err
			}
			b, err := upperFilterBytes(st.db)
			if err != nil {
				return err
			}
			smp.Bytes[i] = b
		}
		s.r.Samples = append(s.r.Samples, smp)
		s.pr.Tick("%d keys", to)
	}
	return nil
}

// checkpoint settles every database at growth times the start keys, takes
// the live plans' status and measures each database.
func (s *refScenario) checkpoint(ctx context.Context, growth int) error {
	keys := s.cfg.Keys * growth
	s.pr.Stage("checkpoint %dx (%d keys): flush and settle", growth, keys)
	cp := ReferenceCheckpoint{Growth: growth, Keys: keys}
	for _, st := range s.stores {
		settled, err := st.settle(ctx, s.cfg.Settle)
		if err != nil {
			return err
		}
		if !settled {
			s.r.Unsettled = append(s.r.Unsettled, fmt.Sprintf("%s at %d keys", st.name, keys))
		}
	}
	for i, st := range s.stores {
		if st.live != nil {
			cp.Live[i-liveDefault] = st.live.Status()
		}
		s.pr.Stage("checkpoint %dx: absent Gets, %s", growth, st.name)
		row, err := s.measure(ctx, st)
		if err != nil {
			return err
		}
		cp.Rows[i] = row
	}
	s.r.Checkpoints = append(s.r.Checkpoints, cp)
	return nil
}

// measure takes st's row, its absent Gets run Config.Absent at a time until
// they met Config.FalsePositives false-positive reads or reached
// Config.MaxAbsent.
func (s *refScenario) measure(ctx context.Context, st *store) (Row, error) {
	row, unfiltered, err := st.shape()
	if err != nil {
		return row, err
	}
	a := &row.Absent
	for a.Gets < s.cfg.MaxAbsent && a.Reads() < int64(s.cfg.FalsePositives) {
		if err := ctx.Err(); err != nil {
			return row, err
		}
		n := min(s.cfg.Absent, s.cfg.MaxAbsent-a.Gets)
		if err := absentGets(st.db, s.stream, a.Gets, a.Gets+n, unfiltered, a); err != nil {
			return row, err
		}
	}
	return row, nil
}

// verify reads every key back from every database.
func (s *refScenario) verify() error {
	return verifyAll(s.pr, s.stores[:], s.stream, s.cfg.Keys<<s.cfg.Doublings, s.r.Verified[:], s.r.absentFound)
}

// close closes every open database.
func (s *refScenario) close() { closeAll(s.stores[:]) }
