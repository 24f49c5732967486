package cuckoo

import "math"

// StaticParams are the parameters of a static filter: everything, besides
// the packed table, that a reader needs to answer lookups.
type StaticParams struct {
	FingerprintBits int
	SemiSort        bool
	Buckets         uint64
	Seed            uint64
	Keys            uint64 // distinct hashes placed
}

// Builder builds static filters: tables where every key is known before the
// first is placed, as in an sstable's filter block. Each key's two buckets
// are drawn independently from its hash, which lets the table fill to the
// (2,4) cuckoo load threshold of about 98%.
//
// The zero Builder is ready to use and may be reused; its scratch memory is
// kept between builds. A Builder is not safe for concurrent use.
type Builder struct {
	slots   []uint32 // per slot, 1 + index of the hash placed there; 0 = empty
	pending []uint32
	retry   []uint32
	rng     uint64
}

// Build appends to dst a table holding every hash in keys and returns it
// with its parameters. Duplicate hashes, in any order, are placed once.
//
// buckets gives the table size for a number of keys; Build asks it first for
// keys.Len() and, when placement finds duplicates, again for the number of
// distinct hashes, and rebuilds at that size if it is smaller. A size below
// one bucket per four keys is raised to that. When placement fails Build
// retries with the next seed, and after three seeds it grows the table by
// about 1.5%: it never fails and never drops a key. For the same keys in the
// same order the output is the same.
//
// Build panics if f is outside [MinFingerprintBits, MaxFingerprintBits] or if
// keys holds 2^32-1 hashes or more.
func (b *Builder) Build(dst []byte, keys *HashList, f int, semi bool, buckets func(n int) uint64) ([]byte, StaticParams) {
	if !validWidth(f) {
		panic("cuckoo: fingerprint width out of range")
	}
	n := keys.Len()
	if uint64(n) >= math.MaxUint32 {
		panic("cuckoo: too many keys for one static filter")
	}
	p := StaticParams{FingerprintBits: f, SemiSort: semi}
	if n == 0 {
		return dst, p
	}
	size := func(n int) uint64 { return min(max(buckets(n), (uint64(n)+slots-1)/slots, 1), MaxBuckets) }
	m := size(n)
	resized := false
	for attempt, tries := uint64(0), 0; ; attempt++ {
		if tries > 0 && tries%3 == 0 {
			m += m/64 + 1
		}
		tries++
		placed, ok := b.place(keys, m, attempt)
		if !ok {
			continue
		}
		if placed < n && !resized {
			resized = true
			if md := size(placed); md < m {
				m, tries = md, 0
				continue
			}
		}
		p.Buckets, p.Seed, p.Keys = m, attempt, uint64(placed)
		break
	}
	return b.encode(dst, keys, p), p
}

// place tries to put every hash in a table of m buckets with the given seed.
// It returns the number of distinct hashes placed.
func (b *Builder) place(keys *HashList, m, seed uint64) (int, bool) {
	n := keys.Len()
	ns := int(m * slots)
	if cap(b.slots) < ns {
		b.slots = make([]uint32, ns)
	} else {
		b.slots = b.slots[:ns]
		clear(b.slots)
	}
	b.pending = b.pending[:0]
	b.rng = seed*0x9e3779b97f4a7c15 + 1
	s := b.slots
	placed := 0
	for k := 0; k < n; k++ {
		h := keys.At(k)
		x := mix(h, seed)
		i1, i2 := reduce(x, m), reduce(rot32(remix(x)), m)
		c1, d1 := b.scan(keys, i1, h)
		if d1 {
			continue
		}
		c2, d2 := b.scan(keys, i2, h)
		if d2 {
			continue
		}
		switch {
		case c1 <= c2 && c1 < slots:
			s[i1*slots+uint64(c1)] = uint32(k) + 1
		case c2 < slots:
			s[i2*slots+uint64(c2)] = uint32(k) + 1
		default:
			b.pending = append(b.pending, uint32(k))
			continue
		}
		placed++
	}
	// Evictions: a random walk for each key the greedy pass could not place.
	// A walk that runs out of kicks leaves some key homeless; it is retried
	// in the next round, so nothing is dropped before the attempt is given up.
	budget := 64*n + 4096
	for round := 0; len(b.pending) > 0; round++ {
		if round == 8 {
			return placed, false
		}
		b.retry = b.retry[:0]
		for _, k := range b.pending {
			ok, dup, homeless, used := b.walk(keys, m, seed, k)
			budget -= used
			if dup {
				continue
			}
			if ok {
				placed++
			} else {
				b.retry = append(b.retry, homeless)
			}
			if budget < 0 {
				return placed, false
			}
		}
		b.pending, b.retry = b.retry, b.pending
	}
	return placed, true
}

