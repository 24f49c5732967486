package cuckoo

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cespare/xxhash/v2"
	"github.com/golang/snappy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
)

// The encoding of a Filter: see Encodings in the package doc.
const (
	marshalMagic   = "CKDF"
	marshalVersion = 1
	flagSemi       = 1
	flagRaw        = 2
	knownFlags     = flagSemi | flagRaw
	fixedHeader    = 16
	checksumLen    = 8
	// maxSnappyRatio bounds what a snappy block can decode to per input
	// byte: its densest element, a 3-byte copy, yields 64 bytes.
	maxSnappyRatio = 22
)

// ErrCorrupt is wrapped by the errors of UnmarshalBinary for data that is not
// a valid encoding of a Filter.
var ErrCorrupt = errors.New("cuckoo: corrupt filter data")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// MarshalBinary encodes the filter (see Encodings in the package doc): a
// header with every parameter and the stash, the table compressed with snappy
// (stored raw when that does not make it smaller, or when it is beyond what
// snappy's block format takes, about 3.6 GB), and a checksum. A sparse filter
// encodes to a fraction of its table size, a full one to about f/LoadFactor
// bits per key ((f-1)/LoadFactor semi-sorted, 4/LoadFactor for f = 2 and 3).
// The returned slice is new; the error is always nil.
func (f *Filter) MarshalBinary() ([]byte, error) {
	var raw []byte
	if f.t.M > 0 {
		raw = f.t.Data[:len(f.t.Data)-cuckoohash.PadBytes]
	}
	hdr := make([]byte, fixedHeader, fixedHeader+4*binary.MaxVarintLen64+2*f.nstash*binary.MaxVarintLen64)
	copy(hdr, marshalMagic)
	hdr[4] = marshalVersion
	if f.t.Semi {
		hdr[5] |= flagSemi
	}
	hdr[6] = byte(f.fbits)
	hdr[7] = byte(f.nstash)
	rng := f.rng
	if f.t.M == 0 {
		rng = 1
	}
	binary.LittleEndian.PutUint64(hdr[8:], rng)
	hdr = binary.AppendUvarint(hdr, f.t.M)
	hdr = binary.AppendUvarint(hdr, f.seed)
	hdr = binary.AppendUvarint(hdr, uint64(f.maxKicks))
	hdr = binary.AppendUvarint(hdr, uint64(f.count))
	for _, e := range f.stash[:f.nstash] {
		hdr = binary.AppendUvarint(hdr, e.b)
		hdr = binary.AppendUvarint(hdr, uint64(e.fp))
	}

	var out []byte
	if n := snappy.MaxEncodedLen(len(raw)); n >= 0 && len(raw) > 0 {
		out = make([]byte, len(hdr)+n+checksumLen)
		enc := snappy.Encode(out[len(hdr):], raw)
		if len(enc) < len(raw) {
			out = out[:len(hdr)+len(enc)]
		} else {
			out = nil
		}
	}
	if out == nil {
		hdr[5] |= flagRaw
		out = make([]byte, len(hdr), len(hdr)+len(raw)+checksumLen)
		out = append(out, raw...)
	}
	copy(out, hdr)
	return binary.LittleEndian.AppendUint64(out, xxhash.Sum64(out)), nil
}

// UnmarshalBinary replaces the filter with the one data encodes; it works on
// a zero Filter. On an error, which wraps ErrCorrupt, the filter is
// unchanged. It never panics, and it allocates no more than the table data
// describes: at most about 22 bytes per byte of data.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := decode(data)
	if err != nil {
		return err
	}
	*f = g
	return nil
}

func decode(data []byte) (Filter, error) {
	body, err := unseal(data, marshalMagic, marshalVersion, fixedHeader+4)
	if err != nil {
		return Filter{}, err
	}
	return decodeBody(body)
}

// unseal checks an encoding's length (at least minBody bytes before the
// checksum), magic, version byte (after the magic) and checksum, and returns
// the encoding without its checksum.
func unseal(data []byte, magic string, version byte, minBody int) ([]byte, error) {
	if len(data) < minBody+checksumLen {
		return nil, corrupt("%d bytes is too short", len(data))
	}
	if string(data[:len(magic)]) != magic {
		return nil, corrupt("bad magic %q", data[:len(magic)])
	}
	if data[len(magic)] != version {
		return nil, corrupt("unknown version %d", data[len(magic)])
	}
	body := data[:len(data)-checksumLen]
	if sum := binary.LittleEndian.Uint64(data[len(body):]); sum != xxhash.Sum64(body) {
		return nil, corrupt("checksum mismatch")
	}
	return body, nil
}

