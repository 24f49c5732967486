package workload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// build gives each of dbs a new database holding lay's tables, written with
// its own filter policies: every table is read once and written once per
// database (stage), then each database ingests its tables level by level
// (ingest). Ingestion decides where a table lands: a table above a range
// that the level below holds no data in falls through to that level. So
// unless first is given (a database built before from the same layout),
// dbs[0] (whose filters must not depend on the level) is built alone first,
// the layout is moved to the levels it got (relevel), and every database is
// then built from that layout and checked against the layout and the first
// one: every table's level, L0 sublevel, bounds,
// entries and sequence number. A difference stops the run with an error
// that names the level. It returns the layout as built.
func (r *runner) build(s shapeSpec, lay layout, dbs []*dbInst, first *dbInst) (layout, error) {
	if first == nil {
		// A probe: where ingestion puts each table. It is built again from
		// the layout it gives, as the others are, so that every table is
		// ingested in the same call as in the others (sequence numbers).
		first = dbs[0]
		if err := r.buildEach(s, lay, dbs[:1]); err != nil {
			return lay, err
		}
		var err error
		if lay, err = relevel(lay, first.sig); err != nil {
			return lay, fmt.Errorf("%s: %w", first.cfg.Name, err)
		}
		if err := os.RemoveAll(first.dir); err != nil {
			return lay, err
		}
	}
	if err := r.buildEach(s, lay, dbs); err != nil {
		return lay, err
	}
	want := lay.sig()
	for _, d := range dbs {
		if err := diffSig(want, d.sig); err != nil {
			return lay, fmt.Errorf("%s: LSM is not the layout's: %w", d.cfg.Name, err)
		}
		if err := diffSig(first.sig, d.sig); err != nil {
			return lay, fmt.Errorf("%s: LSM is not %s's: %w", d.cfg.Name, first.cfg.Name, err)
		}
	}
	return lay, nil
}

// buildEach stages lay's tables for dbs and ingests them into each.
func (r *runner) buildEach(s shapeSpec, lay layout, dbs []*dbInst) error {
	if err := r.stage(s, lay, dbs); err != nil {
		return err
	}
	for _, d := range dbs {
		r.prog.Stage("build %s: ingest %s", s.Name, d.cfg.Name)
		err := r.ingest(s, lay, d)
		os.RemoveAll(d.dir + ".stage")
		if err != nil {
			return fmt.Errorf("%s: %w", d.cfg.Name, err)
		}
	}
	return nil
}

// relevel returns lay with every table on the level and the L0 sublevel
// count that sig (a database built from lay) gives it.
func relevel(lay layout, sig lsmSig) (layout, error) {
	type id struct {
		lo, hi  string
		entries uint64
	}
	level := map[id]int{}
	for _, t := range sig.Tables {
		level[id{t.Lo, t.Hi, t.Entries}] = t.Level
	}
	out := layout{Sublevels: sig.Sublevels, Tables: slices.Clone(lay.Tables)}
	for j, t := range out.Tables {
		l, ok := level[id{string(t.Lo), string(t.Hi), t.Entries}]
		if !ok {
			return lay, fmt.Errorf("level %d: table %d [%x, %x] not found after ingestion", t.Level, j, t.Lo, t.Hi)
		}
		out.Tables[j].Level = l
	}
	out.sort()
	return out, nil
}

// stagedTable is the path of table j of d's layout before ingestion.
func stagedTable(d *dbInst, j int) string {
	return filepath.Join(d.dir+".stage", fmt.Sprintf("%06d.sst", j))
}

// stage writes every table of lay for every database of dbs, with the
// writer options of the table's level in that database.
func (r *runner) stage(s shapeSpec, lay layout, dbs []*dbInst) error {
	ks := r.keyspace(s)
	format := pebble.FormatNewest.MaxTableFormat()
	opts := make([]*pebble.Options, len(dbs))
	for i, d := range dbs {
		if err := os.MkdirAll(d.dir+".stage", 0o755); err != nil {
			return err
		}
		opts[i] = r.options(s, d.cfg, d.st, nil, true)
		opts[i].EnsureDefaults()
	}
	r.prog.Stage("build %s: %d tables for %d databases", s.Name, len(lay.Tables), len(dbs))
	for j, t := range lay.Tables {
		if r.stopped() {
			return errStopped
		}
		r.prog.Tick("table %d/%d", j+1, len(lay.Tables))
		entries, err := tableEntries(t, ks, opts[0])
		if err != nil {
			return fmt.Errorf("level %d: reading table %d: %w", t.Level, j, err)
		}
		if uint64(len(entries)) != t.Entries {
			return fmt.Errorf("level %d: table %d holds %d entries, its properties say %d", t.Level, j, len(entries), t.Entries)
		}
		for i, d := range dbs {
			if err := writeTable(stagedTable(d, j), opts[i].MakeWriterOptions(t.Level, format), entries); err != nil {
				return fmt.Errorf("level %d: writing table %d for %s: %w", t.Level, j, d.cfg.Name, err)
			}
		}
	}
	return nil
}

func writeTable(path string, wo sstable.WriterOptions, entries []kv) error {
	f, err := vfs.Default.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), wo)
	for _, e := range entries {
		if err := w.Set(e.k, e.v); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// ingest creates d's database from its staged tables. Ingestion places a
// table at or below the base level, which dynamic level sizing derives
// from L6's size and LBaseMaxBytes: with LBaseMaxBytes = 1 and compactions
// off, every level from L1 down takes what is ingested into it, so levels
// L6 to L1 are ingested in that order, each in one call, each table landing
// just above the level whose data it overlaps. The L0 tables then go in
// one at a time, oldest first, after reopening with a base level at the
// first populated level, so that each overlaps data there or in L0 and
// stays in L0, in the reference's sublevel order.
func (r *runner) ingest(s shapeSpec, lay layout, d *dbInst) error {
	open := func(lbase int64) (*pebble.DB, error) {
		o := r.options(s, d.cfg, d.st, nil, true)
		o.LBaseMaxBytes = lbase
		return pebble.Open(d.dir, o)
	}
	db, err := open(1)
	if err != nil {
		return err
	}
	for l := 6; l >= 1; l-- {
		var paths []string
		for j, t := range lay.Tables {
			if t.Level == l {
				paths = append(paths, stagedTable(d, j))
			}
		}
		if len(paths) == 0 {
			continue
		}
		if err := db.Ingest(context.Background(), paths); err != nil {
			db.Close()
			return fmt.Errorf("level %d: ingesting %d tables: %w", l, len(paths), err)
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	if db, err = open(1 << 60); err != nil {
		return err
	}
	for j, t := range lay.Tables {
		if t.Level != 0 {
			continue
		}
		if err := db.Ingest(context.Background(), []string{stagedTable(d, j)}); err != nil {
			db.Close()
			return fmt.Errorf("level 0: ingesting table %d: %w", j, err)
		}
	}
	if d.shape, err = readShape(db); err == nil {
		d.sig, err = readSig(db)
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}
