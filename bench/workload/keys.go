package workload

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2/cockroachkvs"
)

// ValueLen is the length of every value written.
const ValueLen = 100

// mix is SplitMix64's finalizer: a bijection of uint64 that scatters
// consecutive integers.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// keyspace generates the keys of one shape. Key i for i < n is written (in
// the order i = 0, 1, ..., which is random key order); keys i >= n are
// absent. In the plain key spaces a key is 16 bytes drawn from i; in the MVCC
// key space, i names a CockroachDB roach key that gets mvccVersions versions,
// and filters hold roach keys (the prefix Comparer.Split gives).
type keyspace struct {
	seed uint64
	mvcc bool
}

// key appends key i (plain) or the bare roach key i with no timestamp (MVCC)
// to dst.
func (ks keyspace) key(dst []byte, i uint64) []byte {
	a, b := mix(ks.seed^mix(i)), mix(ks.seed+i)
	if !ks.mvcc {
		dst = binary.BigEndian.AppendUint64(dst, a)
		return binary.BigEndian.AppendUint64(dst, b)
	}
	roach := fmt.Appendf(nil, "/Table/%d/1/%016x", 100+a%8, b)
	return cockroachkvs.EncodeMVCCKey(dst, roach, 0, 0)
}

// versionKey appends version v (0 = oldest) of MVCC roach key i.
func (ks keyspace) versionKey(dst []byte, i uint64, v int) []byte {
	a, b := mix(ks.seed^mix(i)), mix(ks.seed+i)
	roach := fmt.Appendf(nil, "/Table/%d/1/%016x", 100+a%8, b)
	return cockroachkvs.EncodeMVCCKey(dst, roach, versionWall(i, v), 0)
}

// versionWall is the wall time of version v of key i: later versions are
// newer.
func versionWall(i uint64, v int) uint64 {
	return 1_700_000_000_000_000_000 + uint64(v)*1_000_000_000 + mix(i)%1_000_000
}

// value fills dst (ValueLen bytes) with the value of key i at version v.
func value(dst []byte, i uint64, v int) []byte {
	dst = dst[:ValueLen]
	binary.BigEndian.PutUint64(dst, i)
	dst[8] = byte(v)
	for j := 9; j < ValueLen; j++ {
		dst[j] = byte(i) + byte(j)
	}
	return dst
}

// checkValue says whether got is the value of key i at version v.
func checkValue(got []byte, i uint64, v int) bool {
	return len(got) == ValueLen && binary.BigEndian.Uint64(got) == i && got[8] == byte(v)
}
