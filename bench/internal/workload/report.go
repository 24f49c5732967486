package workload

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func mib(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	default:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	}
}

func f3(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

func f4(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 4, 64)
}

func ratioCell(st ratioStat) string {
	if st.N == 0 || math.IsNaN(st.Median) {
		return "-"
	}
	return fmt.Sprintf("%.3f [%.2f, %.2f]", st.Median, st.Lo, st.Hi)
}

// timeCell is a time ratio's table cell: "-" where not measured, "not
// identical" where the two databases' LSMs differ (not judged).
func (r *Result) timeCell(k cellKey, x, base string) string {
	st := r.timeRatio(k, x, base)
	if st.N == 0 {
		return "-"
	}
	if ok, _ := r.identical(k.Shape, x, base); !ok {
		return "not identical"
	}
	return ratioCell(st)
}

// policyNames returns the policies of the first shape in load order.
func (r *Result) policyNames() []string {
	var names []string
	if len(r.Shapes) > 0 {
		for _, d := range r.Shapes[0].DBs {
			names = append(names, d.Cfg.Name)
		}
	}
	return names
}

// writeReport writes WORKLOAD.md, workload.csv and the plots into Out.
func writeReport(r *Result) error {
	tiny := r.Config.Mode == "tiny"
	if !tiny {
		r.computeVerdicts()
	}
	var b bytes.Buffer
	w := func(f string, args ...any) { fmt.Fprintf(&b, f, args...) }
	r.writeHeader(w, tiny)
	if !tiny {
		r.writeTargets(w)
	}
	r.writeSummary(w)
	r.writePlans(w)
	r.writePolicies(w)
	r.writeShapes(w)
	r.writeLoading(w)
	r.writeFalsePositives(w)
	r.writeBlockReads(w)
	r.writeFilterCache(w)
	r.writeTimeRatios(w)
	r.writePressure(w)
	r.writeLookups(w)
	r.writeLatency(w)
	r.writeFooter(w)

	if err := os.WriteFile(filepath.Join(r.Config.Out, "WORKLOAD.md"), b.Bytes(), 0o644); err != nil {
		return err
	}
	if err := writeCSV(r); err != nil {
		return err
	}
	return writePlots(r)
}

// writeHeader writes the title, the smoke-test warning and the run's
// settings.
func (r *Result) writeHeader(w func(string, ...any), tiny bool) {
	c := r.Config
	w("# Workload: bloom and cuckoo filters in real Pebble databases\n\n")
	if tiny {
		w("**SMOKE TEST (-tiny): a few thousand keys and a handful of operations, to check that the benchmark runs end to end. Its numbers are not measurements and it prints no verdicts.**\n\n")
	}
	host, _ := os.Hostname()
	w("- Command: `%s`\n", c.CommandLine)
	w("- Machine: %s, %d CPUs, GOMAXPROCS %d, %s/%s, host %s\n", cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, host)
	w("- Go: %s; Pebble v2.1.7 (FormatNewest), real file system (vfs.Default)\n", runtime.Version())
	w("- Started %s, took %s\n", r.Start.UTC().Format(time.RFC3339), r.Elapsed.Truncate(time.Second))
	w("- Mode %s: %d entries per database, flush every %d, LBaseMaxBytes %s, target file size %s, write burst of %d L0 flushes (%.0f%% of the keys), MVCC %d versions per key\n",
		c.Mode, c.Keys, c.FlushEvery, mib(float64(c.LBaseMaxBytes)), mib(float64(c.FileSize)), c.BurstTables, 100*burstShare, mvccVersions)
	w("- Timed runs: per path, enough operations for %s on one goroutine (at least %d; calibrated on the first database after the warm-up), the same for every policy; %d repetitions, each of %d rounds in which every policy runs back to back (order rotated by one each repetition); a repetition's time per operation is the median of its rounds; every round of every path, thread count and repetition reads keys that no earlier run read (the same keys for every policy), so that a small cache holds none of its blocks; threads %v; one untimed warm-up run per path and policy first\n", c.RunTime, c.Ops, c.Reps, max(1, c.SubRuns), c.Threads)
	if !c.TimeAll {
		w("- Timed policies: none, bloom(B), cuckoo(B) and the per-level spreads; the matched and tuned cuckoo policies are built and counted (false positives, filter bytes), not timed")
		if c.FilterPlans {
			w("; the filter plans are counted on the absent paths, and timed only where a target needs their time (planfor-l6 on steady/slow, planfor-get on burst/slow)")
		}
		w("; the pressure regimes time their own list of policies in every mode (see Memory pressure)")
		w("\n")
	}
	w("- Loading: %d lockstep rounds of %d entries each on %v\n", c.LoadRounds, loadKeys(c), loadShapesOf(c))
	w("- Regimes: hot = block cache of twice the database plus 8 MiB, warmed by a full scan and a pass of every path; pagecache = block cache of 2%% of the database (at least 1 MiB) plus twice the largest filter bytes among the shape's databases (filters stay resident; the same cache for every policy), the files in the OS page cache; slow = pagecache plus %s per sstable read (a nanosleep, measured at %s per read); pressure1 and pressure4 = one block cache of 1%% and 4%% of the shape's tables without their filter blocks, the same for every policy, shared by filter, index and data blocks with no headroom for filters, and the slow device's delay, run %s\n",
		c.Delay, r.DelayMeasured.Round(100*time.Nanosecond), pressureShapesOf(c))
	if c.Twin {
		w("- A/A twin: bloom(10) built a second time into its own database (bloom(10)-twin), identical to bloom(10)'s, opened, warmed and timed wherever bloom(10) is, last in the run order; its ratio to bloom(10) is every time table's noise floor\n")
	}
	w("\n")
}

