// Package filters puts the filters the benchmarks compare behind one
// interface: Pebble filter blocks (the cuckoo policy and Pebble's bloom, read
// through their MayContain), binary fuse filters and a standard bloom filter.
// A Kind builds one of them from a key sequence; a Filter's Count loops over
// its concrete lookup, so that timing Count times the lookup and not an
// interface call per key. It is for measurements, not for applications:
// use cuckoopolicy for that.
package filters

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/FastFilter/xorfilter"
	"github.com/bits-and-blooms/bloom/v3"
	"github.com/cockroachdb/pebble/v2"
	pbloom "github.com/cockroachdb/pebble/v2/bloom"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/keys"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/cuckoo"
)

// Filter is a built filter under measurement.
type Filter interface {
	// Contains reports whether key may be in the set.
	Contains(key []byte) bool
	// Count returns how many keys of q the filter answers true for. Each
	// implementation loops over its concrete lookup, so timing Count times
	// the lookup, not an interface call per key.
	Count(q *keys.Set) int
	// Bytes is the size of the filter's data in bytes.
	Bytes() int
}

// Kind builds one kind of filter from a sequence of keys.
type Kind struct {
	Name  string
	Build func(ks keys.Seq) (Filter, error)
}

// BuildPolicy runs a Pebble filter writer over keys and returns the block.
func BuildPolicy(p pebble.FilterPolicy, ks keys.Seq) []byte {
	w := p.NewWriter(pebble.TableFilter)
	ks.Each(w.AddKey)
	return w.Finish(nil)
}

// PolicyKind is a Pebble FilterPolicy's filter block, read through its
// MayContain; the cuckoo policies and Pebble's bloom get concrete loops.
func PolicyKind(name string, p pebble.FilterPolicy) Kind {
	return Kind{Name: name, Build: func(ks keys.Seq) (Filter, error) {
		data := BuildPolicy(p, ks)
		switch p.(type) {
		case pbloom.FilterPolicy:
			return bloomBlock(data), nil
		case cuckoopolicy.FilterPolicy, cuckoopolicy.Policy:
			return CuckooBlock(data), nil
		}
		return policyBlock{p, data}, nil
	}}
}

// CuckooBlock is a cuckoo filter block read with cuckoopolicy's MayContain.
type CuckooBlock []byte

// Contains implements Filter.
func (b CuckooBlock) Contains(key []byte) bool {
	return cuckoopolicy.FilterPolicy(0).MayContain(pebble.TableFilter, b, key)
}

// Count implements Filter.
func (b CuckooBlock) Count(q *keys.Set) int {
	var p cuckoopolicy.FilterPolicy
	c := 0
	w := q.Width
	for i := 0; i+w <= len(q.Data); i += w {
		if p.MayContain(pebble.TableFilter, b, q.Data[i:i+w:i+w]) {
			c++
		}
	}
	return c
}

// Bytes implements Filter.
func (b CuckooBlock) Bytes() int { return len(b) }

// bloomBlock is a Pebble bloom filter block read with its MayContain.
type bloomBlock []byte

// Contains implements Filter.
func (b bloomBlock) Contains(key []byte) bool {
	return pbloom.FilterPolicy(10).MayContain(pebble.TableFilter, b, key)
}

// Count implements Filter.
func (b bloomBlock) Count(q *keys.Set) int {
	p := pbloom.FilterPolicy(10)
	c := 0
	w := q.Width
	for i := 0; i+w <= len(q.Data); i += w {
		if p.MayContain(pebble.TableFilter, b, q.Data[i:i+w:i+w]) {
			c++
		}
	}
	return c
}

// Bytes implements Filter.
func (b bloomBlock) Bytes() int { return len(b) }

type policyBlock struct {
	p    pebble.FilterPolicy
	data []byte
}

func (b policyBlock) Contains(key []byte) bool {
	return b.p.MayContain(pebble.TableFilter, b.data, key)
}
func (b policyBlock) Count(q *keys.Set) int { return CountEach(b, q) }
func (b policyBlock) Bytes() int            { return len(b.data) }

