package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	pbloom "github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/keys"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/markdown"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/progress"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/sstblock"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// blockCounts sums what a CountingFS read since its last Reset by block
// kind, given each table's layout (file base name -> block offset -> kind).
// Value blocks count as other blocks: the report shows data, filter and index
// blocks on their own.
func blockCounts(cfs *pebbletest.CountingFS, layouts map[string]map[int64]sstblock.Kind) (reads, bytes [sstblock.NumKinds]int64) {
	cfs.Each(func(file string, off int64, r pebbletest.Reads) {
		kind, ok := layouts[file][off]
		if !ok || kind == sstblock.Value {
			kind = sstblock.Other
		}
		reads[kind] += r.N
		bytes[kind] += r.Bytes
	})
	return reads, bytes
}

// readAmpIO is what one operation read, on average.
type readAmpIO struct {
	DataBlocks  float64 // data blocks read
	DataBytes   float64
	FilterBytes float64
	IndexBytes  float64
	OtherBytes  float64
	TotalBytes  float64
	Reads       float64 // ReadAt calls of any kind
	FilterHits  float64 // db.Metrics().Filter: a data block avoided
	FilterMiss  float64 // the filter said "may contain"
	Ns          float64
}

// readAmpRow is one filter configuration.
type readAmpRow struct {
	Policy           string
	L0Tables         int
	L0FilterPerKey   float64 // filter bytes per key, table properties
	AbsentGet        readAmpIO
	PresentGet       readAmpIO
	L6Tables         int
	L6FilterPerKey   float64
	L6AbsentSeek     readAmpIO // SeekPrefixGE with UseL6Filters
	L6AbsentNoFilter readAmpIO // the same without UseL6Filters (Pebble's default)
}

// readAmpResult is the read-amplification experiment.
type readAmpResult struct {
	Tables, KeysPerTable, Gets, ValueLen int
	Rows                                 []readAmpRow
}

// Row returns the row for a policy label.
func (r *readAmpResult) row(policy string) (readAmpRow, bool) {
	for _, x := range r.Rows {
		if x.Policy == policy {
			return x, true
		}
	}
	return readAmpRow{}, false
}

// readAmpPolicies returns the configurations measured: none, bloom(10) and
// cuckoo at each budget, plus bloom at the same budgets.
func readAmpPolicies(budgets []int) ([]string, []pebble.FilterPolicy) {
	names := []string{"none", "bloom(10)"}
	pols := []pebble.FilterPolicy{pebble.NoFilterPolicy, pbloom.FilterPolicy(10)}
	for _, b := range budgets {
		names = append(names, fmt.Sprintf("cuckoo(%d)", b))
		pols = append(pols, cuckoopolicy.FilterPolicy(b))
		if b != 10 {
			names = append(names, fmt.Sprintf("bloom(%d)", b))
			pols = append(pols, pbloom.FilterPolicy(b))
		}
	}
	return names, pols
}

// measureReadAmp builds, per policy, a Pebble database on an in-memory FS
// with a one-byte block cache, automatic compactions off and the policy on
// all seven levels; writes RATables overlapping L0 tables (random keys, one
// flush each); and counts what Gets read: absent keys, then present keys.
// It then compacts everything into L6 and counts what SeekPrefixGE of
// absent keys reads, with and without IterOptions.UseL6Filters.
func measureReadAmp(c Config, pr *progress.Printer) (*readAmpResult, error) {
	r := &readAmpResult{Tables: c.RATables, KeysPerTable: c.RAKeysPerTable, Gets: c.RAGets, ValueLen: 100}
	names, pols := readAmpPolicies(c.RABudgets)
	for i, pol := range pols {
		pr.Stage("readamp: %s: %d L0 tables of %d keys, %d Gets", names[i], c.RATables, c.RAKeysPerTable, c.RAGets)
		row, err := readAmpOne(c, r.ValueLen, names[i], pol, pr)
		if err != nil {
			return nil, fmt.Errorf("readamp %s: %w", names[i], err)
		}
		r.Rows = append(r.Rows, row)
	}
	return r, nil
}

