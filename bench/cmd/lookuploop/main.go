// Command lookuploop builds one filter block and calls its policy's
// MayContain in a loop, through the pebble.FilterPolicy interface as Pebble
// does, so that a tool outside Go's benchmark harness can count what a call
// executes. bench/README.md counts instructions per call with valgrind:
//
//	go build -o /tmp/lookuploop ./bench/cmd/lookuploop
//	GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg \
//		/tmp/lookuploop -policy cuckoo -calls 1000000 -p 0
//	callgrind_annotate --inclusive=yes /tmp/cg | grep 'FilterPolicy).MayContain'
//
// and divides the inclusive count of the interface method by -calls. (Under
// valgrind the Go runtime sometimes executes an instruction valgrind does
// not know, RDTSCP, and the run stops with SIGILL; run it again.)
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/filters"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/keys"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "lookuploop:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lookuploop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	policy := fs.String("policy", "cuckoo", "cuckoo (cuckoopolicy.FilterPolicy) or bloom (Pebble's bloom.FilterPolicy)")
	bits := fs.Int("bits", 10, "bits per key")
	nkeys := fs.Int("keys", 1<<16, "keys in the filter")
	calls := fs.Int("calls", 1_000_000, "MayContain calls")
	p := fs.Float64("p", 0, "share of the queries that are members")
	keyLen := fs.Int("keylen", keys.ShortLen, "key length in bytes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var pol pebble.FilterPolicy
	switch *policy {
	case "cuckoo":
		pol = cuckoopolicy.FilterPolicy(*bits)
	case "bloom":
		pol = bloom.FilterPolicy(*bits)
	default:
		return fmt.Errorf("-policy %q: want cuckoo or bloom", *policy)
	}
	if *nkeys < 1 || *calls < 0 || *p < 0 || *p > 1 || *keyLen < 1 {
		return fmt.Errorf("need -keys >= 1, -calls >= 0, 0 <= -p <= 1, -keylen >= 1")
	}
	members := keys.Gen{Seed: 101, Width: *keyLen}
	block := filters.BuildPolicy(pol, members.First(*nkeys))
	const queries = 1 << 16
	q, _ := keys.Mixed(members, *nkeys, keys.Gen{Seed: 102, Width: *keyLen}, queries, *p, 7)
	hits := 0
	for i := range *calls {
		if pol.MayContain(pebble.TableFilter, block, q.At(i%queries)) {
			hits++
		}
	}
	fmt.Fprintf(stdout, "%s: %d calls on a %d-byte block of %d keys, %d answered true\n",
		pol.Name(), *calls, len(block), *nkeys, hits)
	return nil
}
