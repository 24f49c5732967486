// Package sstableintegration holds tests that run the cuckoo filter policy
// inside Pebble sstables and databases. It has no code of its own; every
// assertion checks real Pebble behaviour against an oracle (a map of what was
// written), and every randomized test prints its seed.
//
// Scenarios, by file:
//
//   - sstable_test.go: single sstables written with sstable.NewWriter in row
//     and columnar table formats: the metaindex entry "fullfilter." + Name(),
//     the properties (policy name, filter size), Inspect's description of the
//     block, absent keys skipped within the false-positive bound of the
//     block's parameters, every present key found, any instance of the
//     family decoding any block, readers whose Filters lack the policy,
//     every budget and fingerprint width, space and false positives against
//     bloom.FilterPolicy(B), and CockroachDB keys with several versions.
//   - db_test.go: databases with the policy on all seven levels: overlapping
//     L0 tables probed by Get; L6 probed by iterators with UseL6Filters (and
//     not by Get); a random workload of sets, deletes, single deletes,
//     merges, range deletions, batches, snapshots, flushes, compactions and
//     reopens; reopening with other budgets; ingestion of external sstables;
//     the OPTIONS round trip through Options.String and Options.Parse with
//     ParseFilterPolicy; one database switched between bloom, cuckoo and no
//     filter across reopens and compactions.
//   - cockroach_test.go: CockroachDB keys (cockroachkvs.Comparer, KeySchema,
//     EncodeMVCCKey) with several MVCC versions per key, filtered by prefix
//     through Comparer.Split; in L6 through UseL6Filters at B=12 at least
//     99.5% of absent prefixes must be skipped.
//   - metamorphic_test.go: Pebble's metamorphic test run in-process
//     (RandomOptions, GenerateOps, New, CompareHistories), every seed with
//     both key formats (Pebble's test keys, CockroachDB's) and one of three
//     operation mixes (Pebble's default, one that deletes a tenth as often,
//     Pebble's many-versions preset), once with no filter and once under
//     each of six filter variants: the filter RandomOptions draws (bloom);
//     a cuckoo policy per level; cuckoopolicy.Apply with one random budget;
//     plan.Progressive; a random plan of bloom, cuckoo and no filter per
//     level with small tables, where the cuckoo levels write raw bloom
//     blocks; and a live plan started on the harness's database (reached
//     through Options.DebugCheck, its listener chained back by a custom
//     option, stopped before each close and restart) and refitted during
//     the operations. Every history must match the run without filters;
//     the filter blocks each variant writes are counted by kind with
//     Inspect, and raw bloom and unfiltered blocks (bloom blocks in the
//     long form) must appear over the seeds. A second test checks that a
//     policy that loses keys is caught.
//   - damage_test.go: filter blocks damaged inside written sstables (bit
//     flips with and without a fixed-up block checksum, truncations,
//     extensions): Pebble reports an error or reads correctly.
//   - errorfs_test.go: read errors injected (vfs/errorfs) into filter block
//     reads only, with a one-byte block cache, through Get and SeekPrefixGE
//     on L0 and (UseL6Filters) L6: every lookup during which a filter read
//     failed returns the error, every other one answers correctly, and no
//     present key is ever reported absent.
//   - crash_test.go: crash cycles on vfs.NewCrashableMem, the crash clone
//     taken from inside a random write while writers, flushes and
//     compactions run, with FilterPolicy(10) on every level and with a
//     per-level mix of bloom, cuckoo and no filter redrawn each cycle: every
//     synced key is read back, through Get and SeekPrefixGE, after each
//     reopen (1,000 cycles a variant with PEBBLE_CUCKOO_LONG=1).
//   - readamp_test.go: data blocks read per absent Get through eight
//     overlapping L0 tables, counted by a vfs.FS wrapper (pebbletest.CountingFS)
//     with a one-byte block cache: cuckoo(B)/bloom(B) at most 0.70 at B=10
//     and 0.10 at B=16, in both table formats, cuckoo fewer by at least five
//     standard deviations.
//   - goldendb_test.go: golden databases (testdata/golden-db), one for each
//     block format version shipped (1, 2 and 3, written by the code of
//     their commits) and one with every kind of block today's code writes
//     (cuckoo blocks with the short trailer, a raw bloom block, a live
//     plan's bloom and unfiltered blocks), opened with today's code: the
//     OPTIONS file, the tables' properties, metaindex names and kinds of
//     block as written, FilterUsage's rows, every key read back through Get
//     and SeekPrefixGE (UseL6Filters), then again after a compaction
//     rewrites every table. testdata/golden-db/README.md says how each was
//     made.
//   - oldreaders_test.go: the way back: the decisions of the readers just
//     before each change of the block format (copied from their commits,
//     trimmed to the trailer checks that choose between "may contain" and
//     a lookup), fed every block today's code writes (every budget, tables
//     of 0 keys up, raw bloom, bloom and unfiltered blocks): none answers
//     "absent" for a present key, and each looks up just the kinds it
//     knows.
//   - harness_test.go: flags, options, the oracle and its checks; the
//     fixtures shared with bench (counting FS, logger, seeds, the long-run
//     switch) are in package pebbletest.
//
// Running:
//
//	go test ./sstable_integration/                      # default: 3 metamorphic seeds of 2,000 ops
//	go test -short ./sstable_integration/               # smaller sizes, 2 metamorphic seeds of 2,000 ops
//	PEBBLE_CUCKOO_LONG=1 go test -timeout 2h ./sstable_integration/   # 200 metamorphic seeds of 5,000 ops, larger sizes
//
// TestMetamorphic alone, on 2 cores: about 10 s with -short, 20 s by
// default, 20 minutes long (each seed runs 14 histories: 7 configurations,
// 2 key formats).
//
// The tests share no state (each database lives on its own in-memory file
// system or temporary directory), so they run in parallel, up to -parallel
// (GOMAXPROCS by default) at a time; their subtests run in order.
//
// Every randomized test logs its seed, which a failure prints:
// PEBBLE_CUCKOO_SEED=N replays it. The statistical comparisons with bloom
// (TestReadAmplification, TestSSTableSizeVersusBloom) run a fixed seed,
// and a fresh one when long. Flags (after the package path):
// -metamorphic.seeds=N runs N metamorphic seeds; -metamorphic.seed=S with
// -metamorphic.ops=K replays one printed seed; -update-golden-db rewrites
// the golden database of today's code (testdata/golden-db/v3-all-kinds)
// before TestGoldenDB reads it.
package sstableintegration
