// Command workload measures what Pebble's bloom filter and the cuckoo filter
// policy do to whole operations in real Pebble databases: LSM shapes (a
// steady LSM, a write burst of overlapping L0 tables, CockroachDB MVCC
// keys), read paths (Get, SeekPrefixGE, and package lookup's Get and Has,
// which read L6 filters; absent, present and 50/50 keys), and
// regimes (hot block cache, OS page cache, a slow device, and memory
// pressure: one block cache of 1% or 4% of the database for filter, index
// and data blocks on the slow device), with policies interleaved and timing
// ratios taken over paired repetitions, beside an A/A twin of bloom(10)
// (the same database built twice) that measures the noise floor. Beside the
// uniform policies it measures filter plans, a policy per level, on the
// same LSMs: bloom(10) without an L6 filter, Pebble master's progressive
// bloom recipe, plan.Progressive(), and plan.Fit's
// plans beside the best bloom-only plans at the same filter bytes (those of
// bloom(10), of bloom(10) without L6, and twice the latter). It writes
// OUT/WORKLOAD.md, OUT/workload.csv and PNG plots.
//
//	go run ./bench/cmd/workload -quick -out /tmp/workload
//
// The report goes to -out (default: a new temporary directory, whose name
// the command prints), which must be empty or absent and writable: an
// earlier report is never overwritten. The databases live in -dir
// (default: a new temporary directory), which must be empty or absent. Both
// are resolved through symbolic links, dangling ones included. The command
// refuses, creating and deleting nothing, either directory if it holds
// anything, and the two if they are the same directory or one lies inside
// the other; it removes the databases when it ends, and on a failure or an
// interrupt the report directory's contents too (the directory itself, and
// any parents, if it created them). It never removes a symbolic link.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/workload"
)

// flags are the command's flags.
type flags struct {
	quick, tiny               *bool
	keys, ops, countOps, reps *int
	duration, delay           *time.Duration
	threads, dir, out         *string
	shapes, regimes, paths    *string
	loadShapes                *string
	loadKeys                  *int
	pressureShapes            *string
	twin                      *bool
}

func main() {
	f := defineFlags()
	flag.Parse()
	cfg := f.config()
	cfg.Progress = os.Stderr
	cfg.Stop = stopOnSignal()

	res, err := workload.Run(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "\nworkload: %v\n", err)
		if errors.Is(err, workload.ErrLostKeys) {
			fmt.Fprintf(os.Stderr, "workload: KEYS WERE LOST: see %s\n", filepath.Join(res.Config.Out, "WORKLOAD.md"))
		}
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "wrote %s\n", filepath.Join(res.Config.Out, "WORKLOAD.md"))
}

// defineFlags defines the command's flags on flag.CommandLine.
func defineFlags() *flags {
	return &flags{
		quick:          flag.Bool("quick", false, "the quick run: under 10 minutes on 2 cores"),
		tiny:           flag.Bool("tiny", false, "a smoke test of a few seconds: no verdicts"),
		keys:           flag.Int("keys", 0, "entries per database (0: the mode's default)"),
		ops:            flag.Int("ops", 0, "fewest operations per measured run (0: the mode's default)"),
		duration:       flag.Duration("duration", 0, "target time of one measured run, from which each path's operation count is calibrated (0: the mode's default)"),
		countOps:       flag.Int("countops", 0, "operations per path of the pass that counts false positives (0: the mode's default)"),
		reps:           flag.Int("reps", 0, "repetitions (0: the mode's default; at least 10 for the timing targets)"),
		threads:        flag.String("threads", "", "goroutine counts, comma-separated (default: the mode's, 1 for -quick, 1,2 otherwise)"),
		delay:          flag.Duration("delay", 0, "device delay per sstable read in the slow regime (0: 50µs)"),
		dir:            flag.String("dir", "", "data directory, empty or absent (default: a temporary directory)"),
		out:            flag.String("out", "", "report directory, empty or absent (default: a new temporary directory)"),
		shapes:         flag.String("shapes", "", "restrict to these shapes (steady,burst,mvcc,blockstore,state,deep)"),
		regimes:        flag.String("regimes", "", "restrict to these regimes (hot,pagecache,slow,pressure1,pressure4; pressure: both pressure regimes)"),
		paths:          flag.String("paths", "", "restrict to these read paths"),
		loadShapes:     flag.String("loadshapes", "", "shapes whose lockstep loading is measured, comma-separated, or none (default: the mode's, steady for -quick, all but deep otherwise)"),
		loadKeys:       flag.Int("loadkeys", 0, "entries per lockstep load (0: the mode's default)"),
		pressureShapes: flag.String("pressureshapes", "", "shapes the pressure regimes run on, comma-separated, or all (default: the mode's, steady for -quick and -tiny, all otherwise)"),
		twin:           flag.Bool("twin", true, "time an A/A twin of bloom(10) (bloom(10)-twin) wherever bloom(10) is timed"),
	}
}

// config is the mode's defaults with the flags applied; a malformed
// -threads exits with status 2.
func (f *flags) config() workload.Config {
	mode := "full"
	switch {
	case *f.tiny:
		mode = "tiny"
	case *f.quick:
		mode = "quick"
	}
	cfg := workload.Defaults(mode)
	if *f.keys > 0 {
		cfg.Keys = *f.keys
		cfg.FlushEvery = max(1000, *f.keys/10)
	}
	if *f.ops > 0 {
		cfg.Ops = *f.ops
	}
	if *f.duration > 0 {
		cfg.RunTime = *f.duration
	}
	if *f.countOps > 0 {
		cfg.CountOps = *f.countOps
	}
	if *f.reps > 0 {
		cfg.Reps = *f.reps
	}
	if *f.delay > 0 {
		cfg.Delay = *f.delay
	}
	for i, t := range strings.Split(*f.threads, ",") {
		if *f.threads == "" {
			break
		}
		if i == 0 {
			cfg.Threads = nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "workload: bad -threads %q\n", *f.threads)
			os.Exit(2)
		}
		cfg.Threads = append(cfg.Threads, n)
	}
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	cfg.Shapes, cfg.Regimes, cfg.Paths = split(*f.shapes), split(*f.regimes), split(*f.paths)
	switch *f.loadShapes {
	case "":
	case "none":
		cfg.LoadRounds = 0
	default:
		cfg.LoadShapes = split(*f.loadShapes)
	}
	if *f.loadKeys > 0 {
		cfg.LoadKeys = *f.loadKeys
	}
	switch *f.pressureShapes {
	case "":
	case "all":
		cfg.PressureShapes = nil
	default:
		cfg.PressureShapes = split(*f.pressureShapes)
	}
	cfg.Twin = *f.twin
	cfg.Dir, cfg.Out = *f.dir, *f.out
	cfg.CommandLine = strings.Join(append([]string{"go run ./bench/cmd/workload"}, os.Args[1:]...), " ")
	return cfg
}

// stopOnSignal returns a channel closed on the first interrupt or SIGTERM;
// a second one quits at once.
func stopOnSignal() chan struct{} {
	stop := make(chan struct{})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		fmt.Fprintln(os.Stderr, "\nworkload: stopping, removing the databases (interrupt again to quit at once)")
		signal.Stop(sig)
		close(stop)
	}()
	return stop
}
