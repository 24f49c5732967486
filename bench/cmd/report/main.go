// Command report measures the cuckoo filter policy against Pebble's bloom
// filter and other filters and writes DIR/REPORT.md with PNG plots.
//
//	go run ./bench/cmd/report -quick -out /tmp/report   # about 3 minutes on 2 idle cores, 5 busy
//	go run ./bench/cmd/report -out /tmp/report          # the paper's scale: hours
//
// A progress line goes to stderr during long phases.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/report"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, "report: ") { // the package's errors name it
			msg = "report: " + msg
		}
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "a run of about three minutes on two idle cores (five on busy ones)")
	tiny := fs.Bool("tiny", false, "a smoke test of seconds: every section runs, no target is judged and no verdict drawn")
	out := fs.String("out", "", "directory for REPORT.md and the plots (required)")
	only := fs.String("only", "", "comma-separated sections to run: "+strings.Join(report.Sections, ","))
	seed := fs.Uint64("seed", 1, "seed of every key set")
	loadRuns := fs.Int("loadruns", 0, "runs per fingerprint size in the load table (0: the mode's)")
	loadLog := fs.Int("loadbuckets", 0, "log2 of the load table's buckets (0: the mode's)")
	loadF := fs.String("loadf", "", "comma-separated fingerprint sizes of the load table, within 2..16 (empty: all)")
	loadWorkers := fs.Int("loadworkers", 0, "load-table runs measured side by side (0: GOMAXPROCS; each needs up to about 850 MB at the full scale)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("need -out DIR and no arguments")
	}
	c := report.Full()
	switch {
	case *tiny:
		c = report.Tiny()
	case *quick:
		c = report.Quick()
	}
	c.Seed = *seed
	if *loadRuns > 0 {
		c.LoadRuns = *loadRuns
	}
	if *loadLog > 0 {
		c.LoadLogBuckets = *loadLog
	}
	if *loadF != "" {
		for _, v := range strings.Split(*loadF, ",") {
			f, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || f < 2 || f > 16 {
				return fmt.Errorf("-loadf: %q is not a fingerprint size in 2..16", v)
			}
			c.LoadFingerprints = append(c.LoadFingerprints, f)
		}
		slices.Sort(c.LoadFingerprints)
		c.LoadFingerprints = slices.Compact(c.LoadFingerprints)
	}
	c.LoadWorkers = *loadWorkers
	c.Progress = stderr
	var sections []string
	if *only != "" {
		sections = strings.Split(*only, ",")
	}
	cmd := "go run ./bench/cmd/report"
	if len(args) > 0 {
		cmd += " " + strings.Join(args, " ")
	}
	return report.Run(c, *out, sections, cmd)
}
