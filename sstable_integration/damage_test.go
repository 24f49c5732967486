package sstableintegration

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/sstable/block"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// damageOutcome is what reading a damaged table gave.
type damageOutcome struct {
	openErr error // NewReader failed: the damage was reported
	errors  int   // lookups that returned an error
	probes  int64 // lookups the filter answered (hits and misses)
	lost    []string
	wrong   []string
}

// probeDamaged reads every present key and every absent one of a damaged
// table with SeekPrefixGE. A lookup may fail with an error or succeed; a
// present key reported missing without an error is lost, a wrong value or a
// phantom is wrong. A panic fails the test.
func probeDamaged(t *testing.T, what string, fs vfs.FS, path string, present map[string]string, absent [][]byte) (out damageOutcome) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s: panic while reading: %v", what, r)
		}
	}()
	var tracker sstable.FilterMetricsTracker
	ro := sstable.ReaderOptions{
		Filters:              map[string]pebble.FilterPolicy{cuckooName: cuckoopolicy.FilterPolicy(10)},
		FilterMetricsTracker: &tracker,
	}
	r, err := openTable(fs, path, ro)
	if err != nil {
		out.openErr = err
		return out
	}
	defer r.Close()
	it, err := r.NewIter(sstable.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
	if err != nil {
		out.openErr = err
		return out
	}
	defer it.Close()
	for k, want := range present {
		kv := it.SeekPrefixGE([]byte(k), []byte(k), 0)
		switch {
		case kv == nil && it.Error() != nil:
			out.errors++
		case kv == nil || !bytes.Equal(kv.K.UserKey, []byte(k)):
			out.lost = append(out.lost, k)
		default:
			v, _, err := kv.Value(nil)
			if err != nil {
				out.errors++
			} else if string(v) != want {
				out.wrong = append(out.wrong, k)
			}
		}
	}
	for _, k := range absent {
		if kv := it.SeekPrefixGE(k, k, 0); kv != nil && bytes.Equal(kv.K.UserKey, k) {
			out.wrong = append(out.wrong, string(k))
		}
	}
	fm := tracker.Load()
	out.probes = fm.Hits + fm.Misses
	return out
}

// damageFixture is one table written with the cuckoo policy, its bytes and
// the position of its filter block.
type damageFixture struct {
	tf            sstable.TableFormat
	file          []byte
	filterOff     int // the filter block's offset
	filterLen     int // its length, without the 5-byte block trailer
	present       map[string]string
	absent        [][]byte
	checksumType  block.ChecksumType
	writerOptions sstable.WriterOptions
}

func newDamageFixture(t *testing.T, tf sstable.TableFormat, seed uint64, n int) *damageFixture {
	t.Helper()
	present, absent := tableKeys(pebbletest.Rand(seed), n, n)
	fs := vfs.NewMem()
	wo := sstable.WriterOptions{
		TableFormat:  tf,
		FilterPolicy: cuckoopolicy.FilterPolicy(10),
		BlockSize:    512,
		Checksum:     block.ChecksumTypeCRC32c,
	}
	writeTable(t, fs, "t.sst", wo, sortedKVs(present, bytes.Compare))
	ro := sstable.ReaderOptions{Filters: map[string]pebble.FilterPolicy{cuckooName: cuckoopolicy.FilterPolicy(10)}}
	_, filter, layout := readFilterBlock(t, fs, "t.sst", ro)
	h := layout.Filter[0].Handle
	d := &damageFixture{
		tf:            tf,
		file:          []byte(readAll(t, fs, "t.sst")),
		filterOff:     int(h.Offset),
		filterLen:     int(h.Length),
		present:       present,
		absent:        absent,
		checksumType:  block.ChecksumTypeCRC32c,
		writerOptions: wo,
	}
	if !bytes.Equal(d.file[d.filterOff:d.filterOff+d.filterLen], filter) {
		t.Fatal("filter block not found at its handle")
	}
	// The undamaged table reads correctly, with the filter in use: it
	// answers every lookup.
	out := d.probe(t, "undamaged", d.file, 0)
	if out.openErr != nil || out.errors > 0 || len(out.lost)+len(out.wrong) > 0 || out.probes != int64(len(present)+len(absent)) {
		t.Fatalf("undamaged table: %+v (%d lookups)", out, len(present)+len(absent))
	}
	return d
}

