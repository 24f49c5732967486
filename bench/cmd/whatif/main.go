// Command whatif shows, on an existing Pebble database, what Pebble's bloom
// filter and the cuckoo filter would do at several bits-per-key budgets:
// per level, the false-positive rate on the database's own keys, the filter
// bytes, and the data-block reads per absent point read each would save
// against the filters the database has now.
//
//	go run ./bench/cmd/whatif -db DIR                       # default comparer: whole keys
//	go run ./bench/cmd/whatif -db DIR -comparer cockroach   # CockroachDB keys: MVCC prefixes
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
	})
	if err != nil {
		return err
	}
	return rep.Write(stdout)
}
