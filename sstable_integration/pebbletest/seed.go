package pebbletest

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
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
	case testing.Short():
		return short
	default:
		return normal
	}
}

// Seed returns the seed of a randomized test: PEBBLE_CUCKOO_SEED if set,
// else a fresh one from the clock. It logs the seed with the command line
// that replays it, which go test prints when the test fails.
func Seed(t testing.TB) uint64 {
	t.Helper()
	if s, ok := envSeed(t); ok {
		return logSeed(t, s)
	}
	return logSeed(t, uint64(time.Now().UnixNano()))
}

// FixedSeed returns the seed of a statistical test, whose bounds a rare
// draw may cross: fixed, so that the default run is the same every time,
// unless PEBBLE_CUCKOO_SEED replays another or long runs draw a fresh one.
func FixedSeed(t testing.TB, fixed uint64) uint64 {
	t.Helper()
	if s, ok := envSeed(t); ok {
		return logSeed(t, s)
	}
	if Long() {
		return logSeed(t, uint64(time.Now().UnixNano()))
	}
	return logSeed(t, fixed)
}

func envSeed(t testing.TB) (uint64, bool) {
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

func logSeed(t testing.TB, s uint64) uint64 {
	t.Helper()
	t.Logf("seed %d (replay with %s=%d go test -run '^%s$')", s, SeedEnv, s, t.Name())
	return s
}

// Rand returns a generator drawn from seed.
func Rand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x5eed_c0c0_f11e))
}