// pressureShapesOf says where the pressure regimes run.
func pressureShapesOf(c Config) string {
	if len(c.PressureShapes) > 0 {
		return "on " + strings.Join(c.PressureShapes, ", ")
	}
	return "on every shape"
}

func loadKeys(c Config) int {
	if c.LoadKeys > 0 {
		return c.LoadKeys
	}
	return c.Keys
}

func loadShapesOf(c Config) []string {
	if len(c.LoadShapes) > 0 {
		return c.LoadShapes
	}
	return []string{"every shape but deep"}
}

// writeTargets writes the verdicts.
func (r *Result) writeTargets(w func(string, ...any)) {
	w("## Targets\n\n")
	for _, v := range r.Verdicts {
		status := "FAIL"
		switch {
		case !v.Judged:
			status = "NOT JUDGED"
		case v.Pass:
			status = "PASS"
		}
		w("- **%s**: %s. %s\n", status, v.Target, v.Detail)
		for _, m := range v.Misses {
			w("  - miss: %s\n", m)
		}
		if len(v.Unjudged) > 0 {
			w("  - not judged (too few events): %s\n", strings.Join(v.Unjudged, "; "))
		}
	}
	w("\n")
}

// writePolicies writes the in-process rates, the matched and tuned budgets
// and the per-level spreads.
func (r *Result) writePolicies(w func(string, ...any)) {
	c := r.Config
	w("## Policies\n\n")
	w("In-process false-positive rates (%s keys through NewWriter, random absent probes through MayContain):\n\n", "random 16-byte")
	w("| bits/key | bloom FPR | cuckoo FPR |\n|---:|---:|---:|\n")
	for bb := 4; bb <= 32; bb++ {
		mark := func(cur fprCurve) string {
			s := fmt.Sprintf("%.4f%%", 100*cur.FPR[bb])
			if !cur.Measured[bb] {
				s += " (extrapolated)"
			}
			return s
		}
		w("| %d | %s | %s |\n", bb, mark(r.BloomFPR), mark(r.CuckooFPR))
	}
	w("\nMatched budgets (smallest cuckoo budget with a measured rate at or below bloom(B)'s):")
	for _, bb := range c.Budgets {
		if m, ok := r.Matched[bb]; ok {
			w(" bloom(%d) %.3f%% -> %s;", bb, 100*r.BloomFPR.FPR[bb], m)
		}
	}
	w("\n\nTuned matches (cuckoopolicy.Policy with a fingerprint width and a load chosen so that the measured rate is at or below bloom(B)'s, with the fewest bits per key):\n\n")
	w("| bloom | bloom FPR | policy | fingerprint bits | load | FPR | bits/key (in process) |\n|---|---:|---|---:|---:|---:|---:|\n")
	for _, t := range r.Tuned {
		w("| bloom(%d) | %.4f%% | %s | %d | %.3f | %.4f%% | %.2f |\n", t.For, 100*t.BloomFPR, t.Name, t.Policy.FingerprintBits, t.Policy.LoadFactor, 100*t.FPR, t.Bits)
	}
	w("\nPer-level spreads (Monkey's rule on the measured curves, bits per key by level; L6 gets none because Get never reads its filters; the budget is bloom(10)'s filter bytes on all levels):\n\n")
	w("| shape | policy | budgets | filter keys per level (bloom(10)'s filter bits / 10) | probes per absent Get | bits available |\n|---|---|---|---|---|---:|\n")
	for _, s := range r.Spreads {
		w("| %s | %s | %s | %v | %v | %.0f |\n", s.Shape, s.Cfg.Name, s.Cfg.levelsString(), s.In.Keys, s.In.Probes, s.In.Bits)
	}
}

