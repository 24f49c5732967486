package cuckoopolicy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/static"
)

// The long trailer (versions 1 and 2) that ends the blocks of earlier
// releases, and the blocks the writer writes without buckets: empty tables,
// unfiltered and bloom blocks (see FORMAT.md).
const (
	trailerLen = 32
	// formatVersion is what the writer writes in a long trailer. Readers
	// also accept formatV1, which differs only in how the check field is
	// computed.
	formatVersion = 2
	formatV1      = 1
	magic         = 0x4f4f4b43 // "CKOO" in little-endian order
	checkFold     = 0x5bd1e995 // what a version 2 trailer folds to
	flagSemiSort  = 1
	// flagUnfiltered marks a block that holds no filter by design: no
	// buckets, the table's key count, and "may contain" for every key. A
	// live plan's level writes it where the plan has no filter.
	flagUnfiltered = 2
	// flagBloom marks a block whose table is a Pebble bloom filter block
	// (bloom.FilterPolicy's format: lines of 64 bytes, the probe count and
	// the line count), followed by the trailer with no buckets and the
	// table's key count. A live plan's level writes it below about 4 bits
	// per key, where no cuckoo filter fits.
	flagBloom  = 4
	knownFlags = flagSemiSort | flagUnfiltered | flagBloom
)

