package cuckoopolicy_test

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/dbtest"
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
	fmt.Printf("f=%d semi-sorted=%v keys=%d bits/key=%.1f\n",
		info.FingerprintBits, info.SemiSort, info.Keys, info.BitsPerKey)
	// Output:
	// true
	// f=11 semi-sorted=true keys=1000 bits/key=10.8
}

// Options for a Pebble database with the cuckoo filter on every level, which
// keep reading the bloom filters of tables written before the switch.
func ExampleApply() {
	opts := &pebble.Options{}
	cuckoopolicy.Apply(opts, cuckoopolicy.FilterPolicy(10))
	opts.EnsureDefaults()
	fmt.Println(opts.Levels[0].FilterPolicy, opts.Levels[6].FilterPolicy)
	for _, name := range []string{"pebble_cuckoo.v1", "rocksdb.BuiltinBloomFilter"} {
		fmt.Printf("reads %s: %v\n", name, opts.Filters[name] != nil)
	}
	// Output:
	// cuckoopolicy.FilterPolicy(10) cuckoopolicy.FilterPolicy(10)
	// reads pebble_cuckoo.v1: true
	// reads rocksdb.BuiltinBloomFilter: true
}

// Watching a switch: the tables each policy's filter covers, per level.
func ExampleFilterUsage() {
	opts := &pebble.Options{FS: vfs.NewMem(), Logger: dbtest.QuietLogger{}}
	cuckoopolicy.Apply(opts, cuckoopolicy.FilterPolicy(10))
	db, err := pebble.Open("db", opts)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	for i := range 1000 {
		db.Set(fmt.Appendf(nil, "key%04d", i), nil, pebble.NoSync)
	}
	db.Flush()
	rows, err := cuckoopolicy.FilterUsage(db)
	if err != nil {
		panic(err)
	}
	for _, u := range rows {
		fmt.Printf("L%d %s: %d table(s), %d entries, %.1f filter bits per entry\n", u.Level, u.Policy, u.Tables, u.Entries, u.BitsPerEntry())
	}
	// Output:
	// L0 pebble_cuckoo.v1: 1 table(s), 1000 entries, 10.8 filter bits per entry
}

// Parsing an OPTIONS file that names the cuckoo policy.
func ExampleParseFilterPolicy() {
	for _, name := range []string{"pebble_cuckoo.v1", "rocksdb.BuiltinBloomFilter", "none", "other"} {
		p, err := cuckoopolicy.ParseFilterPolicy(name)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: no filter %v, this package's %v\n", p.Name(), p == pebble.NoFilterPolicy, p.Name() == cuckoopolicy.PolicyName)
	}
	// Output:
	// pebble_cuckoo.v1: no filter false, this package's true
	// rocksdb.BuiltinBloomFilter: no filter false, this package's false
	// none: no filter true, this package's false
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
	fmt.Println(info.FingerprintBits, info.SemiSort, info.Keys, info.Buckets, err)
	_, err = cuckoopolicy.Inspect([]byte("not a filter"))
	fmt.Println(err)
	// Output:
	// 13 true 5000 1316 <nil>
	// cuckoopolicy: invalid filter block: shorter than its trailer (12 bytes)
}

// fill writes n keys in tables of 1,000 and returns the open database.
func fill(opts *pebble.Options, n int) *pebble.DB {
	opts.FS = vfs.NewMem()
	db, err := pebble.Open("db", opts)
	if err != nil {
		panic(err)
	}
	for i := range n {
		if err := db.Set(fmt.Appendf(nil, "user%08d", i*7919%n), []byte("v"), pebble.NoSync); err != nil {
			panic(err)
		}
		if i%1000 == 999 {
			if err := db.Flush(); err != nil {
				panic(err)
			}
		}
	}
	return db
}

// A rollback watched to its end: every FilterUsage row whose tables do not
// carry the family the options write on their level, with its share of the
// level's entries.
func ExampleMismatches() {
	opts := &pebble.Options{DisableAutomaticCompactions: true}
	cuckoopolicy.Apply(opts, cuckoopolicy.FilterPolicy(10))
	db := fill(opts, 3_000)
	db.Close()

	back := &pebble.Options{DisableAutomaticCompactions: true, FS: opts.FS}
	cuckoopolicy.Apply(back, bloom.FilterPolicy(10)) // still reads the cuckoo tables
	db, err := pebble.Open("db", back)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	rows, _ := cuckoopolicy.FilterUsage(db)
	for _, m := range cuckoopolicy.Mismatches(rows, back) {
		fmt.Printf("L%d: %d tables, %.0f%% of the level's entries, carry %s filters; the options write %s; read meanwhile: %v\n",
			m.Level, m.Tables, 100*m.Share, m.Policy, m.Want, m.ReadBy(back))
	}
	// Output:
	// L0: 3 tables, 100% of the level's entries, carry pebble_cuckoo.v1 filters; the options write rocksdb.BuiltinBloomFilter; read meanwhile: true
}
