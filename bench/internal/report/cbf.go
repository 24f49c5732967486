package report

import (
	"fmt"
	"math/bits"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/keys"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/cuckoo"
)

// cuckooBloom is the Cuckoo Bloom filter of Mun and Lim, written here from
// its description: a bloom-like array of M cells that hold f-bit
// fingerprints instead of bits. A key x has a fingerprint fp_x and k primary
// cells h_p1(x)..h_pk(x); each primary cell h_pi has a secondary cell
// h_si(x) = h_pi(x) XOR hash(fp_x). Insert stores fp_x in each primary cell;
// when a primary cell is held by another fingerprint, fp_x takes it and the
// occupant is relocated to its own other cell (cuckoo style, a bounded walk).
// A query matches if, for every i, the primary or the secondary cell holds
// fp_x: like a bloom filter, all k positions must agree.
//
// Choices the description leaves open, made here:
//   - M is even and the "XOR" is the involution s = (r - p) mod M with odd r
//     derived from hash(fp) (r = 2*reduce(hash(fp), M/2) + 1), so M need not
//     be a power of two and s != p always.
//   - Fingerprints are in [1, 2^f - 2]; 0 is an empty cell and 2^f - 1 a
//     wildcard that matches every fingerprint. A relocation walk that runs
//     out of kicks turns the cell it could not claim into a wildcard, as a
//     bloom filter's bit would be set: the filter never has a false
//     negative, and with f = 1 it degenerates into a bloom filter.
//   - Cells are stored one per uint16 for simplicity; space is counted as
//     M*f bits, the packed size.
//
// Not safe for concurrent use.
type cuckooBloom struct {
	cells     []uint16
	m         uint64
	f, k      int
	wild      uint16
	maxKicks  int
	wildcards int // cells turned into wildcards
}

// newCuckooBloom returns a filter of about totalBits bits of f-bit cells
// (f in 2..16) with k positions per key.
func newCuckooBloom(totalBits float64, f, k int) (*cuckooBloom, error) {
	if f < 2 || f > 16 || k < 1 || k > 16 {
		return nil, fmt.Errorf("cuckoo bloom: bad f=%d k=%d", f, k)
	}
	m := uint64(totalBits/float64(f)) &^ 1
	if m < 2 {
		m = 2
	}
	return &cuckooBloom{cells: make([]uint16, m), m: m, f: f, k: k,
		wild: uint16(1)<<f - 1, maxKicks: 500}, nil
}

// Bits returns the filter's size in bits (M cells of f bits).
func (c *cuckooBloom) Bits() int { return int(c.m) * c.f }

func reduce(h, n uint64) uint64 { hi, _ := bits.Mul64(h, n); return hi }

// fp maps a key hash to [1, 2^f - 2].
func (c *cuckooBloom) fp(h uint64) uint16 {
	return uint16(1 + reduce(keys.Mix64(h^0x2545f4914f6cdd1d), uint64(c.wild)-1))
}

// other returns the other cell of p for fingerprint fp.
func (c *cuckooBloom) other(p uint64, fp uint16) uint64 {
	r := 2*reduce(keys.Mix64(uint64(fp)*0x9e3779b97f4a7c15), c.m/2) + 1
	return (r + c.m - p) % c.m
}

// primary returns the i-th primary cell of a key hash (double hashing).
func (c *cuckooBloom) primary(h uint64, i int) uint64 {
	h2 := keys.Mix64(h) | 1
	return reduce(h+uint64(i)*h2, c.m)
}

// Add inserts a key.
func (c *cuckooBloom) Add(key []byte) {
	h := cuckoo.Hash(key)
	fp := c.fp(h)
	for i := range c.k {
		if p := c.primary(h, i); !c.covered(p, fp) {
			c.place(p, fp)
		}
	}
}

// covered reports whether primary cell p or its secondary already answers
// for fp.
func (c *cuckooBloom) covered(p uint64, fp uint16) bool {
	if v := c.cells[p]; v == fp || v == c.wild {
		return true
	}
	v := c.cells[c.other(p, fp)]
	return v == fp || v == c.wild
}

// place puts fp into cell p, relocating occupants along their other cells.
func (c *cuckooBloom) place(p uint64, fp uint16) {
	cur := fp
	for range c.maxKicks {
		switch v := c.cells[p]; {
		case v == 0:
			c.cells[p] = cur
			return
		case v == cur || v == c.wild:
			return // the cell already answers for cur
		default:
			c.cells[p], cur = cur, v
			p = c.other(p, cur)
		}
	}
	// cur is homeless and p is one of its cells: make p match everything, so
	// neither cur nor p's occupant is lost.
	c.cells[p] = c.wild
	c.wildcards++
}

// Contains reports whether key may be in the set.
func (c *cuckooBloom) Contains(key []byte) bool {
	h := cuckoo.Hash(key)
	fp := c.fp(h)
	for i := range c.k {
		if !c.covered(c.primary(h, i), fp) {
			return false
		}
	}
	return true
}
