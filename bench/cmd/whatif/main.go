// Command whatif shows, on an existing Pebble database, what Pebble's bloom
// filter and the cuckoo filter would do at several bits-per-key budgets:
// per level, the false-positive rate on the database's own keys, the filter
// bytes, and the data-block reads per absent point read each would save
// against the filters the database has now.
//
//	go run ./bench/cmd/whatif -db DIR                       # default comparer: whole keys
//	go run ./bench/cmd/whatif -db DIR -comparer cockroach   # CockroachDB keys: MVCC prefixes
//	go run ./bench/cmd/whatif -db DIR -memory 64MiB         # and the filter plan for 64 MiB
//	go run ./bench/cmd/whatif -db DIR -memory 64MiB -l6     # the plan for prefix reads with L6 filters
//
// With -memory SIZE it also prints the filter plan cuckoopolicy.PlanFor
// chooses for the database within SIZE bytes of filters (a byte count, or a
// number with a unit: KiB, MiB, GiB, TiB or KB, MB, GB, TB), for absent Gets,
// or with -l6 for lookups that read L6 filters; its filters' bytes; the
// false-positive data-block reads per absent lookup that the plan, the
// current filters and bloom(10) on every level cost on the same absent
// probes; and the Go lines that apply the plan. A -memory it cannot read, or
// of 0, is an error (exit status 1) before the database is opened.
//
// It opens the database read-only and never writes to it; it refuses a
// database that a running Pebble holds open. Run it on a checkpoint
// (pebble.DB.Checkpoint) or a copy. See package bench/whatif for what it
// measures and how absent probes are derived. The report goes to stdout,
// progress lines for databases of many tables to stderr; on any error it
// prints the error and exits with status 1: a damaged database (a corrupt
// table or filter block, a file that is a named pipe) is such an error, and
// the message names the file. -h prints the usage and exits with status 0.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/whatif"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("whatif", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("db", "", "the Pebble database directory: a checkpoint or a copy (required)")
	comparer := fs.String("comparer", "default", "the database's comparer: "+strings.Join(whatif.Comparers, " or "))
	budgets := fs.String("budgets", "8,10,12,14,16", "comma-separated bits-per-key budgets of the candidate filters")
	sample := fs.Int("sample", 100000, "keys per table that build the candidates and give probes, evenly spaced (0: all)")
	probes := fs.Int("probes", whatif.DefaultProbes, "absent probes to derive from the database's keys")
	memory := fs.String("memory", "", "if set, print the filter plan for this many filter `bytes` (64MiB, 500MB, 1GiB, 1048576)")
	useL6 := fs.Bool("l6", false, "with -memory, plan for lookups that read L6 filters (IterOptions.UseL6Filters), not db.Get")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: whatif -db DIR [flags]\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // the usage asked for is printed: not an error
		}
		return fmt.Errorf("whatif: %w", err)
	}
	if *dir == "" || fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("whatif: need -db DIR and no arguments")
	}
	mem, err := memoryFlag(fs, *memory, *useL6)
	if err != nil {
		return err
	}
	var bs []int
	for _, f := range strings.Split(*budgets, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("whatif: -budgets: %w", err)
		}
		bs = append(bs, b)
	}
	rep, err := whatif.Analyze(whatif.Config{
		Dir:      *dir,
		Comparer: *comparer,
		Budgets:  bs,
		Sample:   *sample,
		Probes:   *probes,
		Progress: stderr,
		Memory:   mem,
		UseL6:    *useL6,
	})
	if err != nil {
		return err
	}
	return rep.Write(stdout)
}

// memoryFlag returns the bytes -memory gives (0 when it is not set), or the
// error in -memory and -l6: a size parseSize cannot read, a size of 0, -l6
// without -memory.
func memoryFlag(fs *flag.FlagSet, memory string, useL6 bool) (uint64, error) {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "memory" })
	if !set {
		if useL6 {
			return 0, fmt.Errorf("whatif: -l6 needs -memory SIZE: it plans the filters for lookups that read L6 filters")
		}
		return 0, nil
	}
	mem, err := parseSize(memory)
	if err != nil {
		return 0, fmt.Errorf("%w (-memory)", err)
	}
	if mem == 0 {
		return 0, fmt.Errorf("whatif: -memory %s: a plan needs more than 0 bytes of filters", memory)
	}
	return mem, nil
}