// writeShapes writes each shape's LSM (the layout every policy's database
// was built with) and whether the databases' LSMs are identical, then
// each database's bytes and filter bits.
func (r *Result) writeShapes(w func(string, ...any)) {
	w("\n## LSMs\n\n")
	w("Every policy's database of a shape holds the same tables: the reference database, loaded organically with no filters (batches, a flush every FlushEvery entries and a wait until compactions quiesce; the write burst as overlapping L0 flushes with compactions off), gives each table's entries, level and L0 order (ingestion moves a table whose range holds no data on the level below down to that level, which an absent read probes in its place); deep's layout is synthetic (L1-L6 at a size ratio of about 10, at least 50 entries a level, and %d L0 tables, one per sublevel). Each policy's tables are written with sstable.Writer and that level's filter policy, and ingested level by level, L6 first (LBaseMaxBytes = 1, compactions off, so that each lands on its level), then the L0 tables one by one, oldest first. Identical LSMs: every database's tables compared with the layout (level, L0 sublevel, key bounds, entries) and with the first database's (sequence numbers too), after building and again at the opening of every regime; a difference stops the run.\n\n", deepSublevels)
	w("| shape | layout | reference tables L0..L6 | tables L0..L6 | entries L0..L6 | L0 sublevels | databases | identical LSMs |\n|---|---|---|---|---|---:|---:|---|\n")
	for _, s := range r.Shapes {
		src, ref := "organic reference", fmt.Sprintf("%v, %d sublevels", s.Reference.Tables, s.Reference.Sublevels)
		if s.Layout.Synthetic {
			src, ref = "synthetic", "-"
		}
		if s.Layout.Moved > 0 {
			src += fmt.Sprintf(" (%d tables on a lower level than in the reference)", s.Layout.Moved)
		}
		w("| %s | %s | %s | %v | %v | %d | %d | %s |\n", s.Spec.Name, src, ref, s.Layout.Tables, s.Layout.Entries, s.Layout.Sublevels, len(s.DBs), r.identicalShape(s))
	}
	w("\nPer database: bytes per level (db.Metrics()) and filter bits per key (cuckoopolicy.FilterUsage).\n\n")
	w("| shape | policy | bytes L0..L6 | bytes | filter bits/key | filter bytes L0-L5 | filter bytes L6 |\n|---|---|---|---:|---:|---:|---:|\n")
	for _, s := range r.Shapes {
		for _, d := range s.DBs {
			fb, fk := d.Shape.totalFilter()
			var lb []string
			for _, x := range d.Shape.Bytes {
				lb = append(lb, mib(float64(x)))
			}
			w("| %s | %s | %s | %s | %.2f | %s | %s |\n", s.Spec.Name, d.Cfg.Name, strings.Join(lb, ", "), mib(float64(d.Shape.totalBytes())),
				8*float64(fb)/math.Max(1, float64(fk)), mib(float64(fb-d.Shape.FilterBytes[6])), mib(float64(d.Shape.FilterBytes[6])))
		}
	}
}

