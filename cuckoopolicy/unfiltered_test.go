package cuckoopolicy

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2"
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
