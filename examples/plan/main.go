// Plan fits a filter plan to a database: it loads a Pebble database with
// bloom.FilterPolicy(10) on every level, asks plan.Fit for the
// plan with the fewest false positives per absent Get within the bytes the
// bloom(10) filters take on L0-L5 (the filters a Get loads), applies it with
// plan.Apply, and keeps loading while compactions rewrite the
// tables under the plan. A twin database, loaded with the same keys and
// kept on bloom(10), is the baseline. It prints the plan beside the best
// bloom-only plan at the same ceiling (the bytes and expected false
// positives plan.Fit's model gives both), FilterUsage of both databases, and
// the false positives per absent Get before and after.
//
//	go run ./examples/plan
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

func main() {
	keys := flag.Int("keys", 200_000, "keys loaded before the plan, and as many after")
	gets := flag.Int("gets", 50_000, "absent Gets per measurement")
	flag.Parse()
	if err := run(os.Stdout, *keys, *gets); err != nil {
		log.Fatal(err)
	}
}

// twin is the database under the plan and its bloom(10) baseline.
type twin struct {
	dir            string
	plan, baseline *pebble.DB
}

func run(w io.Writer, keys, gets int) error {
	dir, err := os.MkdirTemp("", "pebble-cuckoo-plan")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bloom10 := plan.Plan{}
	for l := range bloom10 {
		bloom10[l] = bloom.FilterPolicy(10)
	}

	t := &twin{dir: dir}
	if err := t.open(bloom10, bloom10); err != nil {
		return err
	}
	defer t.close()
	if err := t.load(0, keys); err != nil {
		return err
	}
	fmt.Fprintf(w, "== %d keys, bloom(10) on every level\n", keys)
	budget, err := usage(w, t.plan)
	if err != nil {
		return err
	}
	fp, err := absentGets(t.plan, keys, gets)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  false positives per absent Get: %.5f\n\n", fp)

	r, err := plan.Fit(t.plan, plan.Config{MaxFilterBytes: budget, Fixed: true})
	if err != nil {
		return err
	}
	plan := r.Plan
	printPlans(w, budget, r)

	// Pebble writes a table's filter when it writes the table: the plan
	// reaches the LSM as flushes and compactions rewrite it.
	if err := t.close(); err != nil {
		return err
	}
	if err := t.open(plan, bloom10); err != nil {
		return err
	}
	if err := t.load(keys, 2*keys); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		db   *pebble.DB
	}{{"under the plan", t.plan}, {"baseline, bloom(10) on every level", t.baseline}} {
		fmt.Fprintf(w, "== %d more keys, %s\n", keys, d.name)
		if _, err := usage(w, d.db); err != nil {
			return err
		}
		fp, err := absentGets(d.db, 2*keys, gets)
		if err != nil {
			return err
		}
		lost, err := presentGets(d.db, 2*keys)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  false positives per absent Get: %.5f\n  %d keys read back, %d lost\n\n", fp, 2*keys, lost)
	}
	return nil
}

func (t *twin) open(plan, baseline plan.Plan) error {
	var err error
	if t.plan, err = open(filepath.Join(t.dir, "plan"), plan); err != nil {
		return err
	}
	t.baseline, err = open(filepath.Join(t.dir, "baseline"), baseline)
	return err
}

func (t *twin) close() error {
	var errs []error
	for _, db := range []**pebble.DB{&t.plan, &t.baseline} {
		if *db != nil {
			errs = append(errs, (*db).Close())
			*db = nil
		}
	}
	return errors.Join(errs...)
}

// open opens a database whose small memtable and tables spread a few hundred
// thousand keys over several levels, as millions would with the defaults.
func open(dir string, p plan.Plan) (*pebble.DB, error) {
	opts := &pebble.Options{
		Logger:        quiet{},
		MemTableSize:  1 << 20,
		LBaseMaxBytes: 1 << 20,
	}
	plan.Apply(opts, p)
	for l := range opts.TargetFileSizes {
		opts.TargetFileSizes[l] = 256 << 10
	}
	return pebble.Open(dir, opts)
}

// key spreads keys over the key space.
func key(i int) []byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:], uint64(i)*0x9e3779b97f4a7c15)
	binary.BigEndian.PutUint64(k[8:], uint64(i))
	return k[:]
}

var value = make([]byte, 64)