// decodeBody decodes a checksummed encoding without its checksum.
func decodeBody(body []byte) (Filter, error) {
	var g Filter
	flags, fb, nstash := body[5], int(body[6]), int(body[7])
	rng := binary.LittleEndian.Uint64(body[8:])
	if flags&^knownFlags != 0 {
		return g, corrupt("unknown flags %#x", flags)
	}
	rest := body[fixedHeader:]
	var v [4]uint64
	for k := range v {
		x, n := binary.Uvarint(rest)
		if n <= 0 {
			return g, corrupt("truncated header")
		}
		v[k], rest = x, rest[n:]
	}
	m, seed, kicks, count := v[0], v[1], v[2], v[3]
	if nstash > stashSize {
		return g, corrupt("%d stash entries", nstash)
	}
	if rng == 0 {
		return g, corrupt("zero walk state")
	}
	if m == 0 {
		if flags != flagRaw || fb != 0 || nstash != 0 || rng != 1 || seed != 0 || kicks != 0 || count != 0 || len(rest) != 0 {
			return g, corrupt("empty filter with parameters")
		}
		return g, nil
	}
	semi := flags&flagSemi != 0
	c, err := Config{FingerprintBits: fb, SemiSort: semi, MaxKicks: int(min(kicks, MaxKicksLimit+1)), Seed: seed}.normalize()
	if err != nil || fb == 0 || kicks == 0 {
		return g, corrupt("bad parameters: f=%d semi=%v max kicks=%d", fb, semi, kicks)
	}
	if m%2 != 0 || m > MaxBuckets {
		return g, corrupt("bad bucket count %d", m)
	}
	sf := uint(max(fb, MinFingerprintBits))
	size, ok := cuckoohash.TableBytes(m, sf, semi)
	if !ok {
		return g, corrupt("bad bucket count %d", m)
	}
	if count > cuckoohash.Slots*m+uint64(nstash) {
		return g, corrupt("count %d exceeds %d slots", count, cuckoohash.Slots*m)
	}
	g.half, g.fbits = m/2, uint(fb)
	g.t.M = m // for alt, before the table is read
	stash := [stashSize]stashEntry{}
	for k := range nstash {
		b, n1 := binary.Uvarint(rest)
		if n1 <= 0 {
			return g, corrupt("truncated stash")
		}
		fp, n2 := binary.Uvarint(rest[n1:])
		if n2 <= 0 {
			return g, corrupt("truncated stash")
		}
		rest = rest[n1+n2:]
		if b >= m || fp == 0 || fp >= 1<<fb || b != min(b, g.alt(b, uint32(fp))) {
			return g, corrupt("bad stash entry %d: bucket %d fingerprint %d", k, b, fp)
		}
		stash[k] = stashEntry{b: b, fp: uint32(fp)}
	}

	payload := rest
	want := size - cuckoohash.PadBytes
	if flags&flagRaw != 0 {
		if len(payload) != want {
			return g, corrupt("table is %d bytes, want %d", len(payload), want)
		}
	} else {
		n, err := snappy.DecodedLen(payload)
		if err != nil || n != want || want/maxSnappyRatio > len(payload) {
			return g, corrupt("table decodes to %d bytes, want %d", n, want)
		}
	}
	data := make([]byte, size)
	if flags&flagRaw != 0 {
		copy(data, payload)
	} else if out, err := snappy.Decode(data[:want], payload); err != nil || len(out) != want {
		return g, corrupt("bad snappy block")
	} else if &out[0] != &data[0] {
		copy(data, out) // not reached: Decode uses a large enough dst
	}
	t, err := cuckoohash.TableOn(data, m, sf, semi)
	if err != nil {
		return g, corrupt("bad table parameters")
	}
	stored, err := validTable(&t, uint(fb))
	if err != nil {
		return g, err
	}
	if stored+uint64(nstash) != count {
		return g, corrupt("count %d, but %d fingerprints stored", count, stored+uint64(nstash))
	}
	g = Filter{
		t:        t,
		fbits:    uint(fb),
		half:     m / 2,
		seed:     seed,
		maxKicks: c.MaxKicks,
		count:    int(count),
		nstash:   nstash,
		stash:    stash,
		rng:      rng,
	}
	return g, nil
}

// validTable checks that every slot of t holds 0 or an fb-bit fingerprint
// and that a semi-sorted bucket is as the codec writes it: one of its codes,
// and slots sorted (putWord relies on an empty slot coming first). (A table of
// an even number of buckets, each a multiple of 4 bits, ends on a byte
// boundary: no bits lie past the last bucket.) It returns the number of
// fingerprints stored.
func validTable(t *cuckoohash.Table, fb uint) (uint64, error) {
	var stored uint64
	for i := range t.M {
		if t.Semi {
			if c := t.ReadBits(i*uint64(t.BucketBits), 12); c >= cuckoohash.NumCodes {
				return 0, corrupt("bucket %d: semi-sort code %d", i, c)
			}
		}
		b := t.Bucket(i)
		for j, v := range b {
			if v>>fb != 0 {
				return 0, corrupt("bucket %d: fingerprint %#x wider than %d bits", i, v, fb)
			}
			if v != 0 {
				stored++
			}
			// The code orders the low nibbles; slots of equal nibbles must
			// follow in the order of the rest, as sort4 leaves them.
			if t.Semi && j > 0 && cuckoohash.NibbleKey(b[j-1]) > cuckoohash.NibbleKey(v) {
				return 0, corrupt("bucket %d: slots out of order", i)
			}
		}
	}
	return stored, nil
}
