package cuckoopolicy_test

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// A filter block written and read directly, as Pebble does for each sstable.
func ExampleFilterPolicy() {
	p := cuckoopolicy.FilterPolicy(10)
	w := p.NewWriter(pebble.TableFilter)
	for i := range 1000 {
		w.AddKey(fmt.Appendf(nil, "user%04d", i))
	}
	block := w.Finish(nil)

	fmt.Println(p.MayContain(pebble.TableFilter, block, []byte("user0042")))
	info, _ := cuckoopolicy.Inspect(block)
	fmt.Printf("f=%d semi-sorted=%v keys=%d bits/key<=10: %v\n",
		info.FingerprintBits, info.SemiSorted, info.Keys, info.BitsPerKey <= 10.5)
	// Output:
	// true
	// f=10 semi-sorted=true keys=1000 bits/key<=10: true
}

// Options for a Pebble database with the cuckoo filter on every level.
func ExampleFilterPolicy_options() {
	opts := &pebble.Options{}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = cuckoopolicy.FilterPolicy(10)
		opts.Levels[i].FilterType = pebble.TableFilter
	}
	opts.EnsureDefaults()
	fmt.Println(opts.Levels[0].FilterPolicy.Name())
	// Output: pebble_cuckoo.v1
}

// Parsing an OPTIONS file that names the cuckoo policy.
func ExampleParseFilterPolicy() {
	for _, name := range []string{"pebble_cuckoo.v1", "rocksdb.BuiltinBloomFilter", "none", "other"} {
		p, err := cuckoopolicy.ParseFilterPolicy(name)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: %T\n", p.Name(), p)
	}
	// Output:
	// pebble_cuckoo.v1: cuckoopolicy.FilterPolicy
	// rocksdb.BuiltinBloomFilter: bloom.FilterPolicy
	// none: base.noFilter
	// cuckoopolicy: unknown filter policy "other"
}

// Inspect reports a block's parameters.
func ExampleInspect() {
	p := cuckoopolicy.Policy{FingerprintBits: 13, SemiSort: true, LoadFactor: 0.95}
	w := p.NewWriter(pebble.TableFilter)
	for i := range 5000 {
		w.AddKey(fmt.Appendf(nil, "k%d", i))
	}
	info, err := cuckoopolicy.Inspect(w.Finish(nil))
	fmt.Println(info.FingerprintBits, info.SemiSorted, info.Keys, info.Buckets, err)
	_, err = cuckoopolicy.Inspect([]byte("not a filter"))
	fmt.Println(err)
	// Output:
	// 13 true 5000 1316 <nil>
	// cuckoopolicy: invalid filter block: shorter than its trailer (12 bytes)
}
