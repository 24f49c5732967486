package workload

import (
	"bytes"
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// tableSpec is one table of a layout: its level, where its entries come
// from, and what it must hold.
type tableSpec struct {
	Level   int
	Seq     uint64   // L0: the ingestion order (the reference's largest sequence number)
	File    string   // the reference table whose entries it copies; "" for a synthetic table
	Idx     []uint64 // a synthetic table's key indices, in key order (version 0 values)
	Lo, Hi  []byte   // smallest and largest user key
	Entries uint64
}

// layout is the tables every policy's database of a shape gets: the same
// levels, L0 order, bounds and entries; only the filter blocks differ.
type layout struct {
	Tables    []tableSpec // by level, then by smallest key (L0: by Seq)
	Sublevels int         // L0 sublevels of the reference database (db.Metrics)
}

// captureLayout records the tables of the reference database db (closed
// afterwards by the caller; its files stay in dir until every policy's
// database is built).
func captureLayout(db *pebble.DB, dir string) (layout, error) {
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		return layout{}, err
	}
	lay := layout{Sublevels: int(db.Metrics().Levels[0].Sublevels)}
	for l, tables := range levels {
		for _, t := range tables {
			if t.Virtual || t.Properties == nil {
				return layout{}, fmt.Errorf("level %d: table %s is virtual or has no properties", l, t.FileNum)
			}
			lay.Tables = append(lay.Tables, tableSpec{Level: l, Seq: uint64(t.LargestSeqNum),
				File: filepath.Join(dir, fmt.Sprintf("%s.sst", t.BackingSSTNum)),
				Lo:   slices.Clone(t.Smallest.UserKey), Hi: slices.Clone(t.Largest.UserKey), Entries: t.Properties.NumEntries})
		}
	}
	lay.sort()
	return lay, nil
}

func (lay *layout) sort() {
	slices.SortStableFunc(lay.Tables, func(a, b tableSpec) int {
		if c := cmp.Compare(a.Level, b.Level); c != 0 {
			return c
		}
		if a.Level == 0 {
			return cmp.Compare(a.Seq, b.Seq)
		}
		return bytes.Compare(a.Lo, b.Lo)
	})
}

// deepLevelKeys returns the entries of each level of the deep shape's n:
// L1 to L6 at a size ratio of 10 with at least minKeys each, and
// deepSublevels L0 tables of L1's size.
func deepLevelKeys(n, minKeys int) (sub int, levels [7]int) {
	top := n
	for range 5 {
		top /= 10
	}
	sub = max(minKeys, top)
	rest := n - deepSublevels*sub
	for l := 5; l >= 1; l-- {
		levels[l] = max(minKeys, rest*9/10/pow10(6-l))
	}
	levels[6] = rest
	for l := 1; l < 6; l++ {
		levels[6] -= levels[l]
	}
	levels[0] = deepSublevels * sub
	return sub, levels
}

func pow10(k int) int {
	p := 1
	for range k {
		p *= 10
	}
	return p
}

// deepLayout is the deep shape's synthetic layout over keys 0..n-1 of ks:
// the oldest keys in L6, each level above newer ones, tables of at most
// tableKeys entries; then deepSublevels L0 tables, one per sublevel, each
// spanning the key space.
func deepLayout(ks keyspace, n, tableKeys int) layout {
	sub, levels := deepLevelKeys(n, 50)
	lay := layout{Sublevels: deepSublevels}
	next := uint64(0)
	sorted := func(count int) []uint64 {
		idx := make([]uint64, count)
		for j := range idx {
			idx[j] = next + uint64(j)
		}
		next += uint64(count)
		slices.SortFunc(idx, func(a, b uint64) int { return bytes.Compare(ks.key(nil, a), ks.key(nil, b)) })
		return idx
	}
	add := func(level int, seq uint64, idx []uint64) {
		lay.Tables = append(lay.Tables, tableSpec{Level: level, Seq: seq, Idx: idx,
			Lo: ks.key(nil, idx[0]), Hi: ks.key(nil, idx[len(idx)-1]), Entries: uint64(len(idx))})
	}
	for l := 6; l >= 1; l-- {
		idx := sorted(levels[l])
		for len(idx) > 0 {
			k := min(len(idx), tableKeys)
			add(l, 0, idx[:k])
			idx = idx[k:]
		}
	}
	for j := range deepSublevels {
		add(0, uint64(j+1), sorted(sub))
	}
	lay.sort()
	return lay
}