// readAmpDB is one policy's database under measurement: an in-memory FS
// whose block reads are counted, and the key sets it holds and misses.
type readAmpDB struct {
	c        Config
	pr       *progress.Printer
	d        *pebble.DB
	mem      vfs.FS
	cfs      *pebbletest.CountingFS
	layouts  map[string]map[int64]sstblock.Kind // file base name -> block offset -> kind
	value    []byte
	members  keys.Gen
	absent   keys.Gen
	fillKeys int
}

func readAmpOne(c Config, valueLen int, name string, pol pebble.FilterPolicy, pr *progress.Printer) (row readAmpRow, err error) {
	row.Policy = name
	cache := pebble.NewCache(1)
	defer cache.Unref()
	db, err := openReadAmpDB(c, valueLen, pol, cache, pr)
	if err != nil {
		return row, err
	}
	defer func() {
		if cerr := db.d.Close(); err == nil {
			err = cerr
		}
	}()
	if err := db.fill(); err != nil {
		return row, err
	}
	if err := db.measureL0(&row); err != nil {
		return row, err
	}
	pr.Stage("readamp: %s: compacting into L6", name)
	if err := db.d.Compact(context.Background(), []byte{0}, bytes.Repeat([]byte{0xff}, keys.ShortLen+1), false); err != nil {
		return row, err
	}
	return row, db.measureL6(&row)
}

// openReadAmpDB opens a database on an in-memory FS with a one-byte block
// cache, automatic compactions off and pol on all seven levels.
func openReadAmpDB(c Config, valueLen int, pol pebble.FilterPolicy, cache *pebble.Cache, pr *progress.Printer) (*readAmpDB, error) {
	mem := vfs.NewMem()
	db := &readAmpDB{c: c, pr: pr, mem: mem, cfs: pebbletest.NewCountingFS(mem),
		value:   bytes.Repeat([]byte("v"), valueLen),
		members: keys.Gen{Seed: c.Seed*1000 + 41, Width: keys.ShortLen},
		absent:  keys.Gen{Seed: c.Seed*1000 + 42, Width: keys.ShortLen}}
	opts := &pebble.Options{
		FS:                          db.cfs,
		Cache:                       cache,
		DisableAutomaticCompactions: true,
		L0CompactionThreshold:       1 << 20,
		L0StopWritesThreshold:       1 << 20,
		MemTableSize:                64 << 20,
		FormatMajorVersion:          pebble.FormatNewest,
		Logger:                      pebbletest.QuietLogger{},
	}
	for l := range opts.Levels {
		opts.Levels[l].FilterPolicy = pol
		opts.Levels[l].FilterType = pebble.TableFilter
	}
	d, err := pebble.Open("db", opts)
	db.d = d
	return db, err
}

// fill writes RATables overlapping L0 tables of random keys, one flush each.
func (db *readAmpDB) fill() error {
	key := make([]byte, keys.ShortLen)
	for t := range db.c.RATables {
		b := db.d.NewBatch()
		for i := t * db.c.RAKeysPerTable; i < (t+1)*db.c.RAKeysPerTable; i++ {
			db.members.Put(key, uint64(i))
			if err := b.Set(key, db.value, nil); err != nil {
				return err
			}
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			return err
		}
		if err := db.d.Flush(); err != nil {
			return err
		}
	}
	db.fillKeys = db.c.RATables * db.c.RAKeysPerTable
	return nil
}

// layout reads every table's block layout, for the counts to classify
// reads by, and returns the tables and filter bytes per key of each level.
func (db *readAmpDB) layout() (tables [7]int, filterPerKey [7]float64, err error) {
	levels, err := db.d.SSTables(pebble.WithProperties())
	if err != nil {
		return tables, filterPerKey, err
	}
	db.layouts = map[string]map[int64]sstblock.Kind{}
	var fsz, ents [7]uint64
	for l, files := range levels {
		for _, f := range files {
			tables[l]++
			fsz[l] += f.Properties.FilterSize
			ents[l] += f.Properties.NumEntries
			fn := fmt.Sprintf("%06d.sst", uint64(f.BackingSSTNum))
			m, err := sstblock.Kinds(db.mem, path.Join("db", fn), sstable.ReaderOptions{})
			if err != nil {
				return tables, filterPerKey, err
			}
			db.layouts[fn] = m
		}
		if ents[l] > 0 {
			filterPerKey[l] = float64(fsz[l]) / float64(ents[l])
		}
	}
	return tables, filterPerKey, nil
}

