package sstableintegration

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// The way back: a database written by today's code, reopened by an earlier
// release (a rollback), must never lose a key. Each reader below is the
// MayContain of the code just before a change to the block format, copied
// from that commit and trimmed to its decision: the checks of the trailer
// (and of the table's length) that decide between an answer for every key
// and a lookup. A lookup is not copied: the hashing, addressing and bucket
// layout have not changed since version 1 (today's code finds every key of
// the blocks those commits wrote: cuckoopolicy's golden blocks of versions
// 1 and 2, and the golden databases of goldendb_test.go), so where an old
// reader would look up a block, with the parameters today's Inspect reads
// from it, today's lookup is its lookup; a bloom lookup is Pebble's bloom
// reader, which the old code called.

// oldDecision is what an old reader decides from a block's trailer.
type oldDecision struct {
	kind   oldDecisionKind
	answer bool // oldAnswers: its answer for every key
	// oldCuckooLookup: the table it reads (buckets and padding) and the
	// trailer's parameters; oldBloomLookup: the bloom table it reads.
	table   []byte
	m, seed uint64
	f       uint
	semi    bool
}

type oldDecisionKind int

const (
	oldAnswers oldDecisionKind = iota
	oldCuckooLookup
	oldBloomLookup
)

// String is how the test names a decision: "may contain", "absent",
// "cuckoo lookup" or "bloom lookup".
func (d oldDecision) String() string {
	switch {
	case d.kind == oldCuckooLookup:
		return "cuckoo lookup"
	case d.kind == oldBloomLookup:
		return "bloom lookup"
	case d.answer:
		return "may contain"
	}
	return "absent"
}

func oldAnswer(b bool) oldDecision { return oldDecision{answer: b} }

// oldReaders are the readers, oldest first, each with the decision it must
// take on each kind of block today's writers write with keys (goldenKind's
// names): "may contain" for what it does not know, a lookup for what it
// does.
var oldReaders = []struct {
	commit, before string
	decide         func(ftype pebble.FilterType, filter []byte) oldDecision
	want           map[string]string
}{
	{"6d463a0", "79c6c8f, format version 2", decideV1, map[string]string{
		"cuckoo v3": "may contain", "raw bloom": "may contain", "bloom block v2": "may contain", "unfiltered v2": "may contain",
	}},
	{"acb1c61", "b033b4e, unfiltered blocks", decideV2, map[string]string{
		"cuckoo v3": "may contain", "raw bloom": "may contain", "bloom block v2": "may contain", "unfiltered v2": "may contain",
	}},
	{"a0b613f", "6f294a4, bloom blocks", decideV2Unfiltered, map[string]string{
		"cuckoo v3": "may contain", "raw bloom": "may contain", "bloom block v2": "may contain", "unfiltered v2": "may contain",
	}},
	{"44d0ca3", "41ea488, format version 3", decideV2Bloom, map[string]string{
		"cuckoo v3": "may contain", "raw bloom": "may contain", "bloom block v2": "bloom lookup", "unfiltered v2": "may contain",
	}},
	{"59e8b92", "e1b7846, the raw bloom block", decideV3, map[string]string{
		"cuckoo v3": "cuckoo lookup", "raw bloom": "may contain", "bloom block v2": "bloom lookup", "unfiltered v2": "may contain",
	}},
}

// Constants of the long trailer, the same at every commit below.
const (
	oldTrailerLen   = 32
	oldMagic        = 0x4f4f4b43 // "CKOO"
	oldCheckFold    = 0x5bd1e995
	oldFlagSemiSort = 1
	oldFlagUnfilter = 2
	oldFlagBloom    = 4
	oldPadBytes     = 8
	oldMaxBuckets   = 1 << 48
)

// decideV1 is mayContain of 6d463a0 (cuckoopolicy/policy.go), the last
// commit before format version 2, with its trailerOK and checksum
// (format.go) and the checks of cuckoo.Lookup (cuckoo/lookup.go) before it
// reads a bucket. It knows version 1 alone and the semi-sorted flag alone.
func decideV1(ftype pebble.FilterType, filter []byte) oldDecision {
	const formatVersion, knownFlags = 1, oldFlagSemiSort
	if ftype != pebble.TableFilter {
		return oldAnswer(true)
	}
	n := len(filter)
	if n < oldTrailerLen {
		return oldAnswer(true)
	}
	m, seed, kc, w := oldTrailerWords(filter)
	keys, w24 := uint32(kc), uint32(w)
	trailerOK := uint32(w>>32) == oldMagic && w24>>16 == formatVersion<<8 &&
		uint32(kc>>32) == oldChecksumV1(m, seed, keys, w24) && w24>>8&0xff&^knownFlags == 0
	if !trailerOK || (m == 0 && keys != 0) {
		return oldAnswer(true)
	}
	// cuckoo.Lookup(filter[:n-trailerLen], m, seed, f, semi, h):
	data, f, semi := filter[:n-oldTrailerLen], uint(w24&0xff), w24&(oldFlagSemiSort<<8) != 0
	if f < 4 || f > 32 || m > oldMaxBuckets {
		return oldAnswer(true)
	}
	bb := uint64(4 * f)
	if semi {
		bb -= 4
	}
	if m == 0 || uint64(len(data)) != (m*bb+7)>>3+oldPadBytes {
		return oldAnswer(m != 0 || len(data) != 0)
	}
	return oldDecision{kind: oldCuckooLookup, table: data, m: m, seed: seed, f: f, semi: semi}
}