// kv is one entry of a table.
type kv struct{ k, v []byte }

// tableEntries returns the entries of t in key order: read from the
// reference table, or generated from a synthetic table's key indices.
func tableEntries(t tableSpec, ks keyspace, o *pebble.Options) ([]kv, error) {
	if t.File == "" {
		out := make([]kv, len(t.Idx))
		for j, i := range t.Idx {
			out[j] = kv{ks.key(nil, i), value(make([]byte, ks.valueLen()), ks.valueLen(), i, 0)}
		}
		return out, nil
	}
	rd, err := openTable(vfs.Default, t.File, o)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	it, err := rd.NewIter(sstable.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
	if err != nil {
		return nil, err
	}
	out := make([]kv, 0, t.Entries)
	for e := it.First(); e != nil; e = it.Next() {
		if k := e.K.Kind(); k != pebble.InternalKeyKindSet && k != pebble.InternalKeyKindSetWithDelete {
			it.Close()
			return nil, fmt.Errorf("%s: entry of kind %s", t.File, k)
		}
		v, _, err := e.Value(nil)
		if err != nil {
			it.Close()
			return nil, err
		}
		out = append(out, kv{slices.Clone(e.K.UserKey), slices.Clone(v)})
	}
	return out, it.Close()
}

// tableSig is what the identity check compares of one table.
type tableSig struct {
	Level, Sublevel int
	Lo, Hi          string
	Entries         uint64
	Seq             uint64 // largest sequence number; 0 in a layout's expectation
}

// lsmSig is the identity of an LSM: every table's level, L0 sublevel,
// bounds and entries, and the number of L0 sublevels.
type lsmSig struct {
	Tables    []tableSig
	Sublevels int
}

// sig is the LSM the layout describes; sequence numbers are left out (the
// reference's are not the ingested databases').
func (lay layout) sig() lsmSig {
	s := lsmSig{Sublevels: lay.Sublevels}
	for _, t := range lay.Tables {
		s.Tables = append(s.Tables, tableSig{Level: t.Level, Lo: string(t.Lo), Hi: string(t.Hi), Entries: t.Entries})
	}
	seqs := make([]uint64, len(lay.Tables))
	for j, t := range lay.Tables {
		seqs[j] = t.Seq
	}
	assignSublevels(s.Tables, seqs)
	return s
}

// readSig reads db's LSM identity.
func readSig(db *pebble.DB) (lsmSig, error) {
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		return lsmSig{}, err
	}
	s := lsmSig{Sublevels: int(db.Metrics().Levels[0].Sublevels)}
	var seqs []uint64
	for l, tables := range levels {
		if l == 0 {
			tables = slices.Clone(tables)
			slices.SortStableFunc(tables, func(a, b pebble.SSTableInfo) int { return cmp.Compare(a.LargestSeqNum, b.LargestSeqNum) })
		}
		for _, t := range tables {
			var entries uint64
			if t.Properties != nil {
				entries = t.Properties.NumEntries
			}
			s.Tables = append(s.Tables, tableSig{Level: l, Lo: string(t.Smallest.UserKey), Hi: string(t.Largest.UserKey),
				Entries: entries, Seq: uint64(t.LargestSeqNum)})
			seqs = append(seqs, uint64(t.LargestSeqNum))
		}
	}
	assignSublevels(s.Tables, seqs)
	return s, nil
}