// measure runs op n times after a warm-up and returns what one op read on
// average, and its time.
func (db *readAmpDB) measure(n int, op func(i int) error) (readAmpIO, error) {
	for i := range min(n, 50) { // open the tables, warm the file cache
		if err := op(i); err != nil {
			return readAmpIO{}, err
		}
	}
	m0 := db.d.Metrics().Filter
	db.cfs.Reset()
	start := time.Now()
	for i := range n {
		if err := op(i); err != nil {
			return readAmpIO{}, err
		}
		if i%1024 == 0 {
			db.pr.Tick("%d/%d", i, n)
		}
	}
	el := time.Since(start)
	m1 := db.d.Metrics().Filter
	reads, nbytes := blockCounts(db.cfs, db.layouts)
	f := float64(n)
	io := readAmpIO{
		DataBlocks: float64(reads[sstblock.Data]) / f, DataBytes: float64(nbytes[sstblock.Data]) / f,
		FilterBytes: float64(nbytes[sstblock.Filter]) / f, IndexBytes: float64(nbytes[sstblock.Index]) / f,
		OtherBytes: float64(nbytes[sstblock.Other]) / f,
		FilterHits: float64(m1.Hits-m0.Hits) / f, FilterMiss: float64(m1.Misses-m0.Misses) / f,
		Ns: float64(el.Nanoseconds()) / f,
	}
	for k := range sstblock.NumKinds {
		io.TotalBytes += float64(nbytes[k]) / f
		io.Reads += float64(reads[k]) / f
	}
	return io, nil
}

// get returns an op that Gets key idx(i) of g and checks the answer: found
// with its value if want, not found otherwise.
func (db *readAmpDB) get(g keys.Gen, want bool, idx func(int) uint64) func(int) error {
	k := make([]byte, keys.ShortLen)
	return func(i int) error {
		g.Put(k, idx(i))
		v, closer, err := db.d.Get(k)
		switch {
		case errors.Is(err, pebble.ErrNotFound):
			if want {
				return fmt.Errorf("false negative: present key %x not found", k)
			}
			return nil
		case err != nil:
			return err
		}
		ok := bytes.Equal(v, db.value)
		closer.Close()
		if !want {
			return fmt.Errorf("absent key %x found", k)
		}
		if !ok {
			return fmt.Errorf("key %x: wrong value", k)
		}
		return nil
	}
}

// measureL0 counts what Gets of absent keys, then of present keys read
// through the overlapping L0 tables.
func (db *readAmpDB) measureL0(row *readAmpRow) error {
	tables, fpk, err := db.layout()
	if err != nil {
		return err
	}
	row.L0Tables, row.L0FilterPerKey = tables[0], fpk[0]
	n := db.c.RAGets
	if row.AbsentGet, err = db.measure(n, db.get(db.absent, false, func(i int) uint64 { return uint64(i) })); err != nil {
		return err
	}
	stride := uint64(db.fillKeys/max(1, n)) | 1
	row.PresentGet, err = db.measure(n, db.get(db.members, true, func(i int) uint64 {
		return (uint64(i) * stride * 2654435761) % uint64(db.fillKeys)
	}))
	return err
}

// measureL6 counts what SeekPrefixGE of absent keys reads once everything
// is in L6, with IterOptions.UseL6Filters and without.
func (db *readAmpDB) measureL6(row *readAmpRow) error {
	tables, fpk, err := db.layout()
	if err != nil {
		return err
	}
	row.L6Tables, row.L6FilterPerKey = tables[6], fpk[6]
	for _, useL6 := range []bool{true, false} {
		it, err := db.d.NewIter(&pebble.IterOptions{UseL6Filters: useL6})
		if err != nil {
			return err
		}
		k := make([]byte, keys.ShortLen)
		io, err := db.measure(db.c.RAGets, func(i int) error {
			db.absent.Put(k, uint64(i))
			if it.SeekPrefixGE(k) {
				return fmt.Errorf("absent key %x found by SeekPrefixGE", k)
			}
			return it.Error()
		})
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if useL6 {
			row.L6AbsentSeek = io
		} else {
			row.L6AbsentNoFilter = io
		}
	}
	return nil
}