// identicalShape says whether every database of s has the first one's LSM.
func (r *Result) identicalShape(s shapeResult) string {
	for _, d := range s.DBs[1:] {
		if err := diffSig(s.DBs[0].Sig, d.Sig); err != nil {
			return fmt.Sprintf("not identical: %s against %s: %v", d.Cfg.Name, s.DBs[0].Cfg.Name, err)
		}
	}
	return "yes"
}

// writeLoading writes the lockstep loads.
func (r *Result) writeLoading(w func(string, ...any)) {
	w("\n## Loading\n\n")
	w("Organic loads, apart from the read measurements: per round, one new database per policy, loaded in lockstep: each chunk of entries (FlushEvery; in the write burst, one of its L0 flushes) goes to each database in turn, in batches of 1,000, followed by a flush and a wait until that database's compactions quiesce, so that only one database works at a time; a database's wall and CPU time (the process's, during its turns) are those of its turns; written: the sstable bytes its flushes and compactions wrote. %d rounds, the order rotated by one each round. Ratios: median over rounds of the paired ratio cuckoo(B)/bloom(B) [lowest, highest].\n\n", r.Config.LoadRounds)
	w("| shape | policy | loads | wall | CPU | written | CPU µs/MiB written | tables L0..L6 (round 1) | wall / bloom(B) | CPU / bloom(B) | CPU per byte / bloom(B) |\n|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|\n")
	for _, s := range r.Shapes {
		if len(s.Loads) == 0 {
			continue
		}
		for _, b := range r.Config.Budgets {
			for _, name := range []string{bloomName(b), cuckooName(b)} {
				var loads int
				var tables [7]int64
				var written []float64
				for _, l := range s.Loads {
					if l.Policy == name {
						if loads == 0 {
							tables = l.Tables
						}
						loads++
						written = append(written, float64(l.Written))
					}
				}
				w("| %s | %s | %d | %s | %s | %s | %.0f | %v |", s.Spec.Name, name, loads,
					time.Duration(medianRun(s.Loads, name, loadMetrics[0])).Round(time.Millisecond),
					time.Duration(medianRun(s.Loads, name, loadMetrics[1])).Round(time.Millisecond),
					mib(median(written)), medianRun(s.Loads, name, loadMetrics[2])*(1<<20)/1e3, tables)
				for _, m := range loadMetrics {
					cell := "-"
					if name != bloomName(b) {
						if rs := loadRatios(s.Loads, name, bloomName(b), m); len(rs) > 0 {
							cell = fmt.Sprintf("%.3f [%.3f, %.3f]", median(rs), slices.Min(rs), slices.Max(rs))
						}
					}
					w(" %s |", cell)
				}
				w("\n")
			}
		}
	}
	w("\n(\"-\": bloom(B) is the baseline of its own ratios.)\n")
}

// writeFalsePositives writes the counting pass: false-positive block reads,
// filter probes and true positives per operation.
func (r *Result) writeFalsePositives(w func(string, ...any)) {
	names := r.policyNames()
	w("\n## False-positive block reads per operation\n\n")
	w("Counted in an untimed pass of %d operations per path and policy (the first operations of each path: the warm-up's and the calibration's keys, then the timed runs' first ones): every filter reader is wrapped so that each \"may contain\" answer is checked against the prefixes of the table the filter block belongs to (read from the table itself); an answer on a table that does not hold the prefix is a false positive, and reads a data block (from the cache or the file system).\n\n", r.Config.CountOps)
	// Not the twin: its filter blocks are bloom(10)'s, byte for byte, and
	// the counting pass skips it.
	filtered := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "none" || n == twinName })
	tableHead(w, "shape | path", "---|---|", filtered, "---:|")
	for _, s := range r.shapeNames() {
		for _, p := range r.pathsRun() {
			w("| %s | %s |", s, p)
			for _, n := range filtered {
				fp, _ := r.fpPerOp(s, p, n)
				w(" %s |", f4(fp))
			}
			w("\n")
		}
	}
	w("\nFilter probes per operation (db.Metrics().Filter hits + misses) and true positives (\"may contain\" on a table that holds the prefix) per operation, counting pass; unknown counts answers on filter blocks the pass could not match to a table (0 expected):\n\n")
	w("| shape | path | bloom(10) probes | bloom(10) true pos. | cuckoo(10) probes | cuckoo(10) true pos. | unknown |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, s := range r.shapeNames() {
		for _, p := range r.pathsRun() {
			tb, ok1 := r.Truth[s][bloomName(10)][p]
			tc, ok2 := r.Truth[s][cuckooName(10)][p]
			if ok1 && ok2 && tb.Ops > 0 && tc.Ops > 0 {
				var unknown int64
				for _, byPath := range r.Truth[s] {
					unknown += byPath[p].Unknown
				}
				w("| %s | %s | %.3f | %.3f | %.3f | %.3f | %d |\n", s, p, float64(tb.Hits+tb.Misses)/float64(tb.Ops), float64(tb.TP)/float64(tb.Ops),
					float64(tc.Hits+tc.Misses)/float64(tc.Ops), float64(tc.TP)/float64(tc.Ops), unknown)
			}
		}
	}
}

