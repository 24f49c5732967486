// Package pebbletest holds test fixtures of this module, shared by the
// benchmarks (bench) and the Pebble integration tests (sstable_integration):
// a vfs.FS that counts block reads, a quiet Pebble logger, snapshots of a
// directory's files (to show a tool left a database untouched), replayable seeds,
// the switch for long runs, and the false-positive bound of a cuckoo filter
// block. It is not an API: it changes with the tests that use it.
//
// Environment:
//
//	PEBBLE_CUCKOO_SEED=N   replays a randomized test with the seed its failure printed
//	PEBBLE_CUCKOO_LONG=1   runs the long versions: larger sizes, and fresh seeds for
//	                       the statistical tests, which otherwise run a fixed seed
package pebbletest
