// Package keys generates the key sets the benchmarks build filters from and
// query them with. Keys are never allocated one by one: a Gen derives key i
// of a set from a seed, so a billion-key filter can be built without holding
// its keys, and a Set holds query keys back to back in one flat buffer.
// Shapes are the sequential key families applications write.
//
// Every value here is deterministic: the same seed gives the same keys on
// every machine, so two runs of a report measure the same sets.
package keys

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
)

// Key widths used throughout: 16-byte random keys, as Pebble's own filter
// benchmarks use, and long keys that share a prefix, as table keys do.
const (
	ShortLen = 16
	LongLen  = 128
)

// longPrefix starts every long key: long keys in a database share prefixes,
// and a filter must hash all of the key anyway.
var longPrefix = []byte("/pebble-cuckoo/bench/table/0042/index/0001/")

// Gen derives keys from a seed: key i is a fixed function of (Seed, i).
// Two generators with different seeds give disjoint sets (up to 2^-128
// collisions for 16-byte keys), so one is the members and the other the
// non-members. The zero value gives 0-byte keys; set Width.
type Gen struct {
	Seed  uint64
	Width int
}

// Put writes key i into dst, which must have len(dst) == g.Width.
func (g Gen) Put(dst []byte, i uint64) {
	n := 0
	if g.Width > ShortLen {
		n = copy(dst, longPrefix[:min(len(longPrefix), g.Width-ShortLen)])
	}
	s := g.Seed ^ (i * 0x9e3779b97f4a7c15)
	for ; n+8 <= len(dst); n += 8 {
		s += 0x9e3779b97f4a7c15
		binary.LittleEndian.PutUint64(dst[n:], Mix64(s))
	}
	if n < len(dst) {
		var tmp [8]byte
		s += 0x9e3779b97f4a7c15
		binary.LittleEndian.PutUint64(tmp[:], Mix64(s))
		copy(dst[n:], tmp[:])
	}
}

// Key returns key i in a fresh slice (for tests; loops use Put).
func (g Gen) Key(i uint64) []byte {
	b := make([]byte, g.Width)
	g.Put(b, i)
	return b
}

// Set returns keys lo..lo+n-1 in one flat buffer.
func (g Gen) Set(lo, n int) *Set {
	s := &Set{Data: make([]byte, n*g.Width), Width: g.Width}
	for i := range n {
		g.Put(s.Data[i*g.Width:(i+1)*g.Width], uint64(lo+i))
	}
	return s
}

// Seq is a sequence of keys that a filter is built from.
type Seq interface {
	Len() int
	// Each calls fn for every key in order; fn must copy what it keeps.
	Each(fn func(key []byte))
}

// First returns keys 0..n-1 of g, generated as they are read.
func (g Gen) First(n int) Seq { return genKeys{g, n} }

type genKeys struct {
	g Gen
	n int
}

func (k genKeys) Len() int { return k.n }

func (k genKeys) Each(fn func(key []byte)) {
	buf := make([]byte, k.g.Width)
	for i := range k.n {
		k.g.Put(buf, uint64(i))
		fn(buf)
	}
}

// Shape is a family of sequential keys as applications write them: key i
// is Format applied to i. Every shape here is ShortLen bytes wide, like
// Gen's random keys, so that the two compare at the same length.
type Shape struct {
	Name, Format string
}

// Shapes are the families of the false-positive table by key shape.
var Shapes = []Shape{
	{"decimal, zero-padded", "%016d"},
	{"prefix and decimal", "user%012d"},
	{"hexadecimal, zero-padded", "%016x"},
}

// Set returns keys lo..lo+n-1 of the family in one flat buffer, and an error
// if one of them is not ShortLen bytes long.
func (s Shape) Set(lo, n int) (*Set, error) {
	ks := &Set{Data: make([]byte, 0, n*ShortLen), Width: ShortLen}
	for i := lo; i < lo+n; i++ {
		ks.Data = fmt.Appendf(ks.Data, s.Format, i)
		if len(ks.Data) != (i-lo+1)*ShortLen {
			return nil, fmt.Errorf("key shape %q: key %d is not %d bytes", s.Format, i, ShortLen)
		}
	}
	return ks, nil
}

// Mix64 is the splitmix64 finalizer: a bijection with full avalanche. Gen
// derives keys with it; simulations that must hash as the keys do use it too.
func Mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Set is a set of fixed-width keys laid out back to back in one buffer.
type Set struct {
	Data  []byte
	Width int
}

// Len returns the number of keys.
func (s *Set) Len() int { return len(s.Data) / s.Width }

// At returns key i; the slice aliases the set's buffer (capacity capped).
func (s *Set) At(i int) []byte {
	return s.Data[i*s.Width : (i+1)*s.Width : (i+1)*s.Width]
}

// Each calls fn for every key of the set.
func (s *Set) Each(fn func(key []byte)) {
	for i := 0; i+s.Width <= len(s.Data); i += s.Width {
		fn(s.Data[i : i+s.Width : i+s.Width])
	}
}

// Mixed returns q queries in random order of which a share p are members
// (keys 0..n-1 of members, drawn uniformly) and the rest non-members, with
// the exact count of positives.
func Mixed(members Gen, n int, nonMembers Gen, q int, p float64, seed uint64) (*Set, int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	pos := int(p*float64(q) + 0.5)
	s := &Set{Data: make([]byte, q*members.Width), Width: members.Width}
	perm := rng.Perm(q)
	for j, slot := range perm {
		dst := s.Data[slot*s.Width : (slot+1)*s.Width]
		if j < pos {
			members.Put(dst, uint64(rng.IntN(n)))
		} else {
			nonMembers.Put(dst, uint64(n+j)) // any index: the seed makes them absent
		}
	}
	return s, pos
}