// The short trailer (version 3) that ends every block the writer writes with
// buckets: 16 bytes in place of the 8 bytes of padding and the 32-byte
// trailer. Its first 8 bytes are the padding that lets a lookup read the last
// bucket with one 8-byte load (lookups mask what lies past a bucket), so a
// block's fixed cost is 16 bytes. See FORMAT.md.
const (
	shortTrailerLen = 16
	shortVersion    = 3
	shortMagic      = 'c'
	shortFold       = 0x9e37 // what a version 3 trailer folds to
	// shortWord is the high 24 bits of a version 3 trailer's second word
	// with the flags it may carry cleared: its magic, version and flags.
	shortWord = shortMagic<<16 | shortVersion<<8
	// maxShortSeed is the largest seed the short trailer holds; the
	// builder's seeds count its attempts, so a larger one never comes.
	maxShortSeed = 1<<16 - 1
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

// fold is the version 2 check: the XOR of the trailer's four 8-byte words,
// its high and low halves XORed. The writer sets the check field so that a
// trailer folds to checkFold. A flipped bit anywhere in the trailer flips
// exactly one bit of the fold, so any single flipped bit is detected (a
// flipped seed bit would otherwise turn lookups into false negatives), and it
// costs MayContain three XORs, a shift and a fourth XOR.
func fold(m, seed, kc, w uint64) uint32 {
	x := m ^ seed ^ kc ^ w
	return uint32(x>>32) ^ uint32(x)
}

// checksumV1 is the version 1 check: the trailer's buckets, seed, key count
// and the word of width, flags, reserved byte and version, each rotated
// differently, folded into 32 bits. Version 2 replaced it with fold, which
// detects the same single flipped bits in fewer instructions: far beyond the
// cache, every instruction of a lookup counts.
func checksumV1(buckets, seed uint64, keys, w uint32) uint32 {
	x := uint32(buckets) ^ uint32(buckets>>32)
	x ^= bits.RotateLeft32(uint32(seed)^uint32(seed>>32), 7)
	x ^= bits.RotateLeft32(keys, 13) ^ bits.RotateLeft32(w, 19)
	return x ^ 0x5bd1e995
}

// put writes the trailer into b (trailerLen bytes), computing its check for
// its version: formatVersion, or formatV1 for tests of old blocks.
func (t *trailer) put(b []byte) {
	binary.LittleEndian.PutUint64(b[0:], t.buckets)
	binary.LittleEndian.PutUint64(b[8:], t.seed)
	binary.LittleEndian.PutUint32(b[16:], t.keys)
	binary.LittleEndian.PutUint32(b[20:], 0)
	b[24], b[25], b[26], b[27] = t.f, t.flags, t.reserved, t.version
	binary.LittleEndian.PutUint32(b[28:], magic)
	m, seed, kc, w := trailerWords(b)
	if t.version == formatV1 {
		binary.LittleEndian.PutUint32(b[20:], checksumV1(m, seed, uint32(kc), uint32(w)))
		return
	}
	binary.LittleEndian.PutUint32(b[20:], fold(m, seed, kc, w)^checkFold)
}

// fold16 is the version 3 check: the XOR of the trailer's two words folded
// to 16 bits. The writer sets the check field so that a trailer folds to
// shortFold; as with fold, any single flipped bit flips one bit of the fold.
func fold16(a, w uint64) uint16 {
	x := a ^ w
	x ^= x >> 32
	return uint16(x ^ x>>16)
}

// shortWords reads the short trailer of b, at least shortTrailerLen bytes
// long, as two little-endian words: buckets and key count, and seed, check,
// width, flags, version and magic.
func shortWords(b []byte) (a, w uint64) {
	tb := b[len(b)-shortTrailerLen:]
	_ = tb[shortTrailerLen-1]
	return binary.LittleEndian.Uint64(tb[0:]), binary.LittleEndian.Uint64(tb[8:])
}

// shortOK reports whether two words are a sound version 3 trailer: check,
// magic, version and flags. It is MayContain's test, small enough to inline.
func shortOK(a, w uint64) bool {
	return fold16(a, w) == shortFold && w>>40&^flagSemiSort == shortWord
}

// putShort writes t as a version 3 trailer into b (shortTrailerLen bytes).
// t.buckets and t.keys must fit 32 bits and t.seed 16.
func (t *trailer) putShort(b []byte) {
	a := t.buckets | uint64(t.keys)<<32
	w := t.seed | uint64(t.f)<<32 | uint64(t.flags)<<40 | uint64(shortVersion)<<48 | uint64(shortMagic)<<56
	w |= uint64(fold16(a, w)^shortFold) << 16
	binary.LittleEndian.PutUint64(b[0:], a)
	binary.LittleEndian.PutUint64(b[8:], w)
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
	errKeys
	errLength
	errUnfiltered
	errBloom
	errShortEmpty
)

var reasons = [...]string{
	errShort:      "shorter than its trailer",
	errMagic:      "wrong magic",
	errVersion:    "unknown format version or nonzero reserved byte",
	errChecksum:   "trailer check mismatch",
	errFlags:      "unknown flags",
	errWidth:      "unsupported fingerprint width",
	errEmpty:      "keys without buckets (a table too large to filter)",
	errKeys:       "more keys than slots",
	errLength:     "table length does not match the bucket count",
	errUnfiltered: "unfiltered block with buckets or a table",
	errBloom:      "bloom block with buckets, no keys, other flags or a malformed bloom table, or a malformed raw bloom block",
	errShortEmpty: "short trailer without buckets",
}

// check validates a block and returns okBlock or the reason it is rejected.
// A block with zero keys and zero buckets is valid and empty. check does not
// allocate.
func check(b []byte) int {
	if isRawBloom(b) {
		if !bloomTableOK(b) {
			return errBloom
		}
		return okBlock
	}
	if isShort(b) {
		return checkShort(b)
	}
	if len(b) < trailerLen {
		return errShort
	}
	m, seed, kc, w := trailerWords(b)
	keys, f := uint32(kc), w&0xff
	if r := trailerReason(m, seed, kc, w); r != okBlock {
		return r
	}
	if w&(flagBloom<<8) != 0 {
		if m != 0 || keys == 0 || w&((flagSemiSort|flagUnfiltered)<<8) != 0 || f != cuckoohash.MinFingerprintBits ||
			!bloomTableOK(b[:len(b)-trailerLen]) {
			return errBloom
		}
		return okBlock
	}
	if w&(flagUnfiltered<<8) != 0 {
		if m != 0 || len(b) != trailerLen || f < cuckoohash.MinFingerprintBits || f > cuckoohash.MaxFingerprintBits {
			return errUnfiltered
		}
		return okBlock
	}
	switch {
	case f < cuckoohash.MinFingerprintBits || f > cuckoohash.MaxFingerprintBits:
		return errWidth
	case m == 0 && keys != 0:
		return errEmpty
	case tooManyKeys(keys, m):
		return errKeys
	}
	size, ok := static.Size(static.Params{FingerprintBits: int(f), SemiSort: w&(flagSemiSort<<8) != 0, Buckets: m})
	if !ok || size != len(b)-trailerLen {
		return errLength
	}
	return okBlock
}

// isShort reports whether b ends in a version 3 trailer's magic byte (a
// version 1 or 2 trailer ends in 'O').
func isShort(b []byte) bool { return len(b) >= shortTrailerLen && b[len(b)-1] == shortMagic }

// checkShort is check for a block that ends in a short trailer's magic.
func checkShort(b []byte) int {
	a, w := shortWords(b)
	t := shortTrailerOf(a, w)
	switch {
	case t.version != shortVersion:
		return errVersion
	case fold16(a, w) != shortFold:
		return errChecksum
	case t.flags&^flagSemiSort != 0:
		return errFlags
	case t.f < cuckoohash.MinFingerprintBits || t.f > cuckoohash.MaxFingerprintBits:
		return errWidth
	case t.buckets == 0:
		return errShortEmpty
	case tooManyKeys(t.keys, t.buckets):
		return errKeys
	}
	size, ok := static.Size(static.Params{FingerprintBits: int(t.f), SemiSort: t.flags&flagSemiSort != 0, Buckets: t.buckets})
	if !ok || size != len(b)-shortTrailerLen+cuckoohash.PadBytes {
		return errLength
	}
	return okBlock
}

// shortTrailer decodes the short trailer of b, at least shortTrailerLen
// bytes long.
func shortTrailer(b []byte) trailer { return shortTrailerOf(shortWords(b)) }

// shortTrailerOf decodes a short trailer read as two words (shortWords).
func shortTrailerOf(a, w uint64) trailer {
	return trailer{
		buckets: a & 0xffffffff, keys: uint32(a >> 32), seed: w & 0xffff, check: uint32(w >> 16 & 0xffff),
		f: uint8(w >> 32), flags: uint8(w >> 40), version: uint8(w >> 48),
	}
}

// blockTrailer decodes the trailer of b, short or long, without checking
// it: b must be at least as long as the trailer its last byte names.
func blockTrailer(b []byte) trailer {
	if isShort(b) {
		return shortTrailer(b)
	}
	m, seed, kc, w := trailerWords(b)
	return trailerOf(m, seed, kc, uint32(w))
}

// tooManyKeys reports whether a trailer's key count is more than its m
// buckets' 4m slots hold (without overflow for any m): true also for keys
// without buckets, the marker of a table too large to filter.
func tooManyKeys(keys uint32, m uint64) bool { return (uint64(keys)+3)/4 > m }

// trailerWords reads the trailer of b, at least trailerLen bytes long, as four
// little-endian words: buckets, seed, key count and check, and width, flags,
// reserved byte, version and magic.
func trailerWords(b []byte) (m, seed, kc, w uint64) {
	tb := b[len(b)-trailerLen:]
	_ = tb[trailerLen-1]
	return binary.LittleEndian.Uint64(tb[0:]), binary.LittleEndian.Uint64(tb[8:]),
		binary.LittleEndian.Uint64(tb[16:]), binary.LittleEndian.Uint64(tb[24:])
}

// trailerOK reports whether a trailer read as four little-endian words is a
// sound version 2 trailer: magic, version, reserved byte, check and flags. It
// is MayContain's test, small enough to inline; trailerReason handles every
// other trailer, old versions included.
func trailerOK(m, seed, kc, w uint64) bool {
	// One compare for the magic, the version, the reserved zero byte and
	// the flags byte less the known flags.
	return fold(m, seed, kc, w) == checkFold && w>>8&^knownFlags == magic<<24|formatVersion<<16
}

// trailerReason checks what trailerOK checks, for every version the reader
// knows, and returns okBlock or the first reason the trailer is rejected.
//
//go:noinline
func trailerReason(m, seed, kc, w uint64) int {
	w24 := uint32(w)
	switch {
	case uint32(w>>32) != magic:
		return errMagic
	case w24>>16 == formatVersion<<8: // version byte, reserved byte
		if fold(m, seed, kc, w) != checkFold {
			return errChecksum
		}
	case w24>>16 == formatV1<<8:
		if uint32(kc>>32) != checksumV1(m, seed, uint32(kc), w24) {
			return errChecksum
		}
	default:
		return errVersion
	}
	if w24>>8&0xff&^knownFlags != 0 {
		return errFlags
	}
	return okBlock
}

func trailerOf(m, seed, kc uint64, w24 uint32) trailer {
	return trailer{
		buckets: m, seed: seed, keys: uint32(kc), check: uint32(kc >> 32),
		f: uint8(w24), flags: uint8(w24 >> 8), reserved: uint8(w24 >> 16), version: uint8(w24 >> 24),
	}
}

// Inspect decodes a filter block's parameters, for tools and tests. It
// returns an error wrapping ErrInvalidFilter for anything that is not a
// valid block of this policy.
func Inspect(filter []byte) (Info, error) {
	if r := check(filter); r != okBlock {
		return Info{}, fmt.Errorf("%w: %s (%d bytes)", ErrInvalidFilter, reasons[r], len(filter))
	}
	if isRawBloom(filter) {
		return Info{RawBloom: true}, nil
	}
	t := blockTrailer(filter)
	info := Info{
		FingerprintBits: int(t.f),
		SemiSort:        t.flags&flagSemiSort != 0,
		Unfiltered:      t.flags&flagUnfiltered != 0,
		BloomBlock:      t.flags&flagBloom != 0,
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

// Info describes a filter block, as Inspect decodes it. Keys counts the
// entries the builder placed: one per distinct key hash, except that hashes
// with the same two buckets and the same fingerprint share one entry, as
// the filter cannot tell them apart (FORMAT.md says how rarely).
type Info struct {
	FingerprintBits int     // bits per fingerprint, 4 to 32
	SemiSort        bool    // buckets are semi-sorted (4f-4 bits each)
	Unfiltered      bool    // the block holds no filter: no buckets, "may contain" for every key
	BloomBlock      bool    // a Pebble bloom table inside this package's trailer: no buckets, FingerprintBits 4
	RawBloom        bool    // bloom.FilterPolicy's own block, no trailer: every other field 0
	Buckets, Keys   int     // buckets of four slots; entries placed (see below)
	LoadFactor      float64 // Keys / (4 * Buckets); 0 for an empty table
	BitsPerKey      float64 // the whole block, trailer included, over Keys; 0 for no keys
}

// bloomTableOK reports whether b is a bloom table a flagBloom block may
// carry: whole 64-byte lines, then the probe count (1 to 30) and the line
// count (at least 1), as bloom.FilterPolicy writes them. It is what lets
// bloom.FilterPolicy's reader, which trusts its block, read b safely.
func bloomTableOK(b []byte) bool {
	n := len(b) - bloomTrailer
	if n < bloomLineBits/8 {
		return false
	}
	probes, lines := b[n], binary.LittleEndian.Uint32(b[n+1:])
	return probes >= 1 && probes <= 30 && lines >= 1 && uint64(lines)*bloomLineBits/8 == uint64(n)
}
