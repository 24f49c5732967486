package workload

import (
	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/pebble/v2"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// shapeSpec is one LSM shape. Every shape but deep is loaded organically
// once (a reference database), and every policy's database is then built
// from the reference's tables (layout.go); deep's layout is synthetic.
type shapeSpec struct {
	Name  string
	Keys  keyKind
	Burst bool // the last part written as overlapping L0 tables, compactions off
	Deep  bool // L1..L6 at a size ratio of about 10 and four L0 sublevels, built directly
}

func (s shapeSpec) mvcc() bool { return s.Keys == keysMVCC }

var allShapes = []shapeSpec{
	{Name: "steady"},
	{Name: "burst", Burst: true},
	{Name: "mvcc", Keys: keysMVCC},
	{Name: "blockstore", Keys: keysBlock},
	{Name: "state", Keys: keysState},
	{Name: "deep", Deep: true},
}

// shapeSeed is the key space seed of a shape.
func shapeSeed(seed uint64, name string) uint64 {
	return seed*1_000_003 + xxhash.Sum64String(name)
}

// mvccVersions is the number of versions of each MVCC key.
const mvccVersions = 3

// burstShare is the share of the keys the write burst writes into L0.
const burstShare = 0.4

// deepSublevels is the number of L0 sublevels of the deep shape.
const deepSublevels = 4

// lsmShape is what db.Metrics() and FilterUsage say about a database.
type lsmShape struct {
	Tables      [7]int64
	Bytes       [7]int64
	Keys        [7]uint64
	FilterBytes [7]uint64
	IndexBytes  [7]uint64 // index blocks, a two-level index's top level included (table property IndexSize)
	Sublevels   int
	Written     uint64 // sstable bytes flushes and compactions wrote during an organic load
}

func (s lsmShape) totalBytes() int64 {
	var t int64
	for _, b := range s.Bytes {
		t += b
	}
	return t
}

// totalIndex is the bytes of the index blocks on every level.
func (s lsmShape) totalIndex() uint64 {
	var t uint64
	for _, b := range s.IndexBytes {
		t += b
	}
	return t
}

func (s lsmShape) totalFilter() (bytes, keys uint64) {
	for l := range s.Keys {
		bytes += s.FilterBytes[l]
		keys += s.Keys[l]
	}
	return bytes, keys
}

// loadedFilter is the filter bytes on the levels a lookup loads: L0-L5
// for Get, every level with useL6 (iterators with UseL6Filters).
func (s lsmShape) loadedFilter(useL6 bool) uint64 {
	var bytes uint64
	for l, b := range s.FilterBytes {
		if l < 6 || useL6 {
			bytes += b
		}
	}
	return bytes
}

// getProbes is the number of filter probes an absent Get makes per level:
// one per L0 sublevel, one per populated level from L1 to L5, none in L6
// (Get never reads L6 filters).
func (s lsmShape) getProbes() [7]float64 {
	var p [7]float64
	p[0] = float64(s.Sublevels)
	for l := 1; l < 6; l++ {
		if s.Tables[l] > 0 {
			p[l] = 1
		}
	}
	return p
}

func readShape(db *pebble.DB) (lsmShape, error) {
	var s lsmShape
	m := db.Metrics()
	for l := range s.Tables {
		s.Tables[l] = m.Levels[l].TablesCount
		s.Bytes[l] = m.Levels[l].TablesSize
	}
	s.Sublevels = int(m.Levels[0].Sublevels)
	usage, err := cuckoopolicy.FilterUsage(db)
	if err != nil {
		return s, err
	}
	for _, u := range usage {
		s.Keys[u.Level] += u.Entries
		s.FilterBytes[u.Level] += u.FilterBytes
	}
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		return s, err
	}
	for l, tables := range levels {
		for _, t := range tables {
			if t.Properties != nil {
				s.IndexBytes[l] += t.Properties.IndexSize
			}
		}
	}
	return s, nil
}