// decideV2 is FilterPolicy.MayContain of acb1c61 (cuckoopolicy/policy.go),
// the last commit before unfiltered blocks: versions 1 and 2, the
// semi-sorted flag alone.
func decideV2(ftype pebble.FilterType, filter []byte) oldDecision {
	const knownFlags = oldFlagSemiSort
	if ftype != pebble.TableFilter {
		return oldAnswer(true)
	}
	n := len(filter)
	if n < oldTrailerLen {
		return oldAnswer(true)
	}
	m, seed, kc, w := oldTrailerWords(filter)
	if !oldTrailerOK(m, seed, kc, w, knownFlags) && oldTrailerReason(m, seed, kc, w, knownFlags) != oldOK {
		return oldAnswer(true)
	}
	if oldTooManyKeys(uint32(kc), m) {
		return oldAnswer(true)
	}
	return oldStaticLookup(filter[:n-oldTrailerLen], m, seed, uint(w&0xff), w&(oldFlagSemiSort<<8) != 0)
}

// decideV2Unfiltered is FilterPolicy.MayContain of a0b613f, the last
// commit before bloom blocks: decideV2's code, with the unfiltered flag
// known (an unfiltered block has keys and no buckets: "may contain").
func decideV2Unfiltered(ftype pebble.FilterType, filter []byte) oldDecision {
	const knownFlags = oldFlagSemiSort | oldFlagUnfilter
	if ftype != pebble.TableFilter {
		return oldAnswer(true)
	}
	n := len(filter)
	if n < oldTrailerLen {
		return oldAnswer(true)
	}
	m, seed, kc, w := oldTrailerWords(filter)
	if !oldTrailerOK(m, seed, kc, w, knownFlags) && oldTrailerReason(m, seed, kc, w, knownFlags) != oldOK {
		return oldAnswer(true)
	}
	if oldTooManyKeys(uint32(kc), m) {
		return oldAnswer(true)
	}
	return oldStaticLookup(filter[:n-oldTrailerLen], m, seed, uint(w&0xff), w&(oldFlagSemiSort<<8) != 0)
}

// decideV2Bloom is FilterPolicy.MayContain of 44d0ca3, the last commit
// before format version 3: every flag known, and a bloom block (keys, no
// buckets, the bloom flag alone) read by Pebble's bloom reader
// (bloomMayContain, policy.go).
func decideV2Bloom(ftype pebble.FilterType, filter []byte) oldDecision {
	if ftype != pebble.TableFilter {
		return oldAnswer(true)
	}
	if len(filter) < oldTrailerLen {
		return oldAnswer(true)
	}
	return decideLongV2Bloom(filter)
}

// decideLongV2Bloom is 44d0ca3's MayContain from the trailer on, which
// 59e8b92 kept as mayContainLong for the long trailer.
func decideLongV2Bloom(filter []byte) oldDecision {
	const knownFlags = oldFlagSemiSort | oldFlagUnfilter | oldFlagBloom
	n := len(filter)
	if n < oldTrailerLen {
		return oldAnswer(true)
	}
	m, seed, kc, w := oldTrailerWords(filter)
	if !oldTrailerOK(m, seed, kc, w, knownFlags) && oldTrailerReason(m, seed, kc, w, knownFlags) != oldOK {
		return oldAnswer(true)
	}
	if oldTooManyKeys(uint32(kc), m) {
		// Keys without buckets: an unfiltered block, a bloom block, or a
		// table too large to filter.
		if w>>8&0xff == oldFlagBloom && m == 0 {
			// bloomMayContain(filter[:n-trailerLen], key)
			b := filter[:n-oldTrailerLen]
			if !oldBloomTableOK(b) {
				return oldAnswer(true)
			}
			return oldDecision{kind: oldBloomLookup, table: b}
		}
		return oldAnswer(true)
	}
	return oldStaticLookup(filter[:n-oldTrailerLen], m, seed, uint(w&0xff), w&(oldFlagSemiSort<<8) != 0)
}

