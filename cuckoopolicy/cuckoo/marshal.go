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
	r := reader{rest: body[fixedHeader:]}
	h, err := readHeader(body, &r)
	if err != nil || h.m == 0 {
		return Filter{}, err
	}
	f := Filter{fbits: uint(h.fb), half: h.m / 2, seed: h.seed, maxKicks: h.kicks, count: int(h.count), nstash: h.nstash, rng: h.rng}
	f.t.M = h.m // for alt, before the table is read
	if err := f.readStash(&r); err != nil {
		return Filter{}, err
	}
	if f.t, err = readTable(r.rest, h); err != nil {
		return Filter{}, err
	}
	stored, err := validTable(&f.t, f.fbits)
	if err != nil {
		return Filter{}, err
	}
	if stored+uint64(h.nstash) != h.count {
		return Filter{}, corrupt("count %d, but %d fingerprints stored", h.count, stored+uint64(h.nstash))
	}
	return f, nil
}

// header holds the parameters of a Filter's encoding, as readHeader
// validated them.
type header struct {
	flags     byte
	fb        int // fingerprint bits
	nstash    int
	kicks     int
	rng       uint64
	m, count  uint64
	seed      uint64
	tableSize int // bytes, padding included
}

// readHeader reads the fixed header of body and its four uvarints from r,
// and checks them: every parameter in range, and for m == 0 the one
// encoding of the zero Filter, which has nothing after the header.
func readHeader(body []byte, r *reader) (header, error) {
	h := header{flags: body[5], fb: int(body[6]), nstash: int(body[7]), rng: binary.LittleEndian.Uint64(body[8:])}
	if h.flags&^knownFlags != 0 {
		return h, corrupt("unknown flags %#x", h.flags)
	}
	m, seed, kicks, count := r.uvarint(), r.uvarint(), r.uvarint(), r.uvarint()
	if r.bad {
		return h, corrupt("truncated header")
	}
	h.m, h.seed, h.count = m, seed, count
	if h.nstash > stashSize {
		return h, corrupt("%d stash entries", h.nstash)
	}
	if h.rng == 0 {
		return h, corrupt("zero walk state")
	}
	if m == 0 {
		if h.flags != flagRaw || h.fb != 0 || h.nstash != 0 || h.rng != 1 || seed != 0 || kicks != 0 || count != 0 || len(r.rest) != 0 {
			return h, corrupt("empty filter with parameters")
		}
		return h, nil
	}
	semi := h.flags&flagSemi != 0
	c, err := Config{FingerprintBits: h.fb, SemiSort: semi, MaxKicks: int(min(kicks, MaxKicksLimit+1)), Seed: seed}.normalize()
	if err != nil || h.fb == 0 || kicks == 0 {
		return h, corrupt("bad parameters: f=%d semi=%v max kicks=%d", h.fb, semi, kicks)
	}
	h.kicks = c.MaxKicks
	if m%2 != 0 || m > MaxBuckets {
		return h, corrupt("bad bucket count %d", m)
	}
	size, ok := cuckoohash.TableBytes(m, h.slotBits(), semi)
	if !ok {
		return h, corrupt("bad bucket count %d", m)
	}
	h.tableSize = size
	if count > cuckoohash.Slots*m+uint64(h.nstash) {
		return h, corrupt("count %d exceeds %d slots", count, cuckoohash.Slots*m)
	}
	return h, nil
}

// slotBits is the width of the table's slots: fingerprints of 2 and 3 bits
// are stored in 4-bit slots.
func (h *header) slotBits() uint { return uint(max(h.fb, MinFingerprintBits)) }

// readStash reads f.nstash stash entries from r into f, whose bucket count,
// half and fingerprint width are set, and checks each: in range, and named
// by the lower bucket of its pair.
func (f *Filter) readStash(r *reader) error {
	for k := range f.nstash {
		b, fp := r.uvarint(), r.uvarint()
		if r.bad {
			return corrupt("truncated stash")
		}
		if b >= f.t.M || fp == 0 || fp >= 1<<f.fbits || b != min(b, f.alt(b, uint32(fp))) {
			return corrupt("bad stash entry %d: bucket %d fingerprint %d", k, b, fp)
		}
		f.stash[k] = stashEntry{b: b, fp: uint32(fp)}
	}
	return nil
}

// readTable decodes payload, the rest of the encoding after the stash, into
// a new table of h's size: raw, or a snappy block that claims no more than
// snappy can expand payload to, so that what it allocates is bounded by the
// length of the encoding.
func readTable(payload []byte, h header) (cuckoohash.Table, error) {
	want := h.tableSize - cuckoohash.PadBytes
	raw := h.flags&flagRaw != 0
	if raw {
		if len(payload) != want {
			return cuckoohash.Table{}, corrupt("table is %d bytes, want %d", len(payload), want)
		}
	} else {
		n, err := snappy.DecodedLen(payload)
		if err != nil || n != want || want/maxSnappyRatio > len(payload) {
			return cuckoohash.Table{}, corrupt("table decodes to %d bytes, want %d", n, want)
		}
	}
	data := make([]byte, h.tableSize)
	if raw {
		copy(data, payload)
	} else if out, err := snappy.Decode(data[:want], payload); err != nil || len(out) != want {
		return cuckoohash.Table{}, corrupt("bad snappy block")
	} else if &out[0] != &data[0] {
		copy(data, out) // not reached: Decode uses a large enough dst
	}
	t, err := cuckoohash.TableOn(data, h.m, h.slotBits(), h.flags&flagSemi != 0)
	if err != nil {
		return cuckoohash.Table{}, corrupt("bad table parameters")
	}
	return t, nil
}

// reader reads the uvarints and byte strings of an encoding. A read past
// the end, or of a malformed uvarint, sets bad and returns zero values; so
// does every read after it.
type reader struct {
	rest []byte
	bad  bool
}

func (r *reader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	x, n := binary.Uvarint(r.rest)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.rest = r.rest[n:]
	return x
}

func (r *reader) bytes(n uint64) []byte {
	if r.bad || n > uint64(len(r.rest)) {
		r.bad = true
		return nil
	}
	b := r.rest[:n]
	r.rest = r.rest[n:]
	return b
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
