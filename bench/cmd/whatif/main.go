// Command whatif shows, on an existing Pebble database, what Pebble's bloom
// filter and the cuckoo filter would do at several bits-per-key budgets:
// per level, the false-positive rate on the database's own keys, the filter
// bytes, and the data-block reads per absent point read each would save
// against the filters the database has now.
//
//	go run ./bench/cmd/whatif -db DIR                       # default comparer: whole keys
//	go run ./bench/cmd/whatif -db DIR -comparer cockroach   # CockroachDB keys: MVCC prefixes
//	go run ./bench/cmd/whatif -db DIR -l6                   # the plan for prefix reads with L6 filters
//	go run ./bench/cmd/whatif -db DIR -memory 64MiB         # the plan within 64 MiB of filters
//	go run ./bench/cmd/whatif -db DIR -cache 1GiB           # do filters and indexes fit a 1 GiB block cache?
//
// It ends with the filter plan plan.Fit chooses for the
// database, for absent Gets or with -l6 for lookups that read L6 filters,
// within a ceiling of filter bytes: by default the bytes the current filters
// take on the levels those lookups load (L0-L5 for Get, L0-L6 with -l6), by
// plan.Fit's model; with -memory SIZE that many bytes (a byte count, or a
// number with a unit: KiB, MiB, GiB, TiB or KB, MB, GB, TB). At equal
// bytes it prints the plan, the current filters, bloom(10) on every level
// and the best bloom-only plan with their expected false-positive reads per
// absent lookup; the reads in vain they cost on the same absent probes; the
// current filters measured through Pebble; the Go lines that apply the plan;
// a one-line verdict; and, last, a decision line: "Decision: switch to this
// plan" or "Decision: stay with the current filters", with its reason. A
// -memory it cannot read, or of 0, is an error (exit status 1) before the
// database is opened.
//
// The measurement through Pebble looks up absent keys of the database's own
// key space as the plan's lookups do (db.Get; with -l6 SeekPrefixGE on an
// iterator with UseL6Filters) and counts Pebble's filter counters
// (db.Metrics().Filter): every filter that says "may contain" an absent key
// is a data-block read in vain. It prints the reads in vain per absent
// lookup with a 95% interval beside plan.Fit's figure for the current
// filters and the model's error; where the model is off by more than 1.3x,
// the verdict scales the plan's projection by that error and the decision
// takes the larger of the two figures. It looks up a round of keys (the
// absent probes' source keys with a byte appended), then more rounds until
// 400 reads in vain, and stops sooner at -lookups N lookups (default
// 1,000,000) or after -lookuptime D (default 30s); -lookups or -lookuptime
// of 0 or less is an error.
//
// With -cache SIZE (the same units) it also weighs a block cache of that
// size shared by filter, index and data blocks, for lookups that read L6
// filters: the index bytes, measured, and for no filters, CockroachDB's
// bloom(10) on L0-L5 without L6 filters, bloom(10) on every level and the
// recommended plan, the filter bytes by plan.Fit's model, whether filters and
// indexes fit the cache and what they leave for data blocks. It recommends
// the largest filter budget that keeps filters and indexes within half the
// cache, and plan.Fit's plan at it with its Go lines; where the indexes take
// half the cache or more, no L6 filter, and the cache at which the budget
// would be bloom(10) on every level's bytes. A -cache it cannot read, or of
// 0, is an error before the database is opened.
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

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/whatif"
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
	lookups := fs.Int("lookups", whatif.DefaultLookups, "the most absent lookups that measure the current filters through Pebble")
	lookupTime := fs.Duration("lookuptime", whatif.DefaultLookupTime, "the longest the measurement through Pebble runs")
	memory := fs.String("memory", "", "the filter `bytes` the plan may take (64MiB, 500MB, 1GiB, 1048576); default: the current filters'")
	useL6 := fs.Bool("l6", false, "plan for lookups that read L6 filters (IterOptions.UseL6Filters), not db.Get")
	cache := fs.String("cache", "", "the block cache's `bytes`, shared by filter, index and data blocks (64MiB, 1GiB, 1048576):\n"+
		"whether filters and indexes fit it, and the filter budget and plan for L6-filtered lookups\n"+
		"that keep them within half of it")
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
	mem, err := sizeFlag(fs, "memory", *memory, "a plan needs more than 0 bytes of filters")
	if err != nil {
		return err
	}
	cacheBytes, err := sizeFlag(fs, "cache", *cache, "a block cache needs more than 0 bytes")
	if err != nil {
		return err
	}
	if *lookups <= 0 || *lookupTime <= 0 {
		return fmt.Errorf("whatif: -lookups and -lookuptime must be more than 0")
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
		Cache:    cacheBytes,

		Lookups:    *lookups,
		LookupTime: *lookupTime,
	})
	if err != nil {
		return err
	}
	return rep.Write(stdout)
}

// sizeFlag returns the bytes the size flag name gives (0 when it is not
// set), or its error: a size parseSize cannot read, or a size of 0, which
// zero says is no size for that flag.
func sizeFlag(fs *flag.FlagSet, name, value, zero string) (uint64, error) {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	if !set {
		return 0, nil
	}
	n, err := parseSize(value)
	if err != nil {
		return 0, fmt.Errorf("%w (-%s)", err, name)
	}
	if n == 0 {
		return 0, fmt.Errorf("whatif: -%s %s: %s", name, value, zero)
	}
	return n, nil
}