// CountEach counts the keys of q that f answers true for, one Contains call
// each: Count for the kinds that are not timed against each other.
func CountEach(f interface{ Contains([]byte) bool }, q *keys.Set) int {
	c := 0
	for i := range q.Len() {
		if f.Contains(q.At(i)) {
			c++
		}
	}
	return c
}

// fuse is a binary fuse filter over xxhash64 of the keys (8- or 16-bit
// fingerprints, FastFilter/xorfilter). Lookups include hashing the key.
type fuse[T xorfilter.Unsigned] struct{ f *xorfilter.BinaryFuse[T] }

// FuseKind returns the binary fuse filter with T-sized fingerprints.
func FuseKind[T xorfilter.Unsigned](name string) Kind {
	return Kind{Name: name, Build: func(ks keys.Seq) (Filter, error) {
		h := make([]uint64, 0, ks.Len())
		ks.Each(func(k []byte) { h = append(h, cuckoo.Hash(k)) })
		f, err := xorfilter.NewBinaryFuse[T](h)
		if err != nil {
			return nil, fmt.Errorf("binary fuse: %w", err)
		}
		return fuse[T]{f}, nil
	}}
}

// Contains implements Filter.
func (f fuse[T]) Contains(key []byte) bool { return f.f.Contains(cuckoo.Hash(key)) }

// Count implements Filter.
func (f fuse[T]) Count(q *keys.Set) int {
	c := 0
	w := q.Width
	for i := 0; i+w <= len(q.Data); i += w {
		if f.f.Contains(cuckoo.Hash(q.Data[i : i+w : i+w])) {
			c++
		}
	}
	return c
}

// Bytes implements Filter.
func (f fuse[T]) Bytes() int {
	var z T
	return len(f.f.Fingerprints) * int(unsafe.Sizeof(z))
}

// stdBloom is a standard (unblocked) bloom filter, bits-and-blooms/bloom/v3,
// with m = bits*n and k = round(bits*ln 2).
type stdBloom struct{ f *bloom.BloomFilter }

// StdBloomKind returns a standard bloom filter with the given bits per key.
func StdBloomKind(bitsPerKey float64) Kind {
	return Kind{Name: "bloom-standard", Build: func(ks keys.Seq) (Filter, error) {
		m := uint(math.Ceil(bitsPerKey * float64(ks.Len())))
		k := uint(math.Max(1, math.Round(bitsPerKey*math.Ln2)))
		f := bloom.New(m, k)
		ks.Each(func(key []byte) { f.Add(key) })
		return stdBloom{f}, nil
	}}
}

// Contains implements Filter.
func (b stdBloom) Contains(key []byte) bool { return b.f.Test(key) }

// Count implements Filter.
func (b stdBloom) Count(q *keys.Set) int { return CountEach(b, q) }

// Bytes implements Filter.
func (b stdBloom) Bytes() int { return int((b.f.Cap() + 7) / 8) }

// IdealBloomFPR is the false-positive rate of a bloom filter with b bits per
// key and the best integer number of hash functions: (1 - e^(-k/b))^k.
func IdealBloomFPR(b float64) float64 {
	best := 1.0
	for k := 1.0; k <= 40; k++ {
		best = math.Min(best, math.Pow(1-math.Exp(-k/b), k))
	}
	return best
}

// CountStream counts how many of keys 0..n-1 of g the filter answers true
// for, generating keys on the fly (for query counts too large to hold).
func CountStream(f Filter, g keys.Gen, n int) int {
	const chunk = 1 << 14
	q := &keys.Set{Data: make([]byte, chunk*g.Width), Width: g.Width}
	c := 0
	for lo := 0; lo < n; lo += chunk {
		m := min(chunk, n-lo)
		q.Data = q.Data[:m*g.Width]
		for i := range m {
			g.Put(q.Data[i*g.Width:(i+1)*g.Width], uint64(lo+i))
		}
		c += f.Count(q)
	}
	return c
}
