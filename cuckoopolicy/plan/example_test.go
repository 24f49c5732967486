package plan_test

import (
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

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

// A plan fitted to a database at the filter bytes its bloom(10) filters take
// on L0-L5, the levels db.Get reads, set with Apply at the next open.
func ExampleFit() {
	opts := &pebble.Options{DisableAutomaticCompactions: true}
	cuckoopolicy.Apply(opts, bloom.FilterPolicy(10))
	db := fill(opts, 8_000)
	defer db.Close()

	rows, _ := cuckoopolicy.FilterUsage(db)
	var loaded uint64
	for _, u := range rows {
		if u.Level < 6 {
			loaded += u.FilterBytes
		}
	}
	r, err := plan.Fit(db, plan.Config{MaxFilterBytes: loaded})
	if err != nil {
		panic(err)
	}
	fmt.Println("within the ceiling:", r.Bytes <= loaded)
	fmt.Println("no filter on L6 (Get never reads it):", r.Plan[6] == nil)
	fmt.Println("fewer false positives than the best bloom-only plan:", r.FalsePositives < r.BloomOnly.FalsePositives)

	next := &pebble.Options{}
	plan.Apply(next, r.Plan) // at the next open
	// Output:
	// within the ceiling: true
	// no filter on L6 (Get never reads it): true
	// fewer false positives than the best bloom-only plan: true
}

// A live plan: set on the options before Open, started on the open
// database, it fits itself and refits after flushes and compactions, with no
// reopen. The DB Start returns closes the database after the plan's refits.
func ExampleLive() {
	lp := plan.NewLive(plan.Config{MaxFilterBytes: 8 << 10}, time.Second)
	opts := &pebble.Options{DisableAutomaticCompactions: true}
	lp.Apply(opts)
	db, err := lp.Start(fill(opts, 8_000))
	if err != nil {
		panic(err)
	}
	defer db.Close() // stops the plan, then closes the database
	st := lp.Status()
	fmt.Println("fits:", st.Refits, "within the ceiling:", st.Bytes <= 8<<10)
	fmt.Println("the levels write the fitted plan:", lp.Plan() == st.Plan)
	// Output:
	// fits: 1 within the ceiling: true
	// the levels write the fitted plan: true
}

// Progressive, the preset plan for the usual LSM shape (more bits on the
// small upper levels, fewer on L6), set on the options with Apply: each
// level writes its own policy, and the options read bloom blocks and this
// package's blocks of every budget.
func ExampleProgressive() {
	p := plan.Progressive()
	fmt.Println(p)

	opts := &pebble.Options{}
	plan.Apply(opts, p)
	fmt.Println("reads bloom and cuckoo blocks:", opts.Filters[bloom.FilterPolicy(10).Name()] != nil,
		opts.Filters[cuckoopolicy.PolicyName] != nil)
	// Output:
	// L0-L4 cuckoo(16) L5 cuckoo(13) L6 cuckoo{f=8 semi load=0.97}
	// reads bloom and cuckoo blocks: true true
}

// Apply sets a policy per level, here cuckoo filters on L0-L5 and none
// on L6, the levels db.Get reads; a nil entry is no filter, not a copy of
// the level above, as a nil level policy is in Pebble.
func ExampleApply() {
	c := cuckoopolicy.FilterPolicy(10)
	opts := &pebble.Options{}
	plan.Apply(opts, plan.Plan{c, c, c, c, c, c, nil})
	for _, l := range []int{0, 5, 6} {
		fmt.Printf("L%d: %v\n", l, plan.Plan{opts.Levels[l].FilterPolicy})
	}
	// Output:
	// L0: L0 cuckoo(10) L1-L6 none
	// L5: L0 cuckoo(10) L1-L6 none
	// L6: L0-L6 none
}