// writeReadAmp writes section 5: what Gets read in L0 and seeks in L6.
func (r *report) writeReadAmp(w *markdown.Doc) {
	if !w.Section("5. Read amplification in a Pebble database", r.ReadAmp != nil) {
		return
	}
	ra := r.ReadAmp
	fmt.Fprintf(w, "An in-memory vfs (vfs.NewMem) wrapped by a counting FS that classifies every ReadAt by the "+
		"tables' layouts (data, filter, index blocks); a one-byte block cache, so every block a Get touches is read; "+
		"automatic compactions off; the policy on all seven levels. %d overlapping L0 tables of %d random 16-byte keys "+
		"(%d-byte values), then %d Gets of absent keys and %d of present keys; then a manual compaction into L6 and "+
		"%d SeekPrefixGE of absent keys through one iterator, with IterOptions.UseL6Filters (db.Get never consults L6 "+
		"filters) and without. Per operation: data blocks and bytes read; filter and index bytes are what the one-byte "+
		"cache makes Pebble re-read each time (a real cache keeps them). Filter hits/misses from db.Metrics().Filter.\n\n",
		ra.Tables, ra.KeysPerTable, ra.ValueLen, ra.Gets, ra.Gets, ra.Gets)
	var rows [][]string
	bl, _ := ra.row("bloom(10)")
	for _, x := range ra.Rows {
		rows = append(rows, []string{x.Policy, fmt.Sprint(x.L0Tables), f2(x.L0FilterPerKey),
			f2(x.AbsentGet.DataBlocks), fmt.Sprintf("%.0f", x.AbsentGet.DataBytes), fmt.Sprintf("%.0f", x.AbsentGet.FilterBytes),
			fmt.Sprintf("%.0f", x.AbsentGet.TotalBytes), f2(x.AbsentGet.FilterHits),
			fmt.Sprintf("%.0f", x.AbsentGet.Ns) + ratioStr(x.AbsentGet.Ns, bl.AbsentGet.Ns),
			f2(x.PresentGet.DataBlocks), fmt.Sprintf("%.0f", x.PresentGet.DataBytes),
			fmt.Sprintf("%.0f", x.PresentGet.Ns) + ratioStr(x.PresentGet.Ns, bl.PresentGet.Ns)})
	}
	w.WriteString("L0, db.Get:\n\n")
	w.Table([]string{"policy", "L0 tables", "filter B/key", "absent: data blocks", "data B", "filter B", "all B",
		"filter hits", "ns (vs bloom(10))", "present: data blocks", "data B", "ns (vs bloom(10))"}, rows)
	rows = nil
	for _, x := range ra.Rows {
		rows = append(rows, []string{x.Policy, fmt.Sprint(x.L6Tables), f2(x.L6FilterPerKey),
			f2(x.L6AbsentSeek.DataBlocks), fmt.Sprintf("%.0f", x.L6AbsentSeek.TotalBytes), fmt.Sprintf("%.0f", x.L6AbsentSeek.Ns),
			f2(x.L6AbsentNoFilter.DataBlocks), fmt.Sprintf("%.0f", x.L6AbsentNoFilter.TotalBytes), fmt.Sprintf("%.0f", x.L6AbsentNoFilter.Ns)})
	}
	w.WriteString("L6, SeekPrefixGE of absent keys:\n\n")
	w.Table([]string{"policy", "L6 tables", "filter B/key", "UseL6Filters: data blocks", "all B", "ns",
		"default: data blocks", "all B", "ns"}, rows)
}

// readAmpVerdicts sets each cuckoo budget beside bloom at the same budget
// and beside no filter.
func (r *report) readAmpVerdicts() []string {
	ra := r.ReadAmp
	if ra == nil {
		return nil
	}
	var v []string
	none, _ := ra.row("none")
	for _, row := range ra.Rows {
		if !strings.HasPrefix(row.Policy, "cuckoo(") {
			continue
		}
		bname := "bloom(" + strings.TrimPrefix(row.Policy, "cuckoo(")
		bl, ok := ra.row(bname)
		if !ok {
			continue
		}
		v = append(v, fmt.Sprintf("Read amplification, %s: %.3f data blocks per absent Get against %.3f for %s and %.2f without a filter; %.2f against %.2f filter bytes per key.",
			row.Policy, row.AbsentGet.DataBlocks, bl.AbsentGet.DataBlocks, bname, none.AbsentGet.DataBlocks, row.L0FilterPerKey, bl.L0FilterPerKey))
	}
	return v
}