// decideV3 is FilterPolicy.MayContain of 59e8b92, the last commit before
// the raw bloom block: the short trailer of version 3 (format.go's shortOK),
// and mayContainLong (decideLongV2Bloom) for any block that does not end in
// a sound one.
func decideV3(ftype pebble.FilterType, filter []byte) oldDecision {
	const shortTrailerLen, shortFold, shortWord = 16, 0x9e37, 'c'<<16 | 3<<8
	if ftype != pebble.TableFilter {
		return oldAnswer(true)
	}
	n := len(filter)
	if n < shortTrailerLen {
		return oldAnswer(true)
	}
	tb := filter[n-shortTrailerLen:]
	a, w := binary.LittleEndian.Uint64(tb[0:]), binary.LittleEndian.Uint64(tb[8:])
	x := a ^ w
	x ^= x >> 32
	if !(uint16(x^x>>16) == shortFold && w>>40&^oldFlagSemiSort == shortWord) {
		return decideLongV2Bloom(filter)
	}
	if oldTooManyKeys(uint32(a>>32), a&0xffffffff) {
		return oldAnswer(true)
	}
	return oldStaticLookup(filter[:n-8], a&0xffffffff, w&0xffff, uint(w>>32&0xff), w&(oldFlagSemiSort<<40) != 0)
}

// oldStaticLookup is the checks of static.Lookup (internal/static/lookup.go,
// the same from acb1c61 to 59e8b92) before it reads a bucket: a width
// outside [4, 32] answers true (its lookups table), then checkLength, and
// unreadable's answer where that fails.
func oldStaticLookup(data []byte, m, seed uint64, f uint, semi bool) oldDecision {
	if f < 4 || f > 32 {
		return oldAnswer(true)
	}
	bb := uint64(4 * f)
	if semi {
		bb -= 4
	}
	if !(m-1 < oldMaxBuckets && uint64(len(data)) == (m*bb+7)>>3+oldPadBytes) {
		return oldAnswer(m != 0 || len(data) != 0)
	}
	return oldDecision{kind: oldCuckooLookup, table: data, m: m, seed: seed, f: f, semi: semi}
}

// The long trailer's helpers of format.go, the same from acb1c61 to
// 59e8b92 but for knownFlags, a parameter here (checksumV1 is also
// 6d463a0's checksum).

const oldOK = 0

func oldTrailerWords(b []byte) (m, seed, kc, w uint64) {
	tb := b[len(b)-oldTrailerLen:]
	return binary.LittleEndian.Uint64(tb[0:]), binary.LittleEndian.Uint64(tb[8:]),
		binary.LittleEndian.Uint64(tb[16:]), binary.LittleEndian.Uint64(tb[24:])
}

func oldFold(m, seed, kc, w uint64) uint32 {
	x := m ^ seed ^ kc ^ w
	return uint32(x>>32) ^ uint32(x)
}

func oldChecksumV1(buckets, seed uint64, keys, w uint32) uint32 {
	x := uint32(buckets) ^ uint32(buckets>>32)
	x ^= bits.RotateLeft32(uint32(seed)^uint32(seed>>32), 7)
	x ^= bits.RotateLeft32(keys, 13) ^ bits.RotateLeft32(w, 19)
	return x ^ 0x5bd1e995
}

func oldTrailerOK(m, seed, kc, w, knownFlags uint64) bool {
	return oldFold(m, seed, kc, w) == oldCheckFold && w>>8&^knownFlags == oldMagic<<24|2<<16
}

func oldTrailerReason(m, seed, kc, w, knownFlags uint64) int {
	const errMagic, errVersion, errChecksum, errFlags = 2, 3, 4, 5
	w24 := uint32(w)
	switch {
	case uint32(w>>32) != oldMagic:
		return errMagic
	case w24>>16 == 2<<8: // version byte, reserved byte
		if oldFold(m, seed, kc, w) != oldCheckFold {
			return errChecksum
		}
	case w24>>16 == 1<<8:
		if uint32(kc>>32) != oldChecksumV1(m, seed, uint32(kc), w24) {
			return errChecksum
		}
	default:
		return errVersion
	}
	if uint64(w24>>8&0xff)&^knownFlags != 0 {
		return errFlags
	}
	return oldOK
}

func oldTooManyKeys(keys uint32, m uint64) bool { return (uint64(keys)+3)/4 > m }

