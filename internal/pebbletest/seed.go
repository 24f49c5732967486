package pebbletest

import (
	"flag"
	"math/rand/v2"
	"os"
	"strconv"
	"time"
)

// The environment variables that replay a seed and ask for long runs.
const (
	SeedEnv = "PEBBLE_CUCKOO_SEED"
	LongEnv = "PEBBLE_CUCKOO_LONG"
)

// Long reports whether long runs were asked for, with PEBBLE_CUCKOO_LONG=1.
func Long() bool { return os.Getenv(LongEnv) == "1" }

// Scale picks a size for the current mode: -short, default, or long.
func Scale(short, normal, long int) int {
	switch {
	case Long():
		return long
	case isShort():
		return short
	default:
		return normal
	}
}

// isShort is testing.Short, read from the go test flag -test.short, so that
// this package does not link the testing package into the benchmark
// commands: false outside a test binary.
func isShort() bool {
	f := flag.Lookup("test.short")
	return f != nil && f.Value.String() == "true"
}

// Seed returns the seed of a randomized test: PEBBLE_CUCKOO_SEED if set,
// else a fresh one from the clock. It logs the seed with the command line
// that replays it, which go test prints when the test fails.
func Seed(t TB) uint64 {
	t.Helper()
	if s, ok := envSeed(t); ok {
		return logSeed(t, s)
	}
	return logSeed(t, uint64(time.Now().UnixNano()))
}

// FixedSeed returns the seed of a statistical test, whose bounds a rare
// draw may cross: fixed, so that the default run is the same every time,
// unless PEBBLE_CUCKOO_SEED replays another or long runs draw a fresh one.
func FixedSeed(t TB, fixed uint64) uint64 {
	t.Helper()
	if s, ok := envSeed(t); ok {
		return logSeed(t, s)
	}
	if Long() {
		return logSeed(t, uint64(time.Now().UnixNano()))
	}
	return logSeed(t, fixed)
}

func envSeed(t TB) (uint64, bool) {
	t.Helper()
	v := os.Getenv(SeedEnv)
	if v == "" {
		return 0, false
	}
	s, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: not a seed: %v", SeedEnv, v, err)
	}
	return s, true
}

func logSeed(t TB, s uint64) uint64 {
	t.Helper()
	t.Logf("seed %d (replay with %s=%d go test -run '^%s$')", s, SeedEnv, s, t.Name())
	return s
}

// Rand returns a generator drawn from seed.
func Rand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x5eed_c0c0_f11e))
}