// writeBlockReads writes the sstable reads per operation by block kind.
func (r *Result) writeBlockReads(w func(string, ...any)) {
	names := r.policyNames()
	reg := r.ioRegime()
	w("\n\n## Sstable reads per operation by block kind (%s regime)\n\n", reg)
	w("Reads of the file system (ReadAt on .sst files, classified by each table's layout), per operation: data / filter / index / value (value blocks, where Pebble keeps older MVCC versions' values) / other (footer, metaindex, properties).\n\n")
	tableHead(w, "shape | path", "---|---|", names, "---|")
	for _, s := range r.shapeNames() {
		for _, p := range r.pathsRun() {
			w("| %s | %s |", s, p)
			for _, n := range names {
				cn := r.counts(s, p, reg, n)
				if cn.Ops == 0 {
					w(" - |")
					continue
				}
				o := float64(cn.Ops)
				w(" %.3f/%.3f/%.3f/%.3f/%.3f |", float64(cn.IO.Reads[kindData])/o, float64(cn.IO.Reads[kindFilter])/o,
					float64(cn.IO.Reads[kindIndex])/o, float64(cn.IO.Reads[kindValue])/o, float64(cn.IO.Reads[kindOther])/o)
			}
			w("\n")
		}
	}
}

// writeFilterCache writes the estimate of filter bytes in the block cache.
func (r *Result) writeFilterCache(w func(string, ...any)) {
	w("\n## Filter bytes in the block cache\n\n")
	w("Pebble's cache metrics do not split bytes by block kind, so this is an estimate: after the warm-up pass of the hot regime every filter a path probes is resident (the cache exceeds the database and nothing is evicted), so the filter bytes in cache are those of the probed levels: L0-L5 for Get and SeekPrefixGE without UseL6Filters, all levels with it. In the pagecache regime the cache is 2%% of the database plus twice its filter bytes, so the probed filters are resident too (up to the cache's own eviction, which the filter-block reads per operation in the table above show).\n\n")
	w("| shape | policy | Get paths (L0-L5) | UseL6Filters paths (L0-L6) | pagecache block cache |\n|---|---|---:|---:|---:|\n")
	for _, s := range r.Shapes {
		for _, d := range s.DBs {
			var upper, all uint64
			for l := range 7 {
				all += d.Shape.FilterBytes[l]
				if l < 6 {
					upper += d.Shape.FilterBytes[l]
				}
			}
			w("| %s | %s | %s | %s | %s |\n", s.Spec.Name, d.Cfg.Name, mib(float64(upper)), mib(float64(all)), mib(float64(cacheSize(regimeSpec{}, d.Shape, r.maxFilterBytes(s.Spec.Name), 0))))
		}
	}
}