// oldBloomTableOK is bloomTableOK of 44d0ca3 and 59e8b92 (format.go).
func oldBloomTableOK(b []byte) bool {
	const bloomLineBits, bloomTrailer = 512, 5
	n := len(b) - bloomTrailer
	if n < bloomLineBits/8 {
		return false
	}
	probes, lines := b[n], binary.LittleEndian.Uint32(b[n+1:])
	return probes >= 1 && probes <= 30 && lines >= 1 && uint64(lines)*bloomLineBits/8 == uint64(n)
}

// oldReaderBlock is a block today's code writes, with the keys it holds.
type oldReaderBlock struct {
	writer string
	keys   [][]byte
	block  []byte
}

// todaysBlocks writes the blocks of every kind today's writers write:
// FilterPolicy(B) for every budget 4 to 32 on tables of 0 to 70 keys and
// larger ones (cuckoo blocks with the short trailer, raw bloom blocks, the
// empty table's block), at B = 4 a table of more than 16384 buckets,
// explicit Policy layouts (plain and semi-sorted buckets of every width),
// and a live plan's levels: bloom blocks of 1 to 4 bits per key and
// unfiltered blocks.
func todaysBlocks(t *testing.T) []oldReaderBlock {
	t.Helper()
	sizes := make([]int, 0, 80)
	for n := range 71 {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 96, 128, 200, 256, 500, 1000, 2000, 5000)
	keys := func(n int) [][]byte {
		k := make([][]byte, n)
		for i := range k {
			k[i] = fmt.Appendf(nil, "way-back/%d/%d", n, i)
		}
		return k
	}
	var out []oldReaderBlock
	add := func(p pebble.FilterPolicy, n int) {
		w := p.NewWriter(pebble.TableFilter)
		ks := keys(n)
		for _, k := range ks {
			w.AddKey(k)
		}
		out = append(out, oldReaderBlock{fmt.Sprint(p), ks, w.Finish(nil)})
	}
	for b := cuckoopolicy.MinBitsPerKey; b <= cuckoopolicy.MaxBitsPerKey; b++ {
		for _, n := range sizes {
			add(cuckoopolicy.FilterPolicy(b), n)
		}
	}
	add(cuckoopolicy.FilterPolicy(4), 70_000)
	for f := 4; f <= 32; f++ {
		for _, semi := range []bool{false, true} {
			for _, n := range []int{1, 7, 64, 1000} {
				add(cuckoopolicy.Policy{FingerprintBits: f, SemiSort: semi}, n)
			}
		}
	}
	// A live plan's levels write what its latest fit chose: at these fixed
	// budgets over 8,000 keys, bloom blocks of 1 to 4 bits per key, and no
	// filter.
	seen := map[string]bool{}
	for _, budget := range []uint64{1000, 2000, 3000, 4000, 1} {
		for _, p := range liveLevelPolicies(t, budget) {
			if name := fmt.Sprint(p); !seen[name] {
				seen[name] = true
				for _, n := range append(sizes[:71:71], 100, 1000, 5000) {
					add(p, n)
				}
			}
		}
	}
	bloomBlocks := 0
	for name := range seen {
		if strings.HasSuffix(name, "in cuckoo blocks") {
			bloomBlocks++
		}
	}
	names := slices.Sorted(maps.Keys(seen))
	t.Logf("the live plans' levels wrote %s", strings.Join(names, ", "))
	if bloomBlocks == 0 || !seen["live none"] {
		t.Fatalf("want bloom blocks and unfiltered blocks (live none) among them")
	}
	return out
}

