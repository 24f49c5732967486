package cuckoo

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/cuckoohash"
)

// The encoding of a Growing: see Encodings in the package doc.
const (
	growMagic   = "CKDG"
	growVersion = 1
)

// MarshalBinary encodes the filter (see Encodings in the package doc): the
// parameters given to NewGrowing, each stage's Filter encoding and the side
// table. Decoding it gives a Growing that behaves as this one does, operation
// for operation. The returned slice is new; the error is always nil.
func (g *Growing) MarshalBinary() ([]byte, error) {
	out := make([]byte, 16, 64)
	copy(out, growMagic)
	out[4] = growVersion
	if g.cfg.SemiSort {
		out[5] = flagSemi
	}
	binary.LittleEndian.PutUint64(out[8:], math.Float64bits(g.maxFPR))
	for _, v := range []uint64{uint64(g.capacity), uint64(g.cfg.MaxKicks), g.cfg.Seed, uint64(len(g.stages)), uint64(g.count)} {
		out = binary.AppendUvarint(out, v)
	}
	for _, s := range g.stages {
		full := byte(0)
		if s.full {
			full = 1
		}
		enc, err := s.f.MarshalBinary()
		if err != nil {
			return nil, err
		}
		out = append(out, full)
		out = binary.AppendUvarint(out, uint64(len(enc)))
		out = append(out, enc...)
	}
	keys := make([]classKey, 0, len(g.extra))
	for ck := range g.extra {
		keys = append(keys, ck)
	}
	slices.SortFunc(keys, compareClass)
	out = binary.AppendUvarint(out, uint64(len(keys)))
	for _, ck := range keys {
		out = binary.AppendUvarint(out, uint64(ck.stage))
		out = binary.AppendUvarint(out, ck.lo)
		out = binary.AppendUvarint(out, uint64(ck.fp))
		out = binary.AppendUvarint(out, uint64(g.extra[ck]))
	}
	return binary.LittleEndian.AppendUint64(out, xxhash.Sum64(out)), nil
}

func compareClass(a, b classKey) int {
	return cmp.Or(cmp.Compare(a.stage, b.stage), cmp.Compare(a.lo, b.lo), cmp.Compare(a.fp, b.fp))
}

// UnmarshalBinary replaces the filter with the one data encodes; it works on
// a zero Growing. On an error, which wraps ErrCorrupt, the filter is
// unchanged. It never panics, and it allocates in proportion to data: the
// stages' tables, which snappy may expand up to about 22 bytes per byte, and
// a map entry for each side-table entry of at least four bytes. A stage added
// later holds at most twice the last stage's slots, so growing the decoded
// filter also allocates in proportion to data.
//
// The decoder checks that the encoding is consistent, not that some sequence
// of operations made it: it cannot tell from the fingerprints which stage a
// key was inserted into. An encoding crafted to hold a key's fingerprint
// beyond the first stage that matches it decodes, and deleting that key can
// then remove another key's fingerprint. Encodings MarshalBinary writes hold
// no such state.
func (g *Growing) UnmarshalBinary(data []byte) error {
	d, err := decodeGrowing(data)
	if err != nil {
		return err
	}
	*g = d
	return nil
}

func decodeGrowing(data []byte) (Growing, error) {
	body, err := unseal(data, growMagic, growVersion, 16)
	if err != nil {
		return Growing{}, err
	}
	r := reader{rest: body[16:]}
	g, k, err := readGrowingHeader(body, &r)
	if err != nil || k == 0 {
		return Growing{}, err
	}
	held, err := g.readStages(&r, k)
	if err != nil {
		return Growing{}, err
	}
	if held, err = g.readSideTable(&r, held); err != nil {
		return Growing{}, err
	}
	if held != uint64(g.count) {
		return Growing{}, corrupt("count %d, but %d held", g.count, held)
	}
	return g, nil
}

// readGrowingHeader reads the fixed header of body and its five uvarints
// from r, and returns a Growing with the chain's parameters and count but no
// stages, and the number of stages k. For k == 0 it checks that the
// encoding is the zero Growing's, which has nothing after the header.
func readGrowingHeader(body []byte, r *reader) (Growing, uint64, error) {
	flags := body[5]
	if flags&^flagSemi != 0 || body[6] != 0 || body[7] != 0 {
		return Growing{}, 0, corrupt("unknown flags %#x %#x %#x", flags, body[6], body[7])
	}
	maxFPR := math.Float64frombits(binary.LittleEndian.Uint64(body[8:]))
	capacity, kicks, seed, k, count := r.uvarint(), r.uvarint(), r.uvarint(), r.uvarint(), r.uvarint()
	if r.bad {
		return Growing{}, 0, corrupt("truncated header")
	}
	if k == 0 {
		if flags != 0 || maxFPR != 0 || math.Signbit(maxFPR) || capacity != 0 || kicks != 0 || seed != 0 || count != 0 ||
			r.uvarint() != 0 || r.bad || len(r.rest) != 0 {
			return Growing{}, 0, corrupt("zero Growing with parameters")
		}
		return Growing{}, 0, nil
	}
	if !(maxFPR > 0 && maxFPR <= 0.5) {
		return Growing{}, 0, corrupt("false-positive bound %v", maxFPR)
	}
	if capacity < 1 || capacity > math.MaxInt || kicks < 1 || kicks > MaxKicksLimit || k > maxStages || count > math.MaxInt {
		return Growing{}, 0, corrupt("bad parameters: capacity %d, max kicks %d, %d stages, count %d", capacity, kicks, k, count)
	}
	return Growing{
		capacity: int(capacity),
		maxFPR:   maxFPR,
		cfg:      Config{FingerprintBits: DefaultFingerprintBits, SemiSort: flags&flagSemi != 0, MaxKicks: int(kicks), Seed: seed},
		count:    int(count),
	}, k, nil
}