// writeTimeRatios writes the time per operation of each policy as a ratio
// to bloom's.
func (r *Result) writeTimeRatios(w func(string, ...any)) {
	c := r.Config
	w("\n## Time per operation: ratios to bloom\n\n")
	w("Median of paired ratios over the repetitions (each pair: the two policies in the same repetition), with the sign-test interval of the median (coverage %.1f%% for %d pairs). bloom(10) µs/op is the median over repetitions. The twin column is the A/A twin: bloom(10) built a second time into an identical database and timed like any policy, so its ratio is what two identical databases measure apart in the cell; a cell is judged slower only where its interval lies above 1.02 and above the twin's.\n\n", 100*medianCI(make([]float64, c.Reps)).Coverage, c.Reps)
	w("| shape | regime | path | threads | bloom(10) µs/op |")
	for _, bb := range c.Budgets {
		w(" cuckoo(%d)/bloom(%d) |", bb, bb)
	}
	w(" cuckoo-spread/bloom(10) | bloom-spread/bloom(10) | none/bloom(10) | twin: bloom(10)-twin/bloom(10) |\n|---|---|---|---:|---:|")
	for range c.Budgets {
		w("---:|")
	}
	w("---:|---:|---:|---:|\n")
	for _, k := range r.cellKeys() {
		cell := r.Cells[k]
		us := math.NaN()
		if cs := cell[bloomName(10)]; cs != nil {
			us = median(cs.NsPerOp) / 1000
		}
		w("| %s | %s | %s | %d | %s |", k.Shape, k.Regime, k.Path, k.Threads, f3(us))
		for _, bb := range c.Budgets {
			w(" %s |", r.timeCell(k, cuckooName(bb), bloomName(bb)))
		}
		for _, x := range []string{"cuckoo-spread", "bloom-spread", "none", twinName} {
			w(" %s |", r.timeCell(k, x, bloomName(10)))
		}
		w("\n")
	}
	w("\n%s\n", dashNote)
}

// dashNote explains the cells a table leaves empty.
const dashNote = `"-": nothing to show: the policy or the cell was not measured in this run, or (false positives) the policy probed no filter on that path, as Get never reads L6 filters and "none" has none; "not identical": the two databases' LSMs differ, so the ratio is not judged.`

// writeLatency writes the latency percentiles and throughput of bloom(B)
// and cuckoo(B).
func (r *Result) writeLatency(w func(string, ...any)) {
	w("\n## Latency and throughput\n\n")
	w("Per-operation latency from hdrhistogram over all repetitions (µs, p50 / p99 / p99.9) and throughput (operations per second of wall time, median over repetitions).\n\n")
	lat := []string{}
	for _, bb := range r.Config.Budgets {
		lat = append(lat, bloomName(bb), cuckooName(bb))
	}
	tableHead(w, "shape | regime | path | threads", "---|---|---|---:|", lat, "---|")
	for _, k := range r.cellKeys() {
		w("| %s | %s | %s | %d |", k.Shape, k.Regime, k.Path, k.Threads)
		for _, n := range lat {
			cs := r.Cells[k][n]
			if cs == nil {
				w(" - |")
				continue
			}
			h := cs.Hist
			w(" %.1f / %.1f / %.1f, %.0f/s |", float64(h.ValueAtQuantile(50))/1e3, float64(h.ValueAtQuantile(99))/1e3,
				float64(h.ValueAtQuantile(99.9))/1e3, 1e9/median(cs.NsPerOp))
		}
		w("\n")
	}
}

// writeFooter writes the pointer to the CSV, the keys lost and the plots.
func (r *Result) writeFooter(w func(string, ...any)) {
	w("\nEvery cell's raw figures, for every policy: workload.csv.\n")
	w("\n## Keys lost\n\n%d present keys not read back with their value, %d absent keys found.\n", r.Lost, r.Phantom)
	w("\nPlots: fpr.png (in-process rates), fp_per_get.png (false-positive reads per absent Get), time_ratio.png (cuckoo(B)/bloom(B) time of absent Gets).\n")
}

