package cuckoo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// growParts is a Growing's encoding taken apart, to be damaged field by
// field and put back together with a good checksum.
type growParts struct {
	head                            [8]byte
	maxFPR                          uint64
	capacity, kicks, seed, k, count uint64
	full                            []byte
	stages                          [][]byte
	entries                         [][4]uint64
	tail                            []byte // after the side table
}

func parseGrowing(t *testing.T, data []byte) growParts {
	t.Helper()
	var p growParts
	copy(p.head[:], data)
	p.maxFPR = binary.LittleEndian.Uint64(data[8:])
	r := reader{rest: data[16 : len(data)-checksumLen]}
	p.capacity, p.kicks, p.seed, p.k, p.count = r.uvarint(), r.uvarint(), r.uvarint(), r.uvarint(), r.uvarint()
	for range p.k {
		p.full = append(p.full, r.bytes(1)[0])
		p.stages = append(p.stages, r.bytes(r.uvarint()))
	}
	for range r.uvarint() {
		p.entries = append(p.entries, [4]uint64{r.uvarint(), r.uvarint(), r.uvarint(), r.uvarint()})
	}
	if r.bad || len(r.rest) != 0 {
		t.Fatal("bad test encoding")
	}
	return p
}

func (p growParts) encode() []byte {
	out := append([]byte(nil), p.head[:]...)
	out = binary.LittleEndian.AppendUint64(out, p.maxFPR)
	for _, v := range []uint64{p.capacity, p.kicks, p.seed, p.k, p.count} {
		out = binary.AppendUvarint(out, v)
	}
	for i, s := range p.stages {
		out = append(out, p.full[i])
		out = binary.AppendUvarint(out, uint64(len(s)))
		out = append(out, s...)
	}
	out = binary.AppendUvarint(out, uint64(len(p.entries)))
	for _, e := range p.entries {
		for _, v := range e {
			out = binary.AppendUvarint(out, v)
		}
	}
	out = append(out, p.tail...)
	return resign(append(out, make([]byte, checksumLen)...))
}

// TestGrowingUnmarshalCorrupt feeds UnmarshalBinary damaged encodings: every
// truncation, every flipped byte, and, with a good checksum, every kind of
// inconsistency the decoder names. Each must fail with ErrCorrupt and leave
// the filter as it was.
//
// Table-driven: exempt from the 80-line function limit.
func TestGrowingUnmarshalCorrupt(t *testing.T) {
	g, _ := fillGrowing(t, 0.3, Config{Seed: 5}, 5, 1500)
	data := marshalGrowing(t, g)
	p := parseGrowing(t, data)
	if !bytes.Equal(p.encode(), data) {
		t.Fatal("test encoder does not reproduce the encoding")
	}
	target, _ := NewGrowing(8, 0.1, Config{Seed: 1})
	target.Insert([]byte("kept"))
	before := marshalGrowing(t, target)
	fails := func(name string, d []byte) {
		t.Helper()
		err := target.UnmarshalBinary(d)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", name, err)
		}
		if !bytes.Equal(marshalGrowing(t, target), before) {
			t.Fatalf("%s: a failed decode changed the filter", name)
		}
	}
	for n := range len(data) {
		fails("truncated", data[:n])
	}
	for i := range data {
		d := append([]byte(nil), data...)
		d[i] ^= 0x10
		fails("flipped", d)
	}
	fails("padded", append(append([]byte(nil), data...), 0))

	// Stages that are valid on their own but break the chain's promises:
	// another seed, and a width too narrow for stage 0's share of the bound.
	other, _ := NewGrowing(16, 0.3, Config{Seed: 9})
	otherSeed := parseGrowing(t, marshalGrowing(t, other)).stages[0]
	narrow, _ := New(16, Config{FingerprintBits: 4, Seed: 5})
	narrowStage, _ := narrow.MarshalBinary()
	e0 := p.entries[0]
	for name, mutate := range map[string]func(*growParts){
		"magic":              func(p *growParts) { p.head[0] = 'X' },
		"version":            func(p *growParts) { p.head[4] = 2 },
		"flags":              func(p *growParts) { p.head[5] = 2 },
		"semi flag":          func(p *growParts) { p.head[5] = flagSemi },
		"reserved":           func(p *growParts) { p.head[7] = 1 },
		"bound zero":         func(p *growParts) { p.maxFPR = 0 },
		"bound above half":   func(p *growParts) { p.maxFPR = math.Float64bits(0.6) },
		"bound NaN":          func(p *growParts) { p.maxFPR = math.Float64bits(math.NaN()) },
		"bound changed":      func(p *growParts) { p.maxFPR = math.Float64bits(0.01) },
		"capacity zero":      func(p *growParts) { p.capacity = 0 },
		"capacity huge":      func(p *growParts) { p.capacity = math.MaxUint64 },
		"capacity 2^36":      func(p *growParts) { p.capacity = 1 << 36 },
		"kicks zero":         func(p *growParts) { p.kicks = 0 },
		"kicks changed":      func(p *growParts) { p.kicks = 499 },
		"kicks above limit":  func(p *growParts) { p.kicks = MaxKicksLimit + 1 },
		"seed changed":       func(p *growParts) { p.seed++ },
		"no stages":          func(p *growParts) { p.k = 0 },
		"stage missing":      func(p *growParts) { p.k++ },
		"stage dropped":      func(p *growParts) { p.k--; p.stages = p.stages[:p.k]; p.full = p.full[:p.k] },
		"stages swapped":     func(p *growParts) { p.stages[0], p.stages[1] = p.stages[1], p.stages[0] },
		"stage seed":         func(p *growParts) { p.stages[0] = otherSeed },
		"stage too narrow":   func(p *growParts) { p.stages[0] = narrowStage },
		"stage damaged":      func(p *growParts) { p.stages[0] = p.stages[0][:len(p.stages[0])-1] },
		"full flag":          func(p *growParts) { p.full[1] = 2 },
		"count low":          func(p *growParts) { p.count-- },
		"count high":         func(p *growParts) { p.count++ },
		"count huge":         func(p *growParts) { p.count = math.MaxUint64 },
		"no entries":         func(p *growParts) { p.entries = nil },
		"entry repeated":     func(p *growParts) { p.entries = append(p.entries, e0) },
		"entry no copies":    func(p *growParts) { p.entries[0][3] = 0 },
		"entry more copies":  func(p *growParts) { p.entries[0][3]++ },
		"entry stage":        func(p *growParts) { p.entries[0][0] = p.k },
		"entry other stage":  func(p *growParts) { p.entries[0][0] = (e0[0] + 1) % p.k },
		"entry bucket range": func(p *growParts) { p.entries[0][1] = 1 << 40 },
		"entry not held":     func(p *growParts) { p.entries[0][2] ^= 1 },
		"entry fp zero":      func(p *growParts) { p.entries[0][2] = 0 },
		"entry fp wide":      func(p *growParts) { p.entries[0][2] = 1 << 40 },
		"entry upper bucket": func(p *growParts) { p.entries[0][1] = g.stages[e0[0]].f.alt(e0[1], uint32(e0[2])) },
		"trailing byte":      func(p *growParts) { p.tail = []byte{0} },
	} {
		q := p
		q.full = append([]byte(nil), p.full...)
		q.stages = append([][]byte(nil), p.stages...)
		q.entries = append([][4]uint64(nil), p.entries...)
		mutate(&q)
		fails(name, q.encode())
	}
	if len(p.entries) > 1 {
		q := p
		q.entries = append([][4]uint64(nil), p.entries...)
		q.entries[0], q.entries[1] = q.entries[1], q.entries[0]
		fails("entries out of order", q.encode())
	}
}

