package cuckoopolicy

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// TestDamagedBlocks: every truncation, garbage before the block, padding
// after it, and every single flipped trailer bit. MayContain must never
// panic, and must never answer "absent" for a present key unless the block
// still decodes as valid (a flip the trailer check cannot see, of which
// there are none for single bits).
func TestDamagedBlocks(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	keys := testkit.RandomKeys(r, 500)
	p := FilterPolicy(10)
	for _, version := range []uint8{shortVersion, formatVersion, formatV1} {
		block, tl, vo := build(p, keys), shortTrailerLen, 14 // vo: the version byte's offset in the trailer
		if version != shortVersion {
			block, tl, vo = withVersion(block, version), trailerLen, 27
		}
		if v := blockTrailer(block).version; v != version {
			t.Fatalf("block of version %d, want %d", v, version)
		}
		check := func(what string, b []byte) {
			t.Helper()
			_, err := Inspect(b)
			for i := range keys.Len() {
				if !p.MayContain(pebble.TableFilter, b, keys.At(i)) {
					t.Fatalf("version %d, %s: false negative (Inspect: %v)", version, what, err)
				}
			}
		}
		for n := 0; n < len(block); n++ {
			check("truncated", block[:n])
			check("front cut", block[n+1:])
		}
		for _, pre := range [][]byte{{0}, []byte("garbage"), make([]byte, 100)} {
			check("prefixed", append(append([]byte(nil), pre...), block...))
			check("padded", append(append([]byte(nil), block...), pre...))
		}
		tr := len(block) - tl
		for bit := 0; bit < 8*tl; bit++ {
			b := append([]byte(nil), block...)
			b[tr+bit/8] ^= 1 << (bit % 8)
			if _, err := Inspect(b); err == nil {
				t.Errorf("version %d, trailer bit %d flipped: Inspect accepted the block", version, bit)
			}
			check("flipped trailer bit", b)
		}
		// The version byte selects the check: a block relabelled as
		// another version, check unchanged, is rejected.
		for _, other := range []uint8{shortVersion, formatVersion, formatV1} {
			if other == version {
				continue
			}
			b := append([]byte(nil), block...)
			b[tr+vo] = other
			if _, err := Inspect(b); err == nil {
				t.Errorf("version %d relabelled %d: Inspect accepted the block", version, other)
			}
			check("relabelled", b)
		}
	}
	// Another filter type is never vouched for.
	if !p.MayContain(pebble.FilterType(7), build(p, keys), []byte("absent")) {
		t.Fatal("unknown filter type answered absent")
	}
}

// withTrailer returns a copy of block with its trailer, short or long,
// changed by edit and rewritten, check included (for edit's version). A short
// trailer's fields must still fit it.
func withTrailer(block []byte, edit func(*trailer)) []byte {
	b := append([]byte(nil), block...)
	t := blockTrailer(b)
	edit(&t)
	if isShort(b) {
		t.putShort(b[len(b)-shortTrailerLen:])
	} else {
		t.put(b[len(b)-trailerLen:])
	}
	return b
}

// longBlock returns block with a long trailer: a copy of a long block, or
// the table of a short one, its padding and a version 2 trailer with the
// same fields, as the writer wrote the table before the short trailer.
func longBlock(block []byte) []byte {
	if !isShort(block) {
		return append([]byte(nil), block...)
	}
	t := shortTrailer(block)
	t.version = formatVersion
	b := append(block[:len(block)-shortTrailerLen:len(block)-shortTrailerLen], make([]byte, 8+trailerLen)...)
	t.put(b[len(b)-trailerLen:])
	return b
}

// withVersion returns a copy of block with a long trailer (longBlock)
// rewritten as the given format version, 1 or 2, check included.
func withVersion(block []byte, version uint8) []byte {
	return withTrailer(longBlock(block), func(t *trailer) { t.version = version })
}