func writeCSV(r *Result) error {
	f, err := os.Create(filepath.Join(r.Config.Out, "workload.csv"))
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	cw.Write([]string{"shape", "regime", "path", "threads", "policy", "ops", "ns_per_op_median", "p50_ns", "p99_ns", "p999_ns",
		"filter_hits", "filter_misses", "reads_data", "reads_filter", "reads_index", "reads_value", "reads_other",
		"bytes_data", "bytes_filter", "bytes_index", "bytes_value", "bytes_other", "lost", "phantom", "ns_per_op_reps", "cache_hits", "cache_misses", "device_wait_ns"})
	for _, k := range r.cellKeys() {
		for _, n := range r.policyNames() {
			cs := r.Cells[k][n]
			if cs == nil {
				continue
			}
			var reps []string
			for _, x := range cs.NsPerOp {
				reps = append(reps, strconv.FormatFloat(x, 'f', 0, 64))
			}
			i := func(x int64) string { return strconv.FormatInt(x, 10) }
			cw.Write([]string{k.Shape, k.Regime, k.Path, strconv.Itoa(k.Threads), n, i(cs.Ops),
				strconv.FormatFloat(median(cs.NsPerOp), 'f', 0, 64),
				i(cs.Hist.ValueAtQuantile(50)), i(cs.Hist.ValueAtQuantile(99)), i(cs.Hist.ValueAtQuantile(99.9)),
				i(cs.Hits), i(cs.Misses), i(cs.IO.Reads[kindData]), i(cs.IO.Reads[kindFilter]), i(cs.IO.Reads[kindIndex]), i(cs.IO.Reads[kindValue]), i(cs.IO.Reads[kindOther]),
				i(cs.IO.Bytes[kindData]), i(cs.IO.Bytes[kindFilter]), i(cs.IO.Bytes[kindIndex]), i(cs.IO.Bytes[kindValue]), i(cs.IO.Bytes[kindOther]),
				i(cs.Lost), i(cs.Phantom), strings.Join(reps, " "), i(cs.Cache.Hits), i(cs.Cache.Misses), i(cs.IO.Waited)})
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeSummary writes the end-to-end table: per shape, regime and absent
// read path, the false-positive block reads per operation and the time
// ratio of cuckoo(B) to bloom(B), on the first thread count.
func (r *Result) writeSummary(w func(string, ...any)) {
	c := r.Config
	if len(c.Threads) == 0 {
		return
	}
	t := c.Threads[0]
	w("## Summary\n\n")
	w("Absent reads on %d goroutine(s). FP/op: false-positive block reads per operation, bloom(B) -> cuckoo(B) (counting pass). Time: cuckoo(B)/bloom(B), median of paired ratios [sign-test interval]; bloom(B)'s µs per operation beside it; twin: bloom(10)-twin/bloom(10), the A/A noise floor of the row's cell.\n\n", t)
	var cols []string
	for _, b := range c.Budgets {
		cols = append(cols, fmt.Sprintf("B=%d FP/op", b), fmt.Sprintf("B=%d bloom µs", b), fmt.Sprintf("B=%d time", b))
	}
	cols = append(cols, "twin")
	tableHead(w, "shape | regime | path", "---|---|---|", cols, "---:|")
	for _, s := range r.shapeNames() {
		for _, g := range allRegimes {
			for _, p := range []string{"get-absent", "lookup-absent", "seek-absent", "seek-absent-l6"} {
				k := cellKey{Shape: s, Regime: g.Name, Path: p, Threads: t}
				cell := r.Cells[k]
				if cell == nil {
					continue
				}
				w("| %s | %s | %s |", s, g.Name, p)
				for _, b := range c.Budgets {
					bf, _ := r.fpPerOp(s, p, bloomName(b))
					cf, _ := r.fpPerOp(s, p, cuckooName(b))
					us := math.NaN()
					if cs := cell[bloomName(b)]; cs != nil {
						us = median(cs.NsPerOp) / 1000
					}
					w(" %s -> %s | %.2f | %s |", f4(bf), f4(cf), us, r.timeCell(k, cuckooName(b), bloomName(b)))
				}
				w(" %s |\n", r.twinCell(k))
			}
		}
	}
	w("\n%s\n\n", dashNote)
}

// maxFilterBytes is the largest total of filter bytes among a shape's
// databases.
func (r *Result) maxFilterBytes(shape string) int64 {
	var m int64
	for _, s := range r.Shapes {
		if s.Spec.Name != shape {
			continue
		}
		for _, d := range s.DBs {
			fb, _ := d.Shape.totalFilter()
			m = max(m, int64(fb))
		}
	}
	return m
}

// tableHead writes a Markdown table's header: the fixed columns and their
// rule (alignment row), then one column per name, each with colRule.
func tableHead(w func(string, ...any), fixed, fixedRule string, names []string, colRule string) {
	w("| %s |", fixed)
	for _, n := range names {
		w(" %s |", n)
	}
	w("\n|%s", fixedRule)
	for range names {
		w("%s", colRule)
	}
	w("\n")
}
