// Command growth runs the growth scenarios (package bench/internal/growth).
//
// By default: one key stream written into four Pebble databases (a live plan
// at a fixed ceiling, a plan made at the start and kept, bloom(10)
// everywhere, the best bloom-only plan made at the start and kept), grown
// from a small start to 16 times its keys, with each policy's L0-L5 filter
// bytes and false-positive reads per absent Get at every doubling, and every
// key read back at the end.
//
// With -reference: live plans at their default, relative budget against the
// configuration they replace (bloom(10) on L0-L5) and the plain swap
// (cuckoo(10) on L0-L5), at the default refit interval and at -interval,
// one key stream written in committed batches of -batch keys from -keys to
// 8 times, the filter bytes sampled after every batch, and the bytes and
// false-positive reads settled at every doubling beside the targets of the
// issue the scenario answers.
//
//	go run ./bench/cmd/growth -out bench/sample/growth.md
//	go run ./bench/cmd/growth -reference -out bench/sample/growth-reference.md
//	go run ./bench/cmd/growth -quick
//	go run ./bench/cmd/growth -reference -quick
//
// The report goes to stdout, and to -out too if given. The databases live in
// a new temporary directory under -dir, removed at the end. It exits with
// status 1 on an error, and after the report if a key was lost.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/growth"
)

func main() {
	quick := flag.Bool("quick", false, "a smoke run of seconds: 20,000 keys to 4x (-reference: to 8x in batches of 5,000), 5,000 absent Gets")
	reference := flag.Bool("reference", false, "live plans at their default budget against bloom(10) and cuckoo(10) on L0-L5")
	keys := flag.Int("keys", 0, "keys of the start database (default 200,000; -reference 250,000; -quick 20,000)")
	doublings := flag.Int("doublings", 0, "doublings after the start (default 4, 16x; -reference 3, 8x; -quick 2)")
	absent := flag.Int("absent", 0, "absent Gets per database per checkpoint; -reference: at a time (default 30,000; -quick 5,000)")
	fps := flag.Int("fp", 0, "-reference: absent Gets go on until this many false-positive reads (default 1,000)")
	maxAbsent := flag.Int("max-absent", 0, "-reference: absent Gets per database per checkpoint at most (default 4,000,000; -quick 50,000)")
	batch := flag.Int("batch", 0, "-reference: keys per committed batch, and per sample (default 50,000; -quick 5,000)")
	interval := flag.Duration("interval", 0, "the live plan's refit interval; -reference: the second live plan's (default 1s)")
	value := flag.Int("value", 0, "value bytes (default 64)")
	steps := flag.Int("steps", 0, "writes per doubling, each followed by compactions and a live refit (default 1: a burst)")
	seed := flag.Uint64("seed", 1, "seed of the key stream")
	dir := flag.String("dir", "", "directory for the databases (default: the system's temporary directory)")
	out := flag.String("out", "", "also write the report to this file")
	flag.Parse()

	cfg := growth.Config{Keys: *keys, Doublings: *doublings, Absent: *absent, ValueSize: *value,
		FalsePositives: *fps, MaxAbsent: *maxAbsent, Batch: *batch, RefitInterval: *interval,
		Seed: *seed, Dir: *dir, Steps: *steps, Progress: os.Stderr, Smoke: *quick,
		Command: strings.Join(append([]string{"go run ./bench/cmd/growth"}, os.Args[1:]...), " ")}
	if *quick {
		cfg.Keys = or(cfg.Keys, 20_000)
		cfg.Absent = or(cfg.Absent, 5_000)
		if *reference {
			cfg.Batch = or(cfg.Batch, 5_000)
			cfg.MaxAbsent = or(cfg.MaxAbsent, 50_000)
		} else {
			cfg.Doublings = or(cfg.Doublings, 2)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	var r interface{ Markdown(io.Writer) error }
	var err error
	if *reference {
		r, err = growth.RunReference(ctx, cfg)
	} else {
		r, err = growth.Run(ctx, cfg)
	}
	if err != nil && !errors.Is(err, growth.ErrLostKeys) {
		fmt.Fprintf(os.Stderr, "growth: %v\n", err)
		os.Exit(1)
	}
	var b strings.Builder
	if *quick && !*reference { // RunReference's report says so itself
		b.WriteString("Smoke run (-quick): too small to judge plans by.\n\n")
	}
	if werr := r.Markdown(&b); werr != nil {
		fmt.Fprintf(os.Stderr, "growth: %v\n", werr)
		os.Exit(1)
	}
	fmt.Print(b.String())
	if *out != "" {
		if werr := os.WriteFile(*out, []byte(b.String()), 0o644); werr != nil {
			fmt.Fprintf(os.Stderr, "growth: %v\n", werr)
			os.Exit(1)
		}
	}
	fmt.Fprintf(os.Stderr, "growth: done in %s\n", time.Since(start).Round(time.Second))
	if err != nil {
		fmt.Fprintf(os.Stderr, "growth: %v\n", err)
		os.Exit(1)
	}
}

// or is v, or d where v is 0.
func or(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}