// probe writes file and reads it back with probeDamaged. With sample > 0 it
// looks up only that many present and absent keys: a block checksum error
// makes Pebble search the block for the flipped bit on every read, which is
// quadratic in the block's size.
func (d *damageFixture) probe(t *testing.T, what string, file []byte, sample int) damageOutcome {
	t.Helper()
	present, absent := d.present, d.absent
	if sample > 0 {
		present = map[string]string{}
		for k, v := range d.present {
			if len(present) == sample {
				break
			}
			present[k] = v
		}
		absent = absent[:min(sample, len(absent))]
	}
	fs := vfs.NewMem()
	f, err := fs.Create("d.sst", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	// A copy: in invariant builds (-race among them) Pebble's MemFS
	// scrambles the buffer it was given after writing it.
	if _, err := f.Write(slices.Clone(file)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return probeDamaged(t, what, fs, "d.sst", present, absent)
}

// fixChecksum recomputes the filter block's checksum in file, as if the
// damage had happened before the block was written.
func (d *damageFixture) fixChecksum(file []byte) {
	blk := file[d.filterOff : d.filterOff+d.filterLen]
	trailer := file[d.filterOff+d.filterLen:]
	c := block.Checksummer{Type: d.checksumType}
	binary.LittleEndian.PutUint32(trailer[1:5], c.Checksum(blk, trailer[0]))
}

// TestDamagedFilterBlock damages the filter block of a written sstable and
// reads every key: Pebble must report an error or read correctly, never lose
// a key silently.
//
//   - Every single-bit flip in the block or its trailer, checksum left alone:
//     the block checksum reports it.
//   - Every single-bit flip in the block with the checksum fixed up (damage
//     before the checksum was computed): where Inspect rejects the block,
//     MayContain must answer "may contain" and no key may be lost; where
//     the flip lands in the fingerprint array, the block is a valid filter
//     of other fingerprints (no checksum but Pebble's covers the array), and
//     the loss must stay local: at most the 8 fingerprints of the two
//     buckets a byte can touch.
//   - Blocks truncated, cut at the front, extended or with a byte inserted,
//     written with a valid checksum: Inspect must reject them and no key may
//     be lost.
//   - Files truncated inside the filter block: opening fails.
func TestDamagedFilterBlock(t *testing.T) {
	t.Parallel()
	seed := pebbletest.Seed(t)
	n := pebbletest.Scale(150, 300, 1000)
	for _, tf := range []sstable.TableFormat{sstable.TableFormatMinSupported, sstable.TableFormatMax} {
		t.Run(tf.String(), func(t *testing.T) {
			d := newDamageFixture(t, tf, seed, n)
			d.unfixedFlips(t)
			d.fixedFlips(t)
			d.structural(t)
			d.truncations(t)
		})
	}
}

// unfixedFlips flips bits with the checksum not fixed: every byte of the
// block's first 16 and last 64 bytes and of its block trailer, and a sample
// of the rest. Pebble must report every one.
func (d *damageFixture) unfixedFlips(t *testing.T) {
	reported, tried := 0, 0
	for i := 0; i < d.filterLen+block.TrailerLen; i++ {
		if i >= 16 && i < d.filterLen-64 && i%23 != 0 {
			continue
		}
		tried++
		off := d.filterOff + i
		file := slices.Clone(d.file)
		file[off] ^= 1 << (off % 8)
		what := fmt.Sprintf("bit %d of byte %d of the block flipped", off%8, i)
		out := d.probe(t, what, file, 8)
		if len(out.lost)+len(out.wrong) > 0 {
			t.Fatalf("%s: %d keys lost (%q), %d wrong, with the checksum not fixed", what, len(out.lost), out.lost, len(out.wrong))
		}
		if out.openErr != nil || out.errors > 0 {
			reported++
		}
	}
	t.Logf("unfixed flips: %d of %d reported by Pebble, none lost a key", reported, tried)
	if reported != tried {
		t.Fatalf("unfixed flips: only %d of %d reported: the block checksum should catch every one", reported, tried)
	}
}

// fixedFlips flips bits with the checksum fixed up: Inspect must reject
// some (the header and trailer are validated), and a flip it lets through
// may lose no more keys than one byte's buckets hold.
func (d *damageFixture) fixedFlips(t *testing.T) {
	info, err := cuckoopolicy.Inspect(d.file[d.filterOff : d.filterOff+d.filterLen])
	if err != nil {
		t.Fatal(err)
	}
	var rejected, local, maxLost int
	for i := 0; i < d.filterLen; i++ {
		for _, bit := range []int{i % 8, (i + 3) % 8} {
			file := slices.Clone(d.file)
			file[d.filterOff+i] ^= 1 << bit
			d.fixChecksum(file)
			what := fmt.Sprintf("bit %d of byte %d of %d flipped, checksum fixed", bit, i, d.filterLen)
			out := d.probe(t, what, file, 0)
			if out.openErr != nil || out.errors > 0 || len(out.wrong) > 0 {
				t.Fatalf("%s: %+v", what, out)
			}
			_, ierr := cuckoopolicy.Inspect(file[d.filterOff : d.filterOff+d.filterLen])
			switch {
			case ierr != nil && len(out.lost) > 0:
				t.Fatalf("%s: Inspect rejects the block (%v) yet MayContain filtered out %d present keys", what, ierr, len(out.lost))
			case ierr != nil:
				rejected++
			case len(out.lost) > 8:
				t.Fatalf("%s: the block still decodes, and %d present keys were lost: more than one byte's buckets can hold", what, len(out.lost))
			default:
				local++
				maxLost = max(maxLost, len(out.lost))
			}
		}
	}
	t.Logf("fixed-up flips in a %d-byte block (%+v): %d rejected by Inspect with no key lost; %d in the fingerprint array, at most %d keys lost each",
		d.filterLen, info, rejected, local, maxLost)
	if rejected == 0 {
		t.Fatalf("no flip was rejected: the block's header and trailer are not validated")
	}
}

// structural writes structural damage with a valid checksum: Inspect must
// reject it and every key must still be read through.
func (d *damageFixture) structural(t *testing.T) {
	for _, dm := range structuralDamage(d.filterLen) {
		fs := vfs.NewMem()
		wo := d.writerOptions
		wo.FilterPolicy = damagingPolicy{cuckoopolicy.FilterPolicy(10), dm.fn}
		writeTable(t, fs, "t.sst", wo, sortedKVs(d.present, bytes.Compare))
		ro := sstable.ReaderOptions{Filters: map[string]pebble.FilterPolicy{cuckooName: cuckoopolicy.FilterPolicy(10)}}
		_, blk, _ := readFilterBlock(t, fs, "t.sst", ro)
		if _, err := cuckoopolicy.Inspect(blk); err == nil {
			t.Fatalf("%s: Inspect accepts the damaged %d-byte block", dm.name, len(blk))
		}
		out := probeDamaged(t, dm.name, fs, "t.sst", d.present, d.absent)
		if out.openErr != nil || out.errors > 0 || len(out.lost)+len(out.wrong) > 0 {
			t.Fatalf("%s: %d keys lost, %d wrong, open error %v, %d errors; want every key read through",
				dm.name, len(out.lost), len(out.wrong), out.openErr, out.errors)
		}
	}
}

// truncations cuts the file inside the filter block: opening must fail.
func (d *damageFixture) truncations(t *testing.T) {
	for _, cut := range []int{0, 1, d.filterLen / 2, d.filterLen, d.filterLen + 3} {
		out := d.probe(t, "truncated file", d.file[:d.filterOff+cut], 8)
		if out.openErr == nil {
			t.Fatalf("file truncated %d bytes into the filter block opened without an error", cut)
		}
	}
}

type damage struct {
	name string
	fn   func([]byte) []byte
}

// structuralDamage lists damage that changes a block's length or shifts its
// contents; a valid block of length n is the input.
func structuralDamage(n int) []damage {
	var out []damage
	for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 40, 48, 64, n / 2, n - 1, n} {
		if k > n {
			continue
		}
		out = append(out,
			damage{fmt.Sprintf("last %d bytes cut", k), func(b []byte) []byte { return b[:len(b)-k] }},
			damage{fmt.Sprintf("first %d bytes cut", k), func(b []byte) []byte { return b[k:] }},
		)
	}
	for _, k := range []int{1, 4, 7, 8, 64} {
		out = append(out,
			damage{fmt.Sprintf("%d zero bytes appended", k), func(b []byte) []byte { return append(b, make([]byte, k)...) }},
			damage{fmt.Sprintf("%d 0xff bytes prepended", k), func(b []byte) []byte { return append(bytes.Repeat([]byte{0xff}, k), b...) }},
		)
	}
	out = append(out,
		damage{"a byte inserted in the middle", func(b []byte) []byte {
			return slices.Insert(slices.Clone(b), len(b)/2, 0x5a)
		}},
		damage{"a byte removed from the middle", func(b []byte) []byte {
			return slices.Delete(slices.Clone(b), len(b)/2, len(b)/2+1)
		}},
		damage{"the block doubled", func(b []byte) []byte { return append(slices.Clone(b), b...) }},
		damage{"the block zeroed", func(b []byte) []byte { return make([]byte, len(b)) }},
	)
	return out
}

// damagingPolicy builds blocks with the wrapped policy and damages them
// before Pebble checksums and writes them. It keeps the wrapped name, so
// readers decode the damaged block with the real policy.
type damagingPolicy struct {
	pebble.FilterPolicy
	damage func([]byte) []byte
}

func (p damagingPolicy) NewWriter(ft pebble.FilterType) pebble.FilterWriter {
	return damagingWriter{p.FilterPolicy.NewWriter(ft), p.damage}
}

type damagingWriter struct {
	pebble.FilterWriter
	damage func([]byte) []byte
}

func (w damagingWriter) Finish(dst []byte) []byte {
	return append(dst, w.damage(w.FilterWriter.Finish(nil))...)
}

// TestDamagedFilterInDB flips a bit inside the filter block of one table of
// a database (checksum not fixed) and reopens it: every Get returns the right
// value or an error, never "not found" for a key that exists, and the damage
// is reported.
func TestDamagedFilterInDB(t *testing.T) {
	t.Parallel()
	seed := pebbletest.Seed(t)
	eachFormat(t, seed, func(t *testing.T, f dbFormat, rng *rand.Rand, fs *vfs.MemFS) {
		o := dbOptions(fs, f, cuckoopolicy.FilterPolicy(10))
		o.DisableAutomaticCompactions = true
		// Pebble's default reaction to corruption is Logger.Fatalf.
		var corruptions atomic.Int64
		o.EventListener = &pebble.EventListener{
			DataCorruption: func(pebble.DataCorruptionInfo) { corruptions.Add(1) },
		}
		db := openDB(t, "db", o)
		want := oracle{}
		// Small tables: on a checksum mismatch Pebble searches the block
		// for a single flipped bit, at a cost quadratic in its size.
		writeInterleaved(t, db, "k", pebbletest.Scale(1000, 2000, 8000), 4, want)
		tables := liveTables(t, db, fs, "db")
		closeDB(t, db)

		victim := tables[rng.IntN(len(tables))].path
		_, blk, layout := readFilterBlock(t, fs, victim, sstable.ReaderOptions{})
		file := []byte(readAll(t, fs, victim))
		off := int(layout.Filter[0].Offset) + rng.IntN(len(blk))
		file[off] ^= 1 << rng.IntN(8)
		if err := fs.Remove(victim); err != nil {
			t.Fatal(err)
		}
		w, err := fs.Create(victim, vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(slices.Clone(file)); err != nil { // see probe
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("flipped a bit at offset %d of %s (filter block at %d, %d bytes)", off, victim, layout.Filter[0].Offset, len(blk))

		db = openDB(t, "db", o)
		defer closeDB(t, db)
		errs := 0
		for k, v := range want {
			got, closer, err := db.Get([]byte(k))
			switch {
			case err == pebble.ErrNotFound:
				t.Fatalf("Get(%q): not found, with a damaged filter block", k)
			case err != nil:
				errs++
			default:
				if string(got) != v {
					t.Fatalf("Get(%q) = %q, want %q", k, got, v)
				}
				_ = closer.Close()
			}
		}
		t.Logf("%d of %d Gets reported the damage, the others read correctly; %d corruption events", errs, len(want), corruptions.Load())
		if errs == 0 || corruptions.Load() == 0 {
			t.Fatalf("no Get reported the damaged filter block")
		}
	})
}
