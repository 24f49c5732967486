package cuckoopolicy

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/cuckoo"
)

// The trailer that ends every filter block (see the package doc).
const (
	trailerLen    = 32
	formatVersion = 1
	magic         = 0x4f4f4b43 // "CKOO" in little-endian order
	flagSemiSort  = 1
	knownFlags    = flagSemiSort
)

// ErrInvalidFilter is returned by Inspect for bytes that are not a filter
// block of this policy.
var ErrInvalidFilter = errors.New("cuckoopolicy: invalid filter block")

// trailer holds a block's decoded parameters.
type trailer struct {
	buckets, seed uint64
	keys          uint32
	check         uint32
	f             uint8
	flags         uint8
	reserved      uint8
	version       uint8
}

func (t *trailer) params() cuckoo.StaticParams {
	return cuckoo.StaticParams{
		FingerprintBits: int(t.f),
		SemiSort:        t.flags&flagSemiSort != 0,
		Buckets:         t.buckets,
		Seed:            t.seed,
		Keys:            uint64(t.keys),
	}
}

// checksum covers every trailer field but the magic and itself: a flipped
// bit in the seed would otherwise turn lookups into false negatives.
func (t *trailer) checksum() uint32 {
	w := uint64(t.keys) | uint64(t.f)<<32 | uint64(t.flags)<<40 | uint64(t.reserved)<<48 | uint64(t.version)<<56
	x := t.buckets*0x9e3779b97f4a7c15 ^ (t.seed^0x5851f42d4c957f2d)*0xbf58476d1ce4e5b9 ^ w*0x94d049bb133111eb
	x ^= x >> 32
	x *= 0xd6e8feb86659fd93
	x ^= x >> 32
	return uint32(x)
}

func (t *trailer) put(b []byte) {
	binary.LittleEndian.PutUint64(b[0:], t.buckets)
	binary.LittleEndian.PutUint64(b[8:], t.seed)
	binary.LittleEndian.PutUint32(b[16:], t.keys)
	binary.LittleEndian.PutUint32(b[20:], t.checksum())
	b[24], b[25], b[26], b[27] = t.f, t.flags, t.reserved, t.version
	binary.LittleEndian.PutUint32(b[28:], magic)
}

// Reasons a block is rejected; MayContain answers true for all of them.
const (
	okBlock = iota
	errShort
	errMagic
	errVersion
	errChecksum
	errFlags
	errWidth
	errEmpty
	errLength
)

var reasons = [...]string{
	errShort:    "shorter than its trailer",
	errMagic:    "wrong magic",
	errVersion:  "unknown format version",
	errChecksum: "trailer checksum mismatch",
	errFlags:    "unknown flags",
	errWidth:    "unsupported fingerprint width",
	errEmpty:    "keys without buckets",
	errLength:   "table length does not match the bucket count",
}

// decode validates a block and returns a view of its table. It does not
// allocate. A block with zero keys and zero buckets is valid and empty.
func decode(b []byte) (cuckoo.Static, trailer, int) {
	var t trailer
	if len(b) < trailerLen {
		return cuckoo.Static{}, t, errShort
	}
	tb := b[len(b)-trailerLen:]
	if binary.LittleEndian.Uint32(tb[28:]) != magic {
		return cuckoo.Static{}, t, errMagic
	}
	t = trailer{
		buckets:  binary.LittleEndian.Uint64(tb[0:]),
		seed:     binary.LittleEndian.Uint64(tb[8:]),
		keys:     binary.LittleEndian.Uint32(tb[16:]),
		check:    binary.LittleEndian.Uint32(tb[20:]),
		f:        tb[24],
		flags:    tb[25],
		reserved: tb[26],
		version:  tb[27],
	}
	if t.version != formatVersion || t.reserved != 0 {
		return cuckoo.Static{}, t, errVersion
	}
	if t.check != t.checksum() {
		return cuckoo.Static{}, t, errChecksum
	}
	if t.flags&^knownFlags != 0 {
		return cuckoo.Static{}, t, errFlags
	}
	if t.f < cuckoo.MinFingerprintBits || t.f > cuckoo.MaxFingerprintBits {
		return cuckoo.Static{}, t, errWidth
	}
	if t.buckets == 0 && t.keys != 0 {
		return cuckoo.Static{}, t, errEmpty
	}
	s, err := cuckoo.NewStatic(b[:len(b)-trailerLen], t.params())
	if err != nil {
		return cuckoo.Static{}, t, errLength
	}
	return s, t, okBlock
}

// Inspect decodes a filter block's parameters, for tools and tests. It
// returns an error wrapping ErrInvalidFilter for anything that is not a
// valid block of this policy.
func Inspect(filter []byte) (Info, error) {
	_, t, r := decode(filter)
	if r != okBlock {
		return Info{}, fmt.Errorf("%w: %s (%d bytes)", ErrInvalidFilter, reasons[r], len(filter))
	}
	info := Info{
		FingerprintBits: int(t.f),
		SemiSorted:      t.flags&flagSemiSort != 0,
		Buckets:         int(t.buckets),
		Keys:            int(t.keys),
	}
	if t.buckets > 0 {
		info.LoadFactor = float64(t.keys) / (4 * float64(t.buckets))
	}
	if t.keys > 0 {
		info.BitsPerKey = float64(8*len(filter)) / float64(t.keys)
	}
	return info, nil
}

// Info describes a filter block, as Inspect decodes it.
type Info struct {
	FingerprintBits int     // bits per fingerprint, 4 to 32
	SemiSorted      bool    // buckets are semi-sorted (4f-4 bits each)
	Buckets, Keys   int     // buckets of four slots; distinct key hashes placed
	LoadFactor      float64 // Keys / (4 * Buckets)
	BitsPerKey      float64 // the whole block, trailer included, over Keys
}
