package markdown_test

import (
	"fmt"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/markdown"
)

func ExampleDoc() {
	d := markdown.New("")
	if d.Section("1. Load", true) {
		d.Table([]string{"f", "load"}, [][]string{{"8", "95.62%"}, {"12", "95.77%"}})
	}
	d.Section("2. Lookup", false)
	d.List([]string{"one verdict", "another"})
	fmt.Print(d.String())
	// Output:
	// ## 1. Load
	//
	// | f | load |
	// | --- | --- |
	// | 8 | 95.62% |
	// | 12 | 95.77% |
	//
	// ## 2. Lookup
	//
	// Not measured in this run.
	//
	// - one verdict
	// - another
}
