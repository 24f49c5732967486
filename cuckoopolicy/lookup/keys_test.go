package lookup

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/cockroachkvs"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// keySpace is the keys a randomized run writes and asks, in one comparer's
// encoding.
type keySpace interface {
	// comparer is the database's comparer.
	comparer() *pebble.Comparer
	// key is the i-th key of the grid the run writes, in the comparer's order.
	key(i int) []byte
	// once is the i-th key that is set at most once and may then be single
	// deleted, never written again.
	once(i int) []byte
	// probes appends keys the run never writes, but whose prefixes it may:
	// SeekPrefixGE may land on another key than the one asked.
	probes(dst [][]byte, rng *rand.Rand, n, grid int) [][]byte
}

// plainKeys are byte strings under Pebble's default comparer.
type plainKeys struct{}

func (plainKeys) comparer() *pebble.Comparer { return pebble.DefaultComparer }

func (plainKeys) key(i int) []byte { return fmt.Appendf(nil, "k%06d", i) }

// once sorts right after key(i), so range deletions cover it.
func (plainKeys) once(i int) []byte { return fmt.Appendf(nil, "k%06d/once", i) }

func (plainKeys) probes(dst [][]byte, rng *rand.Rand, n, grid int) [][]byte {
	dst = append(dst, nil, []byte{}, []byte("k"), []byte("z"))
	for range n {
		i := rng.IntN(grid)
		switch rng.IntN(3) {
		case 0:
			dst = append(dst, fmt.Appendf(nil, "k%06dx", i)) // after key(i)
		case 1:
			dst = append(dst, fmt.Appendf(nil, "k%05d", i)) // a prefix of a key
		default:
			dst = append(dst, fmt.Appendf(nil, "k%06d", grid+i)) // past the grid
		}
	}
	return dst
}

// roachKeys are CockroachDB MVCC keys: each of the grid's roach keys has
// versions (bare, then timestamps newest first), and Split cuts the
// timestamp off, so a filter holds roach keys.
type roachKeys struct{}

// roachVersions is the number of grid keys per roach key: the bare key and
// this many timestamps less one.
const roachVersions = 6

func (roachKeys) comparer() *pebble.Comparer { return &cockroachkvs.Comparer }

func roach(j int) []byte { return fmt.Appendf(nil, "/Table/7/1/%05d", j) }

// wall is the wall time of grid version v >= 1: higher versions are older.
func wall(v int) uint64 { return uint64(1_000_000 - 1000*v) }

func (roachKeys) key(i int) []byte {
	j, v := i/roachVersions, i%roachVersions
	if v == 0 {
		return cockroachkvs.EncodeMVCCKey(nil, roach(j), 0, 0)
	}
	return cockroachkvs.EncodeMVCCKey(nil, roach(j), wall(v), uint32(v%2)) // 9 and 13 bytes
}

func (roachKeys) once(i int) []byte {
	return cockroachkvs.EncodeMVCCKey(nil, fmt.Appendf(roach(i/roachVersions), "/once"), wall(1+i%roachVersions), 0)
}

func (roachKeys) probes(dst [][]byte, rng *rand.Rand, n, grid int) [][]byte {
	dst = append(dst, nil, []byte{})
	for range n {
		j, v := rng.IntN(grid/roachVersions), 1+rng.IntN(roachVersions-1)
		switch rng.IntN(4) {
		case 0: // between the grid's versions, above or below them all
			dst = append(dst, cockroachkvs.EncodeMVCCKey(nil, roach(j), wall(v)+uint64(rng.IntN(3))*300, uint32(rng.IntN(2))))
		case 1: // the grid key in its other encoding: equal to it
			dst = append(dst, otherEncoding(roachKeys{}.key(j*roachVersions+v)))
		case 2: // a roach key that has no version
			dst = append(dst, cockroachkvs.EncodeMVCCKey(nil, fmt.Appendf(roach(j), "x"), wall(v), 0))
		default: // a bare roach key past the grid
			dst = append(dst, cockroachkvs.EncodeMVCCKey(nil, roach(grid+j), 0, 0))
		}
	}
	return dst
}

// otherEncoding re-encodes an MVCC key's timestamp: 9 bytes (wall time) as 13
// with a zero logical time, which CockroachDB's comparer holds equal to it, and
// 13 bytes as 14 with the synthetic flag, also equal.
func otherEncoding(k []byte) []byte {
	switch k[len(k)-1] {
	case 9:
		out := append([]byte(nil), k[:len(k)-1]...)
		out = binary.BigEndian.AppendUint32(out, 0)
		return append(out, 13)
	case 13:
		out := append([]byte(nil), k[:len(k)-1]...)
		return append(out, 1, 14)
	}
	return k
}

// config is one database setup of the randomized tests.
type config struct {
	name  string
	keys  keySpace
	l6    bool // a filter written on L6 as on L0-L5 (a table moved down unchanged keeps its own)
	small bool // small memtables and tables, eager compactions: keys on every level
}

var configs = []config{
	{"default/filtered", plainKeys{}, true, true},
	{"default/noL6", plainKeys{}, false, true},
	{"cockroach/filtered", roachKeys{}, true, true},
	{"cockroach/noL6", roachKeys{}, false, true},
}

// options returns options on fs for c: cuckoopolicy.FilterPolicy(10) on every
// level, or on L0-L5 only, Pebble's concatenating merger, and, if small,
// small memtables and tables that automatic compactions spread over the
// levels.
func (c config) options(fs vfs.FS) *pebble.Options {
	o := &pebble.Options{
		FS:                 fs,
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             pebbletest.QuietLogger{},
		Merger:             pebble.DefaultMerger,
		Comparer:           c.keys.comparer(),
	}
	if _, ok := c.keys.(roachKeys); ok {
		o.KeySchema = cockroachkvs.KeySchema.Name
		o.KeySchemas = sstable.MakeKeySchemas(&cockroachkvs.KeySchema)
		o.BlockPropertyCollectors = cockroachkvs.BlockPropertyCollectors
	}
	if c.small {
		o.MemTableSize = 64 << 10
		o.L0CompactionThreshold = 4
		o.LBaseMaxBytes = 1
		o.Experimental.LevelMultiplier = 2
		o.TargetFileSizes[0] = 4 << 10
	}
	cuckoopolicy.Apply(o, cuckoopolicy.FilterPolicy(10))
	if !c.l6 {
		o.Levels[6].FilterPolicy = pebble.NoFilterPolicy
	}
	return o
}
