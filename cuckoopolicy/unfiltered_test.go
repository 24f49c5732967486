package cuckoopolicy

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// TestUnfilteredBlock checks the block a live plan's level writes where its
// plan has no filter: the trailer alone, valid for Inspect with Unfiltered
// set and the table's key count, "may contain" for every key (present or
// not), and still "may contain" for every key after any single flipped bit.
// With buckets it is rejected.
func TestUnfilteredBlock(t *testing.T) {
	r := testkit.Rand(testkit.Seed(t), 0)
	keys := testkit.RandomKeys(r, 1_000)
	block := build(unfilteredPolicy{}, keys)
	if len(block) != trailerLen {
		t.Fatalf("unfiltered block of %d bytes, want the %d-byte trailer alone", len(block), trailerLen)
	}
	info, err := Inspect(block)
	if err != nil || !info.Unfiltered || info.Keys != 1_000 || info.Buckets != 0 {
		t.Fatalf("Inspect: %+v, %v; want a valid unfiltered block of 1000 keys", info, err)
	}
	requireAll(t, FilterPolicy(10), block, keys)
	absent := testkit.RandomKeys(r, 1_000)
	if fp := falsePositives(FilterPolicy(10), block, absent); fp != absent.Len() {
		t.Errorf("%d of %d absent keys may be contained, want all", fp, absent.Len())
	}
	for bit := range 8 * len(block) {
		b := append([]byte(nil), block...)
		b[bit/8] ^= 1 << (bit % 8)
		for i := range 50 {
			if !FilterPolicy(10).MayContain(pebble.TableFilter, b, absent.At(i)) {
				t.Fatalf("bit %d flipped: key %d answered absent", bit, i)
			}
		}
	}
	// With buckets an unfiltered flag is damage.
	var tr trailer
	tr.version, tr.f, tr.flags, tr.buckets, tr.keys = formatVersion, 10, flagUnfiltered, 1, 1
	bad := make([]byte, 8+trailerLen)
	tr.put(bad[8:])
	if _, err := Inspect(bad); !errors.Is(err, ErrInvalidFilter) {
		t.Errorf("Inspect of an unfiltered block with a table: %v, want ErrInvalidFilter", err)
	}
}

// TestUnfilteredUsage writes tables of unfiltered blocks beside cuckoo
// tables on L0: FilterUsage gives them a row of their own, and Mismatches
// flags them, the level's options having a filter, where a row's name
// alone would say every table carries its level's family.
func TestUnfilteredUsage(t *testing.T) {
	opts := &pebble.Options{FS: vfs.NewMem(), DisableAutomaticCompactions: true}
	Apply(opts, FilterPolicy(10))
	for l := range opts.Levels {
		opts.Levels[l].FilterPolicy = unfilteredPolicy{}
	}
	db, err := pebble.Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	flush := func(from int) {
		for i := range 100 {
			if err := db.Set(fmt.Appendf(nil, "key%05d", from+i), nil, pebble.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	flush(0)
	flush(100)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	Apply(opts, FilterPolicy(10))
	if db, err = pebble.Open("db", opts); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	flush(200)
	rows, err := FilterUsage(db)
	if err != nil {
		t.Fatal(err)
	}
	want := []Usage{
		{Level: 0, Policy: PolicyName, Tables: 1, Entries: 100},
		{Level: 0, Policy: PolicyName, Unfiltered: true, Tables: 2, Entries: 200, FilterBytes: 2 * trailerLen},
	}
	if len(rows) != 2 || rows[0].Unfiltered || rows[0].Tables != 1 || rows[1] != (Usage{Level: 0, Policy: PolicyName, Unfiltered: true, Tables: 2, Bytes: rows[1].Bytes, FilterBytes: 2 * trailerLen, Entries: 200}) {
		t.Fatalf("rows %+v, want %+v (bytes aside)", rows, want)
	}
	mm := Mismatches(rows, opts)
	if len(mm) != 1 || mm[0].Usage != rows[1] || mm[0].Want != PolicyName || mm[0].Share < 0.66 || mm[0].Share > 0.67 {
		t.Fatalf("Mismatches %+v, want the unfiltered row, two thirds of L0", mm)
	}
}