// load writes keys [from, to) to both databases, then waits for their
// compactions to settle.
func (t *twin) load(from, to int) error {
	for _, db := range []*pebble.DB{t.plan, t.baseline} {
		b := db.NewBatch()
		for i := from; i < to; i++ {
			if err := b.Set(key(i), value, nil); err != nil {
				return err
			}
			if b.Len() > 256<<10 {
				if err := b.Commit(pebble.NoSync); err != nil {
					return err
				}
				b = db.NewBatch()
			}
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			return err
		}
		if err := db.Flush(); err != nil {
			return err
		}
		settle(db)
	}
	return nil
}

// settle waits until no compaction has run for a few polls in a row, or a
// minute has passed.
func settle(db *pebble.DB) {
	deadline := time.Now().Add(time.Minute)
	for idle := 0; idle < 5 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		if db.Metrics().Compact.NumInProgress == 0 {
			idle++
		} else {
			idle = 0
		}
	}
}

// printPlans prints plan.Fit's plan beside the best bloom-only plan within
// the same ceiling, and bloom(10) on every level, with the bytes of the
// filters a Get loads and the expected false positives per absent Get that
// plan.Fit's model gives each.
func printPlans(w io.Writer, budget uint64, r plan.Report) {
	fmt.Fprintf(w, "plan.Fit(db, plan.Config{MaxFilterBytes: %d, Fixed: true}), the bloom(10) filters' bytes on L0-L5.\n", budget)
	fmt.Fprintf(w, "By its model (bytes of the filters a Get loads, L0-L5, empty levels as they will fill):\n")
	for _, e := range []struct {
		name string
		est  plan.Estimate
	}{{"plan", r.Estimate}, {"best bloom-only plan", r.BloomOnly}, {"bloom(10) on every level", r.Bloom10}} {
		fmt.Fprintf(w, "  %-25s %v\n  %-25s %d bytes, %.5f expected false positives per absent Get\n", e.name+":", e.est.Plan, "", e.est.Bytes, e.est.FalsePositives)
	}
	if r.FalsePositives > 1e-7 && r.BloomOnly.FalsePositives > 1e-7 { // a ratio of nothing says nothing
		fmt.Fprintf(w, "  the plan expects %.2fx the false positives of the best bloom-only plan\n", r.FalsePositives/r.BloomOnly.FalsePositives)
	}
	fmt.Fprintln(w)
}

// usage prints FilterUsage and returns the filter bytes on L0-L5, those a
// Get loads.
func usage(w io.Writer, db *pebble.DB) (uint64, error) {
	rows, err := cuckoopolicy.FilterUsage(db)
	if err != nil {
		return 0, err
	}
	var total, loaded uint64
	fmt.Fprintf(w, "  %-5s %-26s %6s %8s %12s %9s\n", "level", "filter policy", "tables", "entries", "filter bytes", "bits/entry")
	for _, u := range rows {
		fmt.Fprintf(w, "  L%-4d %-26s %6d %8d %12d %9.2f\n", u.Level, policyName(u), u.Tables, u.Entries, u.FilterBytes, u.BitsPerEntry())
		total += u.FilterBytes
		if u.Level < 6 {
			loaded += u.FilterBytes
		}
	}
	fmt.Fprintf(w, "  filter bytes in all: %d; on L0-L5, which a Get loads: %d\n", total, loaded)
	return loaded, nil
}

// absentGets reads gets absent keys and returns the filter false positives
// per Get: the probes where a filter let an absent key through to a data
// block.
func absentGets(db *pebble.DB, keys, gets int) (float64, error) {
	before := db.Metrics().Filter.Misses
	for i := range gets {
		k := key(keys + 1 + i)
		_, closer, err := db.Get(k)
		if err == nil {
			closer.Close()
			return 0, fmt.Errorf("absent key %x found", k)
		}
		if err != pebble.ErrNotFound {
			return 0, err
		}
	}
	return float64(db.Metrics().Filter.Misses-before) / float64(gets), nil
}

func presentGets(db *pebble.DB, keys int) (lost int, err error) {
	for i := range keys {
		_, closer, err := db.Get(key(i))
		if err == pebble.ErrNotFound {
			lost++
			continue
		}
		if err != nil {
			return lost, err
		}
		closer.Close()
	}
	return lost, nil
}

// quiet discards Pebble's informational log lines.
type quiet struct{}

func (quiet) Infof(string, ...any)      {}
func (quiet) Errorf(f string, a ...any) { log.Printf(f, a...) }
func (quiet) Fatalf(f string, a ...any) { log.Fatalf(f, a...) }

// policyName is a row's filter policy, "none" for tables without a filter,
// as plans print it.
func policyName(u cuckoopolicy.Usage) string {
	if u.Policy == "" {
		return "none"
	}
	return u.Policy
}
