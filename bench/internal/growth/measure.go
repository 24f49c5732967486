package growth

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// getLevels is the levels whose filters db.Get loads: L0 to L5 (Pebble
// v2.1.7's Get never reads L6 filters).
const getLevels = 6

// upperFilterBytes is the filter bytes on db's L0-L5.
func upperFilterBytes(db *pebble.DB) (uint64, error) {
	rows, err := cuckoopolicy.FilterUsage(db)
	if err != nil {
		return 0, fmt.Errorf("growth: filter usage: %w", err)
	}
	var b uint64
	for _, u := range rows {
		if u.Level < getLevels {
			b += u.FilterBytes
		}
	}
	return b, nil
}

// measure takes one database's row of a checkpoint.
func (s *scenario) measure(st *store) (Row, error) {
	row, unfiltered, err := st.shape()
	if err != nil {
		return row, err
	}
	err = absentGets(st.db, s.stream, 0, s.cfg.Absent, unfiltered, &row.Absent)
	return row, err
}

// shape takes st's row but for its absent Gets, and the bounds of its L0-L5
// tables without a filter.
func (st *store) shape() (Row, []span, error) {
	row := Row{Policy: st.name, Plan: st.plan.String()}
	if st.live != nil {
		row.Plan = st.live.Plan().String()
	}
	var err error
	if row.FilterBytes, err = upperFilterBytes(st.db); err != nil {
		return row, nil, err
	}
	tables, err := st.db.SSTables(pebble.WithProperties())
	if err != nil {
		return row, nil, fmt.Errorf("growth: tables of %s: %w", row.Policy, err)
	}
	var unfiltered []span
	for l, ts := range tables {
		row.Tables[l] = len(ts)
		for _, t := range ts {
			if t.Properties != nil {
				row.LevelFilterBytes[l] += t.Properties.FilterSize
				row.LevelEntries[l] += t.Properties.NumEntries
				if l < getLevels {
					row.ReferenceBytes += bloom10Bytes(t.Properties.NumEntries)
				}
			}
			if l < getLevels && (t.Properties == nil || t.Properties.FilterPolicyName == "") {
				unfiltered = append(unfiltered, span{t.Smallest.UserKey, t.Largest.UserKey})
			}
		}
	}
	return row, unfiltered, nil
}

// bloom10Bytes is the bytes of the filter block Pebble's bloom(10) writes
// for a table of n keys (every key of the stream is written once, so a
// table's entries are its keys): built with Pebble's own writer, once per
// n.
func bloom10Bytes(n uint64) uint64 {
	if b, ok := bloom10Sizes.Load(n); ok {
		return b.(uint64)
	}
	w := bloom.FilterPolicy(10).NewWriter(pebble.TableFilter)
	var k [8]byte
	for i := range n {
		binary.BigEndian.PutUint64(k[:], i)
		w.AddKey(k[:])
	}
	b := uint64(len(w.Finish(nil)))
	bloom10Sizes.Store(n, b)
	return b
}

var bloom10Sizes sync.Map

// span is a table's user-key bounds.
type span struct{ lo, hi []byte }

// absentGets runs the Gets of the stream's absent keys [from, to) on db
// and adds what they met to a.
//
// Pebble counts, per filter a lookup consults, a filter hit (the filter
// said absent: no data block read) or a miss (it said maybe: a data block
// read); for a key never written every miss is a false positive. A Get
// probes, in each level, only the tables whose bounds hold the key, and a
// table without a filter (none listed in unfiltered, L0-L5) is read with no
// filter consulted: each such probe is a data block read too, counted here
// from the bounds.
func absentGets(db *pebble.DB, s stream, from, to int, unfiltered []span, a *Absent) error {
	before := db.Metrics().Filter
	k := make([]byte, s.absent.Width)
	for i := from; i < to; i++ {
		s.absent.Put(k, uint64(i))
		a.Gets++
		v, closer, err := db.Get(k)
		switch {
		case errors.Is(err, pebble.ErrNotFound):
		case err != nil:
			return fmt.Errorf("growth: absent Get: %w", err)
		default:
			_ = v
			_ = closer.Close()
			a.Found++
		}
		for _, t := range unfiltered {
			if bytes.Compare(t.lo, k) <= 0 && bytes.Compare(k, t.hi) <= 0 {
				a.Unfiltered++
			}
		}
	}
	after := db.Metrics().Filter
	a.FilterHits += after.Hits - before.Hits
	a.FilterMisses += after.Misses - before.Misses
	return nil
}

// Absent is what one database's absent-key Gets met at a checkpoint.
type Absent struct {
	Gets         int
	Found        int   // absent keys found: must be 0
	FilterHits   int64 // filters that said absent
	FilterMisses int64 // filters that said maybe: false positives, each a data block read
	Unfiltered   int64 // probes of L0-L5 tables without a filter, each a data block read
}

// Reads is the data blocks the Gets read for keys they did not find.
func (a Absent) Reads() int64 { return a.FilterMisses + a.Unfiltered }

// Probes is the L0-L5 tables the Gets probed: the filters Pebble consulted
// and the tables without one.
func (a Absent) Probes() int64 { return a.FilterHits + a.FilterMisses + a.Unfiltered }

// PerProbe is Reads per probe: the false-positive rate a probed table
// showed, a table without a filter counted as a filter that said maybe.
func (a Absent) PerProbe() float64 {
	if a.Probes() == 0 {
		return 0
	}
	return float64(a.Reads()) / float64(a.Probes())
}

// PerGet is Reads per Get.
func (a Absent) PerGet() float64 {
	if a.Gets == 0 {
		return 0
	}
	return float64(a.Reads()) / float64(a.Gets)
}