// resignStages fixes the checksum of every stage's encoding inside data and
// then data's own, so that the fuzzer reaches the checks behind them; nil if
// data does not parse as far as the stages.
func resignStages(data []byte) []byte {
	if len(data) < 16+checksumLen {
		return nil
	}
	d := append([]byte(nil), data...)
	r := reader{rest: d[16 : len(d)-checksumLen]}
	r.uvarint()
	r.uvarint()
	r.uvarint()
	k := r.uvarint()
	r.uvarint()
	for range min(k, 62) {
		r.bytes(1)
		enc := r.bytes(r.uvarint())
		if r.bad {
			return nil
		}
		if len(enc) >= checksumLen {
			copy(enc, resign(enc)) // enc aliases d
		}
	}
	return resign(d)
}

// FuzzUnmarshalGrowing decodes arbitrary bytes (and the same bytes with
// their checksum fixed, and with every stage's checksum fixed too): never a
// panic, an error that wraps ErrCorrupt, or a Growing that encodes back to
// itself and works.
func FuzzUnmarshalGrowing(f *testing.F) {
	var z Growing
	seeds := []*Growing{&z}
	for i, c := range []Config{{}, {SemiSort: true, MaxKicks: 3}} {
		g, _ := NewGrowing(4, 0.2, c)
		for k := range 40 + 20*i {
			g.Insert([]byte{byte(k), byte(k % 7)})
		}
		seeds = append(seeds, g)
	}
	for _, g := range seeds {
		data, _ := g.MarshalBinary()
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		inputs := [][]byte{data}
		if len(data) >= checksumLen {
			inputs = append(inputs, resign(data))
		}
		if d := resignStages(data); d != nil {
			inputs = append(inputs, d)
		}
		for _, in := range inputs {
			var g Growing
			if err := g.UnmarshalBinary(in); err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error %v does not wrap ErrCorrupt", err)
				}
				continue
			}
			enc := marshalGrowing(t, &g)
			var h Growing
			if err := h.UnmarshalBinary(enc); err != nil {
				t.Fatalf("re-encoding does not decode: %v", err)
			}
			if err := sameGrowing(&g, &h); err != nil {
				t.Fatalf("re-encoding differs: %v", err)
			}
			if g.Stages() == 0 {
				continue
			}
			checkWorks(t, &g, 30) // ErrFull: no stage can be added, the chain is at a limit
			growOnce(t, &g, in)
		}
	})
}