// readStages reads k stages from r into g and returns the number of keys
// they hold. Each stage must keep the chain's promises: its seed, layout and
// kicks, and the share of the false-positive bound grow gives it; the first
// must hold the capacity the chain records. A stage's size and width are not
// checked against the sizing code's, so that encodings stay readable when
// that code's estimates change.
func (g *Growing) readStages(r *reader, k uint64) (uint64, error) {
	var held uint64
	for i := range int(k) {
		full := r.bytes(1)
		enc := r.bytes(r.uvarint())
		if r.bad {
			return 0, corrupt("truncated stage %d", i)
		}
		if full[0] > 1 {
			return 0, corrupt("stage %d: full flag %d", i, full[0])
		}
		f, err := decode(enc)
		if err != nil {
			return 0, fmt.Errorf("stage %d: %w", i, err) // err wraps ErrCorrupt
		}
		seed := g.cfg.Seed + uint64(i)
		if f.seed != seed || f.t.Semi != g.cfg.SemiSort || f.maxKicks != g.cfg.MaxKicks || f.fbits < MinFingerprintBits {
			return 0, corrupt("stage %d: seed %d, semi %v, max kicks %d, f=%d; want seed %d, semi %v, max kicks %d, f>=%d",
				i, f.seed, f.t.Semi, f.maxKicks, f.fbits, seed, g.cfg.SemiSort, g.cfg.MaxKicks, MinFingerprintBits)
		}
		if b, budget := stageBound(f.t.M, int(f.fbits)), math.Ldexp(g.maxFPR, -(i+1)); b > budget {
			return 0, corrupt("stage %d: %d buckets of %d-bit fingerprints bound the false-positive rate by %.3g, above its share %.3g",
				i, f.t.M, f.fbits, b, budget)
		}
		if i == 0 && uint64(g.capacity) > cuckoohash.Slots*f.t.M {
			// NewGrowing sizes the first stage for capacity keys; a larger
			// capacity would size the stages added later from nothing the
			// encoding holds.
			return 0, corrupt("capacity %d, but the first stage has %d slots", g.capacity, cuckoohash.Slots*f.t.M)
		}
		held += uint64(f.count)
		g.stages = append(g.stages, growStage{f: &f, full: full[0] == 1})
	}
	if held > uint64(g.count) {
		return 0, corrupt("count %d, but the stages hold %d", g.count, held)
	}
	return held, nil
}

// readSideTable reads the side table from r into g, whose stages are read,
// and returns held, the keys the stages hold, plus the copies it counts.
// Entries must come in increasing order, name a class their stage holds,
// count at least one copy and no more than g's count leaves, and the
// side table must end the encoding.
func (g *Growing) readSideTable(r *reader, held uint64) (uint64, error) {
	count := uint64(g.count)
	e := r.uvarint()
	if r.bad || e > uint64(len(r.rest))/4 {
		return 0, corrupt("side table of %d entries", e)
	}
	g.extra = make(map[classKey]int, e)
	var prev classKey
	for j := range e {
		stage, lo, fp, n := r.uvarint(), r.uvarint(), r.uvarint(), r.uvarint()
		if r.bad {
			return 0, corrupt("truncated side table")
		}
		if stage >= uint64(len(g.stages)) {
			return 0, corrupt("side table entry %d: stage %d", j, stage)
		}
		f := g.stages[stage].f
		if lo >= f.t.M || fp == 0 || fp>>f.fbits != 0 {
			return 0, corrupt("side table entry %d: bucket %d, fingerprint %d", j, lo, fp)
		}
		ck := classKey{int(stage), lo, uint32(fp)}
		hi := f.alt(lo, ck.fp)
		if hi < lo || !f.holds(lo, hi, ck.fp) {
			return 0, corrupt("side table entry %d: stage %d holds no fingerprint %d in bucket %d", j, stage, fp, lo)
		}
		if j > 0 && compareClass(prev, ck) >= 0 {
			return 0, corrupt("side table entry %d out of order", j)
		}
		if n == 0 || n > count-held {
			return 0, corrupt("side table entry %d: %d copies", j, n)
		}
		held += n
		g.extra[ck], prev = int(n), ck
	}
	if len(r.rest) != 0 {
		return 0, corrupt("%d bytes after the side table", len(r.rest))
	}
	return held, nil
}