// scan returns the number of occupied slots of bucket i (slots fill from the
// front) and whether one of them holds h.
func (b *Builder) scan(keys *HashList, i uint64, h uint64) (int, bool) {
	s := b.slots[i*slots : i*slots+slots]
	for j, v := range s {
		if v == 0 {
			return j, false
		}
		if keys.At(int(v-1)) == h {
			return j, true
		}
	}
	return slots, false
}

const walkKicks = 500

func (b *Builder) next() uint64 {
	b.rng ^= b.rng << 13
	b.rng ^= b.rng >> 7
	b.rng ^= b.rng << 17
	return b.rng
}

// walk places key k by evicting residents along a random walk. It reports
// whether the walk ended in a free slot, whether k turned out to be a
// duplicate of a resident, the key left without a slot when it did not, and
// the kicks it used.
func (b *Builder) walk(keys *HashList, m, seed uint64, k uint32) (ok, dup bool, homeless uint32, used int) {
	s := b.slots
	h := keys.At(int(k))
	x := mix(h, seed)
	i1, i2 := reduce(x, m), reduce(rot32(remix(x)), m)
	c1, d1 := b.scan(keys, i1, h)
	c2, d2 := b.scan(keys, i2, h)
	if d1 || d2 {
		return false, true, 0, 0
	}
	if c1 < slots {
		s[i1*slots+uint64(c1)] = k + 1
		return true, false, 0, 0
	}
	if c2 < slots {
		s[i2*slots+uint64(c2)] = k + 1
		return true, false, 0, 0
	}
	cur, bi := k, i1
	if b.next()&1 == 0 {
		bi = i2
	}
	for used = 1; used <= walkKicks; used++ {
		j := bi*slots + b.next()%slots
		cur, s[j] = s[j]-1, cur+1
		x := mix(keys.At(int(cur)), seed)
		v1, v2 := reduce(x, m), reduce(rot32(remix(x)), m)
		if v1 == bi {
			bi = v2
		} else {
			bi = v1
		}
		for j := uint64(0); j < slots; j++ {
			if s[bi*slots+j] == 0 {
				s[bi*slots+j] = cur + 1
				return true, false, 0, used
			}
		}
	}
	return false, false, cur, used
}

// encode appends the packed table of the placed keys to dst.
func (b *Builder) encode(dst []byte, keys *HashList, p StaticParams) []byte {
	f := uint(p.FingerprintBits)
	size, _ := tableBytes(p.Buckets, f, p.SemiSort)
	start := len(dst)
	dst = grow(dst, size)
	t, err := tableOn(dst[start:], p.Buckets, f, p.SemiSort)
	if err != nil {
		panic(err) // unreachable: Build validated f and sized the table
	}
	s := b.slots
	for i := uint64(0); i < p.Buckets; i++ {
		var fps [slots]uint32
		for j := uint64(0); j < slots; j++ {
			if v := s[i*slots+j]; v != 0 {
				fps[j] = fingerprint(remix(mix(keys.At(int(v-1)), p.Seed)), f)
			}
		}
		if fps != [slots]uint32{} || p.SemiSort {
			t.setBucket(i, fps)
		}
	}
	return dst
}

// grow appends n zero bytes to b.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		b = b[:len(b)+n]
		clear(b[len(b)-n:])
		return b
	}
	return append(b, make([]byte, n)...)
}

func rot32(y uint64) uint64 { return y<<32 | y>>32 }