// TestRandomBytes: MayContain and Inspect on random bytes of every length up
// to 300 and some large ones never panic; a random block that happens to
// carry a valid trailer is vanishingly unlikely, and Inspect must agree with
// MayContain about validity.
func TestRandomBytes(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	p := FilterPolicy(10)
	for n := 0; n < 300; n++ {
		for range 20 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			if _, err := Inspect(b); err == nil {
				t.Fatalf("random %d bytes accepted: %x", n, b)
			}
			if !p.MayContain(pebble.TableFilter, b, b) {
				t.Fatalf("random %d bytes: answered absent", n)
			}
		}
	}
	// A valid trailer describing a table the block does not hold.
	var tl trailer
	tl.version, tl.f, tl.flags, tl.buckets, tl.keys = formatVersion, 16, flagSemiSort, 1<<40, 5
	b := make([]byte, trailerLen)
	tl.put(b)
	if !p.MayContain(pebble.TableFilter, b, []byte("k")) {
		t.Fatal("a trailer claiming 2^40 buckets over no data answered absent")
	}
	if _, err := Inspect(b); err == nil {
		t.Fatal("Inspect accepted a trailer claiming 2^40 buckets over no data")
	}
	// Unsupported widths with a matching checksum.
	for _, f := range []uint8{0, 1, 3, 33, 255} {
		tl := trailer{version: formatVersion, f: f, buckets: 1, keys: 1}
		b := make([]byte, 40)
		tl.put(b[8:])
		if !p.MayContain(pebble.TableFilter, b, []byte("k")) {
			t.Fatalf("width %d answered absent", f)
		}
	}
	// Keys without buckets.
	tl = trailer{version: formatVersion, f: 10, keys: 3}
	b = make([]byte, trailerLen)
	tl.put(b)
	if !p.MayContain(pebble.TableFilter, b, []byte("k")) {
		t.Fatal("keys without buckets answered absent")
	}
	// Short trailers: no buckets (with and without keys), 2^32-1 buckets
	// over 8 bytes, and unsupported widths, each with a matching check.
	for _, tl := range []trailer{{f: 10}, {f: 10, keys: 3}, {f: 16, flags: flagSemiSort, buckets: 1<<32 - 1, keys: 5},
		{f: 0, buckets: 1, keys: 1}, {f: 3, buckets: 1, keys: 1}, {f: 33, buckets: 1, keys: 1}, {f: 255, buckets: 1, keys: 1}} {
		for _, pad := range []int{0, 8, 100} {
			b := make([]byte, pad+shortTrailerLen)
			tl.putShort(b[pad:])
			if !p.MayContain(pebble.TableFilter, b, []byte("k")) {
				t.Fatalf("short trailer %+v after %d bytes answered absent", tl, pad)
			}
			if _, err := Inspect(b); err == nil {
				t.Fatalf("Inspect accepted short trailer %+v after %d bytes", tl, pad)
			}
		}
	}
}

func TestLargeAndEmptyKeys(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	keys := new(testkit.Keys)
	keys.Add(nil)
	keys.Add([]byte{})
	big := make([]byte, 1<<20)
	for i := range big {
		big[i] = byte(r.Uint32())
	}
	keys.Add(big)
	big2 := append([]byte(nil), big...)
	big2[len(big2)-1] ^= 1
	keys.Add(big2)
	// 32-bit fingerprints: three distinct keys never share an entry.
	p := Policy{FingerprintBits: 32}
	block := build(p, keys)
	requireAll(t, p, block, keys)
	if info, _ := Inspect(block); info.Keys != 3 { // nil and empty are one key
		t.Fatalf("%d keys, want 3", info.Keys)
	}
}

func TestMayContainAllocs(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	keys := testkit.RandomKeys(r, 10000)
	for _, p := range []pebble.FilterPolicy{FilterPolicy(10), Policy{FingerprintBits: 12}, Policy{FingerprintBits: 24, SemiSort: true}} {
		block := build(p, keys)
		i := 0
		allocs := testing.AllocsPerRun(1000, func() {
			p.MayContain(pebble.TableFilter, block, keys.At(i%keys.Len()))
			i++
		})
		if allocs != 0 {
			t.Errorf("%v: %.1f allocations per MayContain", p, allocs)
		}
	}
}

