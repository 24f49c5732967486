package workload

import (
	"encoding/base32"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2/cockroachkvs"
)

// defaultValueLen is the length of every value written, except in the state
// shape (stateValueLen).
const defaultValueLen = 100

// stateValueLen is the length of the state shape's values: an account or a
// storage slot's RLP encoding is about this long.
const stateValueLen = 70

// mix is SplitMix64's finalizer: a bijection of uint64 that scatters
// consecutive integers.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// keyKind is the form of a shape's keys.
type keyKind int

const (
	keysPlain keyKind = iota // 16 random bytes
	keysMVCC                 // CockroachDB MVCC keys, mvccVersions versions each
	keysBlock                // IPFS blockstore: /blocks/<base32 multihash>
	keysState                // Ethereum state: 'a'+hash accounts, 'o'+hash+hash storage
)

// keyspace generates the keys of one shape. Key i for i < n is written (in
// the order i = 0, 1, ..., which is random key order); keys i >= n are
// absent. In the MVCC key space, i names a CockroachDB roach key that gets
// mvccVersions versions, and filters hold roach keys (the prefix
// Comparer.Split gives); in the others, filters hold whole keys. Every key
// space derives its first 8 random bytes from i by a bijection, so that
// distinct i give distinct keys.
type keyspace struct {
	seed uint64
	kind keyKind
	n    uint64 // keys written (MVCC: roach keys); the state shape's account count derives from it
}

// words returns four pseudo-random words of i; the first is a bijection of
// i.
func (ks keyspace) words(i uint64) [4]uint64 {
	return [4]uint64{mix(ks.seed ^ mix(i)), mix(ks.seed + i), mix(ks.seed ^ i ^ 0x51ed), mix(i*0x9e3779b97f4a7c15 + ks.seed)}
}

func appendWords(dst []byte, w [4]uint64, n int) []byte {
	for _, x := range w[:n] {
		dst = binary.BigEndian.AppendUint64(dst, x)
	}
	return dst
}

// blockEncoding is the base32 IPFS's flatfs and blockstore use for a
// multihash in a datastore key: RFC 4648, upper case, no padding.
var blockEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// key appends key i (plain, block, state) or the bare roach key i with no
// timestamp (MVCC) to dst.
func (ks keyspace) key(dst []byte, i uint64) []byte {
	w := ks.words(i)
	switch ks.kind {
	case keysMVCC:
		return cockroachkvs.EncodeMVCCKey(dst, ks.roach(i), 0, 0)
	case keysBlock:
		// A sha2-256 multihash: code 0x12, length 32, digest.
		mh := appendWords([]byte{0x12, 0x20}, w, 4)
		dst = append(dst, "/blocks/"...)
		return blockEncoding.AppendEncode(dst, mh)
	case keysState:
		// One key in four is an account, the others storage slots of an
		// account drawn at random among the written ones.
		if i%4 == 0 {
			return appendWords(append(dst, 'a'), ks.words(i/4|1<<62), 4)
		}
		accounts := max(1, (ks.n+3)/4)
		acct := mix(i^0xacc) % accounts
		dst = appendWords(append(dst, 'o'), ks.words(acct|1<<62), 4)
		return appendWords(dst, w, 4)
	default:
		return appendWords(dst, w, 2)
	}
}

// roach is the roach key (CockroachDB's user key without timestamp) of i.
func (ks keyspace) roach(i uint64) []byte {
	w := ks.words(i)
	return fmt.Appendf(nil, "/Table/%d/1/%016x", 100+w[0]%8, w[1])
}

// versionKey appends version v (0 = oldest) of MVCC roach key i.
func (ks keyspace) versionKey(dst []byte, i uint64, v int) []byte {
	return cockroachkvs.EncodeMVCCKey(dst, ks.roach(i), versionWall(i, v), 0)
}

// valueLen is the length of the key space's values.
func (ks keyspace) valueLen() int {
	if ks.kind == keysState {
		return stateValueLen
	}
	return defaultValueLen
}

// versionWall is the wall time of version v of key i: later versions are
// newer.
func versionWall(i uint64, v int) uint64 {
	return 1_700_000_000_000_000_000 + uint64(v)*1_000_000_000 + mix(i)%1_000_000
}

// value fills dst (n >= 9 bytes) with the value of key i at version v.
func value(dst []byte, n int, i uint64, v int) []byte {
	dst = dst[:n]
	binary.BigEndian.PutUint64(dst, i)
	dst[8] = byte(v)
	for j := 9; j < n; j++ {
		dst[j] = byte(i) + byte(j)
	}
	return dst
}

// checkValue says whether got is the n-byte value of key i at version v.
func checkValue(got []byte, n int, i uint64, v int) bool {
	return len(got) == n && binary.BigEndian.Uint64(got) == i && got[8] == byte(v)
}