// liveLevelPolicies returns the level policies of a live plan with UseL6
// and a fixed budget, fitted to an in-memory database of four tables of
// 2,000 keys: policies of cuckoopolicy's family whose writers write what
// the fit chose for their level.
func liveLevelPolicies(t *testing.T, budget uint64) []pebble.FilterPolicy {
	t.Helper()
	lp := plan.NewLive(plan.Config{MaxFilterBytes: budget, Fixed: true, UseL6: true}, time.Hour)
	opts := &pebble.Options{FS: vfs.NewMem(), DisableAutomaticCompactions: true, Logger: pebbletest.QuietLogger{}}
	lp.Apply(opts)
	db := openDB(t, "db", opts)
	for tb := range 4 {
		b := db.NewBatch()
		for i := range 2000 {
			if err := b.Set(fmt.Appendf(nil, "k%d-%06d", tb, i), []byte("v"), nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	d, err := lp.Start(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil { // the levels keep writing the last plan
		t.Fatal(err)
	}
	ps := make([]pebble.FilterPolicy, len(opts.Levels))
	for l := range opts.Levels {
		ps[l] = opts.Levels[l].FilterPolicy
	}
	return ps
}

// TestOldReaders feeds every block of todaysBlocks to each old reader's
// decision: for every present key it must answer "may contain", outright
// or by its lookup (oldLookup). Each reader's decision on each kind of
// block with keys is pinned (oldReaders' want): an old reader answers "may
// contain" for what it does not know, and the readers that know a kind
// look it up. A control checks that a reader that loses keys is caught.
func TestOldReaders(t *testing.T) {
	t.Parallel()
	blocks := todaysBlocks(t)
	for _, r := range oldReaders {
		t.Run(r.commit, func(t *testing.T) {
			f := &pebbletest.Failures{T: t, What: "reader of " + r.commit + ", before " + r.before}
			tally := map[string]int{}
			for _, b := range blocks {
				d := r.decide(pebble.TableFilter, b.block)
				kind := goldenKind(b.block)
				tally[kind+": "+d.String()]++
				if len(b.keys) == 0 {
					continue // nothing to lose; "absent" is right
				}
				if want, ok := r.want[kind]; !ok || d.String() != want {
					f.Add("%s, %d keys: %s block, decision %s; want %q", b.writer, len(b.keys), kind, d, want)
					continue
				}
				if k, err := oldLostKey(b, d); err != nil {
					f.Add("%s, %d keys: %s block, %s: %v", b.writer, len(b.keys), kind, d, err)
				} else if k != nil {
					f.Add("%s, %d keys: %s block, %s: %q absent", b.writer, len(b.keys), kind, d, k)
				}
			}
			f.Check()
			lines := make([]string, 0, len(tally))
			for k, n := range tally {
				lines = append(lines, fmt.Sprintf("%s %d", k, n))
			}
			slices.Sort(lines)
			t.Logf("%d blocks: %s", len(blocks), strings.Join(lines, "; "))
		})
	}

	// The control: acb1c61's reader as it would be had it taken a long
	// trailer without buckets for the empty table before checking its
	// flags. It loses every key of every unfiltered and bloom block.
	t.Run("control", func(t *testing.T) {
		broken := func(ftype pebble.FilterType, filter []byte) oldDecision {
			if n := len(filter); n >= oldTrailerLen && filter[n-1] == 'O' {
				if m, _, _, _ := oldTrailerWords(filter); m == 0 {
					return oldAnswer(false)
				}
			}
			return decideV2(ftype, filter)
		}
		want, lost := 0, 0
		for _, b := range blocks {
			kind := goldenKind(b.block)
			if len(b.keys) == 0 || kind != "unfiltered v2" && kind != "bloom block v2" {
				continue
			}
			want++
			if k, err := oldLostKey(b, broken(pebble.TableFilter, b.block)); err != nil {
				t.Fatal(err)
			} else if k != nil {
				lost++
			}
		}
		if want == 0 || lost != want {
			t.Fatalf("the broken reader lost keys of %d of the %d unfiltered and bloom blocks with keys; want all", lost, want)
		}
	})
}

// oldLostKey returns the first key of b that decision d answers absent
// for, or nil. Where d looks up the buckets, its lookup is today's, once
// the parameters d reads are checked against today's Inspect; where it
// looks up a bloom table, Pebble's bloom reader, as the old code called it.
func oldLostKey(b oldReaderBlock, d oldDecision) ([]byte, error) {
	lookup := func([]byte) bool { return d.answer }
	switch d.kind {
	case oldCuckooLookup:
		info, err := cuckoopolicy.Inspect(b.block)
		table := len(b.block) - oldTrailerLen // buckets and padding
		if goldenKind(b.block) == "cuckoo v3" {
			table = len(b.block) - oldPadBytes // buckets, and the short trailer's first 8 bytes
		}
		if err != nil || uint64(info.Buckets) != d.m || uint(info.FingerprintBits) != d.f || info.SemiSort != d.semi ||
			len(d.table) != table || info.RawBloom || info.BloomBlock || info.Unfiltered {
			return nil, fmt.Errorf("the reader looks up %d buckets of f=%d semi=%v in %d bytes; Inspect: %+v, %v",
				d.m, d.f, d.semi, len(d.table), info, err)
		}
		lookup = func(key []byte) bool {
			return cuckoopolicy.FilterPolicy(10).MayContain(pebble.TableFilter, b.block, key)
		}
	case oldBloomLookup:
		lookup = func(key []byte) bool {
			return bloom.FilterPolicy(0).MayContain(pebble.TableFilter, d.table, key)
		}
	}
	for _, k := range b.keys {
		if !lookup(k) {
			return k, nil
		}
	}
	return nil, nil
}