// assignSublevels gives each L0 table (in ascending seqs order) the
// sublevel one above the highest older L0 table whose bounds overlap it,
// as Pebble orders L0 by sequence number and key range.
func assignSublevels(ts []tableSig, seqs []uint64) {
	var l0 []int
	for j, t := range ts {
		if t.Level == 0 {
			l0 = append(l0, j)
		}
	}
	slices.SortStableFunc(l0, func(a, b int) int { return cmp.Compare(seqs[a], seqs[b]) })
	for x, a := range l0 {
		sub := 0
		for _, b := range l0[:x] {
			if ts[a].Lo <= ts[b].Hi && ts[b].Lo <= ts[a].Hi {
				sub = max(sub, ts[b].Sublevel+1)
			}
		}
		ts[a].Sublevel = sub
	}
}

// diffSig returns nil if got is the LSM want describes, and otherwise an
// error naming the first level where they differ. Sequence numbers are
// compared where want has them (not in a layout's expectation).
func diffSig(want, got lsmSig) error {
	byLevel := func(s lsmSig, l int) []tableSig {
		var out []tableSig
		for _, t := range s.Tables {
			if t.Level == l {
				out = append(out, t)
			}
		}
		return out
	}
	for l := range 7 {
		w, g := byLevel(want, l), byLevel(got, l)
		if len(w) != len(g) {
			return fmt.Errorf("level %d: %d tables, want %d", l, len(g), len(w))
		}
		for j := range w {
			a, b := w[j], g[j]
			if a.Seq == 0 {
				b.Seq = 0
			}
			if a != b {
				return fmt.Errorf("level %d: table %d is %s, want %s", l, j, b, a)
			}
		}
	}
	if want.Sublevels != got.Sublevels {
		return fmt.Errorf("level 0: %d sublevels, want %d", got.Sublevels, want.Sublevels)
	}
	return nil
}

func (t tableSig) String() string {
	short := func(s string) string {
		if len(s) > 12 {
			return fmt.Sprintf("%x…", s[:12])
		}
		return fmt.Sprintf("%x", s)
	}
	return fmt.Sprintf("[%s, %s] sublevel %d, %d entries, seq %d", short(t.Lo), short(t.Hi), t.Sublevel, t.Entries, t.Seq)
}

// layoutSummary is what the report says about a layout as built.
type layoutSummary struct {
	Synthetic bool
	Tables    [7]int
	Entries   [7]uint64
	Sublevels int
	Moved     int // tables ingestion placed on another level than the reference's
}

func (lay layout) summary() layoutSummary {
	s := layoutSummary{Sublevels: lay.Sublevels}
	for _, t := range lay.Tables {
		s.Tables[t.Level]++
		s.Entries[t.Level] += t.Entries
	}
	return s
}

// moved counts the tables whose level differs between two layouts of the
// same tables.
func moved(a, b layout) int {
	type id struct {
		lo, hi  string
		entries uint64
	}
	level := map[id]int{}
	for _, t := range a.Tables {
		level[id{string(t.Lo), string(t.Hi), t.Entries}] = t.Level
	}
	n := 0
	for _, t := range b.Tables {
		if level[id{string(t.Lo), string(t.Hi), t.Entries}] != t.Level {
			n++
		}
	}
	return n
}

// checkDeep returns an error if the deep shape was not built as it must
// be: every level from L1 to L6 populated and deepSublevels L0 sublevels.
func checkDeep(s shapeSpec, lay layoutSummary) error {
	if !s.Deep {
		return nil
	}
	for l := 1; l < 7; l++ {
		if lay.Tables[l] == 0 {
			return fmt.Errorf("level %d: empty after ingestion", l)
		}
	}
	if lay.Sublevels != deepSublevels {
		return fmt.Errorf("level 0: %d sublevels after ingestion, want %d", lay.Sublevels, deepSublevels)
	}
	return nil
}