// TestConcurrentMayContain runs readers of one block from many goroutines;
// under -race it proves MayContain neither writes the block nor shares state.
func TestConcurrentMayContain(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	keys := testkit.RandomKeys(r, 20000)
	p := FilterPolicy(12)
	block := build(p, keys)
	orig := append([]byte(nil), block...)
	var wg sync.WaitGroup
	errs := make(chan int, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < keys.Len(); i += 3 {
				if !p.MayContain(pebble.TableFilter, block, keys.At(i)) {
					errs <- i
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for i := range errs {
		t.Fatalf("false negative for key %d under concurrency", i)
	}
	if string(orig) != string(block) {
		t.Fatal("MayContain modified the block")
	}
}

// TestTrailerLayout pins the trailer's byte positions and both versions'
// checks, as FORMAT.md states them, independently of the golden files.
func TestTrailerLayout(t *testing.T) {
	tl := trailer{buckets: 0x0102030405060708, seed: 0x1112131415161718, keys: 0x21222324, f: 13, flags: flagSemiSort, version: formatVersion}
	b := make([]byte, trailerLen)
	tl.put(b)
	if binary.LittleEndian.Uint64(b[0:]) != tl.buckets || binary.LittleEndian.Uint64(b[8:]) != tl.seed ||
		binary.LittleEndian.Uint32(b[16:]) != tl.keys || b[24] != 13 || b[25] != 1 || b[26] != 0 || b[27] != 2 ||
		string(b[28:]) != "CKOO" {
		t.Fatalf("trailer bytes %x", b)
	}
	// Version 2: the four words XORed, then the halves, give 0x5bd1e995.
	var x uint64
	for i := 0; i < trailerLen; i += 8 {
		x ^= binary.LittleEndian.Uint64(b[i:])
	}
	if got := uint32(x>>32) ^ uint32(x); got != 0x5bd1e995 {
		t.Fatalf("version 2 trailer folds to %#x", got)
	}
	// Version 1: the rotated fold of FORMAT.md.
	tl.version = formatV1
	tl.put(b)
	if b[27] != 1 {
		t.Fatalf("version byte %d", b[27])
	}
	rotl := func(v uint32, k int) uint32 { return v<<k | v>>(32-k) }
	w := binary.LittleEndian.Uint32(b[24:])
	want := 0x05060708 ^ 0x01020304 ^ rotl(0x15161718^0x11121314, 7) ^ rotl(0x21222324, 13) ^ rotl(w, 19) ^ 0x5bd1e995
	if got := binary.LittleEndian.Uint32(b[20:]); got != want {
		t.Fatalf("version 1 check %#x, want %#x", got, want)
	}
}

// TestTrailerOK checks MayContain's inline test against trailerReason, the
// reader of every version: trailerOK accepts exactly the version 2 trailers
// that trailerReason accepts. The trailers are valid ones (versions 1 and
// 2, any width and flag), as written or with one or two bits flipped, a
// byte of the width word (width, flags, reserved, version, magic) set at
// random, or all 32 bytes random.
func TestTrailerOK(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	var b [trailerLen]byte
	for i := range 200000 {
		tr := trailer{buckets: r.Uint64N(1 << 40), seed: r.Uint64(), keys: r.Uint32(),
			f: uint8(r.IntN(40)), flags: uint8(r.IntN(2)), version: formatVersion}
		if i%4 == 0 {
			tr.version = formatV1
		}
		tr.put(b[:])
		switch i % 3 {
		case 0:
			for range 1 + r.IntN(2) {
				b[r.IntN(trailerLen)] ^= 1 << r.IntN(8)
			}
		case 1:
			b[24+r.IntN(8)] = uint8(r.Uint32())
		case 2:
			if i%6 == 2 {
				for j := range b {
					b[j] = uint8(r.Uint32())
				}
			}
		}
		m, seed, kc, w := trailerWords(b[:])
		want := trailerReason(m, seed, kc, w) == okBlock && uint8(w>>24) == formatVersion
		if got := trailerOK(m, seed, kc, w); got != want {
			t.Fatalf("trailer % x: trailerOK %v, trailerReason accepts it as version 2: %v", b, got, want)
		}
	}
}

// TestShortTrailerLayout pins the short trailer's byte positions and check,
// as FORMAT.md states them, independently of the golden files.
func TestShortTrailerLayout(t *testing.T) {
	tl := trailer{buckets: 0x01020304, seed: 0x1112, keys: 0x21222324, f: 13, flags: flagSemiSort}
	b := make([]byte, shortTrailerLen)
	tl.putShort(b)
	if binary.LittleEndian.Uint32(b[0:]) != 0x01020304 || binary.LittleEndian.Uint32(b[4:]) != 0x21222324 ||
		binary.LittleEndian.Uint16(b[8:]) != 0x1112 || b[12] != 13 || b[13] != 1 || b[14] != 3 || b[15] != 'c' {
		t.Fatalf("short trailer bytes %x", b)
	}
	// The eight 16-bit little-endian words XORed give 0x9e37.
	var x uint16
	for i := 0; i < shortTrailerLen; i += 2 {
		x ^= binary.LittleEndian.Uint16(b[i:])
	}
	if x != 0x9e37 {
		t.Fatalf("short trailer folds to %#x", x)
	}
	if got := blockTrailer(b); got.buckets != tl.buckets || got.seed != tl.seed || got.keys != tl.keys ||
		got.f != tl.f || got.flags != tl.flags || got.version != shortVersion {
		t.Fatalf("decoded %+v from %+v", got, tl)
	}
}

// TestShortOK checks MayContain's inline test of a short trailer against
// checkShort: shortOK accepts a trailer exactly when checkShort finds no
// fault in the trailer itself (its version, check and flags). The trailers
// are valid ones, as written or with one or two bits flipped, a byte of the
// second word set at random, or all 16 bytes random.
func TestShortOK(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	var b [shortTrailerLen]byte
	for i := range 200000 {
		tr := trailer{buckets: r.Uint64N(1 << 32), seed: r.Uint64N(1 << 16), keys: r.Uint32(),
			f: uint8(r.IntN(40)), flags: uint8(r.IntN(2))}
		tr.putShort(b[:])
		switch i % 3 {
		case 0:
			for range 1 + r.IntN(2) {
				b[r.IntN(shortTrailerLen)] ^= 1 << r.IntN(8)
			}
		case 1:
			b[8+r.IntN(8)] = uint8(r.Uint32())
		case 2:
			if i%6 == 2 {
				for j := range b {
					b[j] = uint8(r.Uint32())
				}
			}
		}
		reason := okBlock
		if isShort(b[:]) {
			reason = checkShort(b[:])
		}
		want := isShort(b[:]) && reason != errVersion && reason != errChecksum && reason != errFlags
		if got := shortOK(shortWords(b[:])); got != want {
			t.Fatalf("trailer % x: shortOK %v, checkShort %d", b, got, reason)
		}
	}
}
