package bench

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/plot/plotter"
)

// Sections of the report, in the order they run.
var Sections = []string{"fpr", "load", "lookup", "build", "readamp", "peers"}

// Report holds every measurement of one run.
type Report struct {
	Config   Config
	Command  string
	Revision string // the commit measured, read when the run starts
	Start    time.Time
	Elapsed  map[string]time.Duration
	Failures map[string]string

	FPR     *FPRResult
	Load    *LoadResult
	Lookup  *LookupResult
	Build   *BuildResult
	ReadAmp *ReadAmpResult
	CBF     []CBFRow
	Peers   []PeerRow
}

// Run measures the chosen sections (nil: all) and writes out/REPORT.md and
// the plots. The report is rewritten after every section, so a long run
// that stops part way leaves what it measured. A section that fails (or
// panics) is reported as such and the others still run; Run returns an error
// naming the failed sections.
func Run(c Config, out string, sections []string, command string) (*Report, error) {
	if len(sections) == 0 {
		sections = Sections
	}
	for _, s := range sections {
		if !slices.Contains(Sections, s) {
			return nil, fmt.Errorf("bench: unknown section %q (have %s)", s, strings.Join(Sections, ", "))
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	r := &Report{Config: c, Command: command, Revision: revision(), Start: time.Now(),
		Elapsed: map[string]time.Duration{}, Failures: map[string]string{}}
	pr := newProgress(c.Progress)
	for _, s := range Sections {
		if !slices.Contains(sections, s) {
			continue
		}
		start := time.Now()
		err := r.runSection(s, pr)
		r.Elapsed[s] = time.Since(start)
		if err != nil {
			r.Failures[s] = err.Error()
			pr.Stage("%s FAILED: %v", s, err)
		}
		if werr := r.Write(out); werr != nil {
			return r, werr
		}
		runtime.GC()
	}
	pr.Stage("done in %s: %s", time.Since(r.Start).Round(time.Second), filepath.Join(out, "REPORT.md"))
	if len(r.Failures) > 0 {
		var names []string
		for s := range r.Failures {
			names = append(names, s)
		}
		sort.Strings(names)
		return r, fmt.Errorf("bench: sections failed: %s", strings.Join(names, ", "))
	}
	return r, nil
}

func (r *Report) runSection(s string, pr *progress) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, firstLines(string(debug.Stack()), 12))
		}
	}()
	c := r.Config
	switch s {
	case "fpr":
		r.FPR, err = MeasureFPR(c, pr)
	case "load":
		r.Load, err = MeasureLoad(c, pr)
	case "lookup":
		r.Lookup, err = MeasureLookup(c, pr)
	case "build":
		r.Build, err = MeasureBuild(c, pr)
	case "readamp":
		r.ReadAmp, err = MeasureReadAmp(c, pr)
	case "peers":
		if r.CBF, err = MeasureCBF(c, pr); err == nil {
			r.Peers, err = MeasurePeers(c, pr)
		}
	}
	return err
}

func firstLines(s string, n int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[:min(n, len(l))], "\n")
}

// Target is one of the project's measured goals.
type Target struct {
	Name     string
	Measured string
	Status   string // PASS, FAIL or NOT MEASURED
}

// Targets evaluates the project's goals from the measurements.
func (r *Report) Targets() []Target {
	var ts []Target
	add := func(name string, ok, measured bool, format string, args ...any) {
		t := Target{Name: name, Measured: fmt.Sprintf(format, args...), Status: "NOT MEASURED"}
		if measured {
			t.Status = map[bool]string{true: "PASS", false: "FAIL"}[ok]
		}
		ts = append(ts, t)
	}

	// 1. FPR below Pebble's bloom at every budget 9..24.
	{
		name := "cuckoo FilterPolicy(B) FPR below Pebble's bloom(B) at every B in 9..24"
		ok, n, worst, worstB := true, 0, 0.0, 0
		if r.FPR != nil {
			for b := 9; b <= 24; b++ {
				cp, ok1 := r.FPR.Find(SeriesCuckoo, b)
				bp, ok2 := r.FPR.Find(SeriesPebbleBloom, b)
				if !ok1 || !ok2 {
					continue
				}
				n++
				ratio := ratioHits(cp, bp)
				if ratio > worst {
					worst, worstB = ratio, b
				}
				if cp.Hits >= bp.Hits {
					ok = false
				}
			}
		}
		add(name, ok, n > 0, "%d budgets measured; worst FPR ratio cuckoo/bloom %.3f at B=%d", n, worst, worstB)
	}
	// 2. Semi-sorted space within 1.25x of log2(1/eps) near eps = 0.1%: the
	// best semi-sorted configuration measured with eps in [0.05%, 0.2%].
	{
		name := "semi-sorted space within 1.25x of log2(1/eps) at eps near 0.1% (best semi-sorted point with eps in 0.05%..0.2%)"
		var best FPRPoint
		bestRatio := math.Inf(1)
		if r.FPR != nil {
			for _, p := range append(slices.Clone(r.FPR.Points), r.FPR.Headline...) {
				if (p.Series == SeriesCuckoo || p.Series == SeriesCuckooSemi) && p.Hits > 0 && p.FPR >= 5e-4 && p.FPR <= 2e-3 {
					if ratio := p.BitsPerKey / math.Log2(1/p.FPR); ratio < bestRatio {
						best, bestRatio = p, ratio
					}
				}
			}
		}
		found := !math.IsInf(bestRatio, 1)
		add(name, bestRatio <= 1.25, found, "%s %s: %.2f bits/key at eps=%s, log2(1/eps)=%.2f, ratio %.3f",
			best.Series, best.Param, best.BitsPerKey, pct(best.FPR), math.Log2(1/best.FPR), bestRatio)
	}
	// 3. Static builder load >= 97.5% for f >= 8.
	{
		name := fmt.Sprintf("static builder load >= 97.5%% for f >= 8 (asked for %.3f)", StaticLoadTarget)
		ok, n, lo, loF := true, 0, 1.0, 0
		if r.Load != nil {
			for _, row := range r.Load.Rows {
				if row.F >= 8 && row.Static.Valid() {
					n++
					if row.Static.Min < lo {
						lo, loF = row.Static.Min, row.F
					}
					if row.Static.Min < 0.975-loadSlack {
						ok = false
					}
				}
			}
		}
		add(name, ok, n > 0, "lowest load over %d sizes and all runs: %s at f=%d", n, pct(lo), loF)
	}
	// 4. Lookup no slower than Pebble's bloom at every p.
	{
		name := "cuckoo FilterPolicy lookup no slower than Pebble's bloom at every p (both sizes)"
		ok, n, worst, where := true, 0, 0.0, ""
		if r.Lookup != nil {
			for _, p := range r.Lookup.Points {
				if p.Kind != KindCuckoo {
					continue
				}
				b, found := r.Lookup.Get(p.Size, KindBloom, p.P)
				if !found || b.Ns == 0 {
					continue
				}
				n++
				ratio := p.Ns / b.Ns
				if ratio > worst {
					worst, where = ratio, fmt.Sprintf("%s p=%.2f", p.Size, p.P)
				}
				if ratio > 1 {
					ok = false
				}
			}
		}
		add(name, ok, n > 0, "%d points; worst time ratio cuckoo/bloom %.3f (%s)", n, worst, where)
	}
	// 5. Table 2 within a point of the paper from f = 6 up: the simulation
	// of the paper's scheme must match it; the dynamic filter must be no
	// more than a point below it (its stash and eviction differ from the
	// paper's, and higher is better).
	table2 := func(get func(LoadRow) Stat, below bool) (ok bool, n int, worst float64, worstF int) {
		ok = true
		if r.Load == nil {
			return
		}
		for _, row := range r.Load.Rows {
			paper, has := PaperTable2[row.F]
			if row.F < 6 || !has || !get(row).Valid() {
				continue
			}
			n++
			d := get(row).Mean - paper
			if below {
				d = -d
			} else {
				d = math.Abs(d)
			}
			if d > worst || n == 1 {
				worst, worstF = d, row.F
			}
			if d > 0.01 {
				ok = false
			}
		}
		return
	}
	ok, n, worst, worstF := table2(func(r LoadRow) Stat { return r.Sim }, false)
	add("simulation of the paper's scheme within 1 point of its Table 2 for f >= 6", ok, n > 0,
		"%d sizes at 2^%d buckets; largest gap %.2f points at f=%d", n, r.loadLog(), 100*worst, worstF)
	ok, n, worst, worstF = table2(func(r LoadRow) Stat { return r.Dynamic }, true)
	add("dynamic filter load no more than 1 point below the paper's Table 2 for f >= 6 (a check of our own: "+
		"the issue's target is the simulation's; the dynamic filter's walks look a step ahead, so it may load higher)", ok, n > 0,
		"%d sizes at 2^%d buckets; largest shortfall %.2f points at f=%d (negative: above the paper)", n, r.loadLog(), 100*worst, worstF)
	return ts
}

// loadSlack absorbs the rounding of key and bucket counts in the load
// target (4*2^L*0.975 keys need not divide evenly).
const loadSlack = 1e-4

func (r *Report) loadLog() int {
	if r.Load == nil {
		return 0
	}
	return r.Load.LogBuckets
}

// ratioHits is the FPR ratio of two points, counting zero hits as half a hit
// so that the ratio stays finite.
func ratioHits(a, b FPRPoint) float64 {
	ha, hb := float64(a.Hits), float64(b.Hits)
	if ha == 0 {
		ha = 0.5
	}
	if hb == 0 {
		hb = 0.5
	}
	return (ha / float64(a.Queries)) / (hb / float64(b.Queries))
}

func pct(x float64) string {
	switch {
	case x == 0:
		return "0%"
	case x >= 0.1:
		return fmt.Sprintf("%.2f%%", 100*x)
	}
	return fmt.Sprintf("%.3g%%", 100*x)
}

func table(b *strings.Builder, header []string, rows [][]string) {
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	b.WriteString("\n")
}

// Write writes dir/REPORT.md and the plots for what has been measured.
func (r *Report) Write(dir string) error {
	var b strings.Builder
	var plotErrs []string
	plot := func(file, title, xl, yl string, logY bool, legend int, xstep float64, cs []curve) {
		if err := savePlot(dir, file, title, xl, yl, logY, legend, xstep, cs); err != nil {
			plotErrs = append(plotErrs, file+": "+err.Error())
			return
		}
		fmt.Fprintf(&b, "![%s](%s)\n\n", title, file)
	}
	c := r.Config
	b.WriteString("# pebble-cuckoo benchmark report\n\n")
	b.WriteString(machine(r.Revision))
	fmt.Fprintf(&b, "- Command: `%s`\n- Mode: %s; started %s; ran %s so far",
		r.Command, c.Mode, r.Start.Format(time.RFC3339), time.Since(r.Start).Round(time.Second))
	var secs []string
	for _, s := range Sections {
		if d, ok := r.Elapsed[s]; ok {
			secs = append(secs, fmt.Sprintf("%s %s", s, d.Round(100*time.Millisecond)))
		}
	}
	fmt.Fprintf(&b, " (%s)\n", strings.Join(secs, ", "))
	b.WriteString("- Lookup times are the fastest of passes interleaved between the filters; builds, " +
		"the read-amplification Get times and the peers' times come from one pass (or the fastest of " +
		"three) per filter and are noisier. On a shared machine read the ratios to Pebble's bloom " +
		"from the same run, not the absolute numbers.\n\n")

	if len(r.Failures) > 0 {
		b.WriteString("## Failed sections\n\n")
		for _, s := range Sections {
			if f, ok := r.Failures[s]; ok {
				fmt.Fprintf(&b, "- **%s**:\n\n```\n%s\n```\n", s, f)
			}
		}
		b.WriteString("\n")
	}

	b.WriteString("## Targets\n\n")
	var rows [][]string
	for _, t := range r.Targets() {
		rows = append(rows, []string{"**" + t.Status + "**", t.Name, t.Measured})
	}
	table(&b, []string{"status", "target", "measured"}, rows)

	b.WriteString("## Where this project wins and loses\n\n")
	b.WriteString("Computed from the numbers below.\n\n")
	for _, v := range r.verdicts() {
		b.WriteString("- " + v + "\n")
	}
	b.WriteString("\n")

	r.writeLoad(&b, plot)
	r.writeFPR(&b, plot)
	r.writeLookup(&b, plot)
	r.writeBuild(&b)
	r.writeReadAmp(&b)
	r.writePeers(&b)
	if len(plotErrs) > 0 {
		b.WriteString("## Plot errors\n\n")
		for _, e := range plotErrs {
			b.WriteString("- " + e + "\n")
		}
	}
	return os.WriteFile(filepath.Join(dir, "REPORT.md"), []byte(b.String()), 0o644)
}

// revision names the commit the binary was built from: the build's VCS
// stamp, or for go run (which has none) the checkout's HEAD when the run
// starts, since a long run may outlive it.
func revision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev string
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if len(rev) >= 7 {
			if modified {
				return rev[:7] + " (uncommitted changes)"
			}
			return rev[:7]
		}
	}
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		rev += " (uncommitted changes)"
	}
	return rev
}

// cpuCache is one cache level of a CPU.
type cpuCache struct {
	level int
	kind  string // Data, Instruction or Unified
	bytes int64
}

// cpuCaches reads CPU 0's caches from Linux's sysfs, once; nil elsewhere.
var cpuCaches = sync.OnceValue(func() []cpuCache {
	var cs []cpuCache
	dirs, _ := filepath.Glob("/sys/devices/system/cpu/cpu0/cache/index[0-9]*")
	for _, d := range dirs {
		read := func(name string) string {
			data, _ := os.ReadFile(filepath.Join(d, name))
			return strings.TrimSpace(string(data))
		}
		level, err := strconv.Atoi(read("level"))
		size := read("size")
		unit := int64(1)
		switch {
		case strings.HasSuffix(size, "K"):
			unit, size = 1<<10, strings.TrimSuffix(size, "K")
		case strings.HasSuffix(size, "M"):
			unit, size = 1<<20, strings.TrimSuffix(size, "M")
		case strings.HasSuffix(size, "G"):
			unit, size = 1<<30, strings.TrimSuffix(size, "G")
		}
		n, err2 := strconv.ParseInt(size, 10, 64)
		if err != nil || err2 != nil || n <= 0 {
			continue
		}
		cs = append(cs, cpuCache{level: level, kind: read("type"), bytes: n * unit})
	}
	slices.SortStableFunc(cs, func(a, b cpuCache) int { return a.level - b.level })
	return cs
})

// lastLevelCache returns the size of CPU 0's largest cache level, or 0.
func lastLevelCache() int64 {
	var llc int64
	for _, c := range cpuCaches() {
		llc = max(llc, c.bytes)
	}
	return llc
}

// binarySize formats a byte count in KiB, MiB or GiB.
func binarySize(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'g', 4, 64) + " GiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'g', 4, 64) + " MiB"
	default:
		return strconv.FormatFloat(float64(n)/(1<<10), 'g', 4, 64) + " KiB"
	}
}

func machine(rev string) string {
	var b strings.Builder
	model, cache := "unknown", ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "model name":
				model = strings.TrimSpace(v)
			case "cache size":
				cache = strings.TrimSpace(v)
			}
		}
		f.Close()
	}
	memTotal := ""
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "MemTotal:") {
				memTotal = strings.TrimSpace(strings.TrimPrefix(l, "MemTotal:"))
			}
		}
	}
	fmt.Fprintf(&b, "- Machine: %s/%s, %d CPUs (GOMAXPROCS %d), memory %s\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), memTotal)
	fmt.Fprintf(&b, "- CPU: %s", model)
	if cache != "" {
		fmt.Fprintf(&b, ", cache size %s (as /proc/cpuinfo reports it)", cache)
	}
	if cs := cpuCaches(); len(cs) > 0 {
		b.WriteString("; caches of CPU 0: ")
		for i, c := range cs {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "L%d %s %s", c.level, strings.ToLower(c.kind), binarySize(c.bytes))
		}
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "- Go: %s", runtime.Version())
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/cockroachdb/pebble/v2" {
				fmt.Fprintf(&b, "; Pebble %s", d.Version)
			}
		}
	}
	if rev != "" {
		fmt.Fprintf(&b, "; commit %s", rev)
	}
	b.WriteString("\n")
	return b.String()
}

type plotFunc func(file, title, xl, yl string, logY bool, legend int, xstep float64, cs []curve)

// section writes a section heading, and says so when the section was not
// measured in this run; it returns whether it was.
func section(b *strings.Builder, title string, measured bool) bool {
	b.WriteString("## " + title + "\n\n")
	if !measured {
		b.WriteString("Not measured in this run.\n\n")
	}
	return measured
}

func f2(x float64) string { return fmt.Sprintf("%.2f", x) }
func f1(x float64) string { return fmt.Sprintf("%.1f", x) }

func (r *Report) writeLoad(b *strings.Builder, plot plotFunc) {
	if !section(b, "1. Load factor against fingerprint size (the paper's Table 2)", r.Load != nil) {
		return
	}
	l := r.Load
	fmt.Fprintf(b, "Tables of 2^%d buckets of 4 slots, %d kicks, mean of %d runs (variance in points², min..max). "+
		"**Simulation**: a partial-key table in bench built to the paper's recipe (power-of-two buckets, "+
		"alt = i XOR tag·0x5bd1e995, tag 0 mapped to 1, random-walk eviction), filled until the first failure. "+
		"**Dynamic**: cuckoo.Filter (partial-key hashing), insert until ErrFull, LoadFactor. "+
		"**Static**: the sstable builder, Policy{FingerprintBits: f, LoadFactor: L} over 4·2^%d·L keys%s, "+
		"Inspect's LoadFactor (the builder grows the table when it cannot place every key), %d runs, asked for "+
		"L = %.3f and for L = %.2f, above the (2,4) threshold of about 97.7%%.\n\n"+
		"Small fingerprints fail early because few tags share few alternate buckets, and more so in a larger "+
		"table (more places for the first overflow): rows for f < 6 match the paper only at its 2^25 buckets.\n\n",
		l.LogBuckets, l.MaxKicks, l.Runs, l.StaticLogBuckets, staticSizeNote(l), l.StaticRuns, StaticLoadTarget, StaticLoadMax)
	st := func(s Stat, note string) string {
		if !s.Valid() {
			if note == "" {
				note = "n/a"
			}
			return note
		}
		return fmt.Sprintf("%.2f%% (var %.3f, %.2f..%.2f)", 100*s.Mean, 1e4*s.Variance, 100*s.Min, 100*s.Max)
	}
	var rows [][]string
	var sim, dyn, stc, stm, paper plotter.XYs
	for _, row := range l.Rows {
		p := ""
		if v, ok := PaperTable2[row.F]; ok {
			p = pct(v)
			paper = append(paper, plotter.XY{X: float64(row.F), Y: 100 * v})
		}
		rows = append(rows, []string{fmt.Sprint(row.F), p, st(row.Sim, ""), st(row.Dynamic, row.DynamicNote),
			st(row.Static, row.StaticNote), st(row.StaticMax, row.StaticNote)})
		if row.Sim.Valid() {
			sim = append(sim, plotter.XY{X: float64(row.F), Y: 100 * row.Sim.Mean})
		}
		if row.Dynamic.Valid() {
			dyn = append(dyn, plotter.XY{X: float64(row.F), Y: 100 * row.Dynamic.Mean})
		}
		if row.Static.Valid() {
			stc = append(stc, plotter.XY{X: float64(row.F), Y: 100 * row.Static.Mean})
		}
		if row.StaticMax.Valid() {
			stm = append(stm, plotter.XY{X: float64(row.F), Y: 100 * row.StaticMax.Mean})
		}
	}
	table(b, []string{"f", "paper", "simulation (paper's scheme)", "dynamic cuckoo.Filter",
		fmt.Sprintf("static, asked %.3f", StaticLoadTarget), fmt.Sprintf("static, asked %.2f", StaticLoadMax)}, rows)
	plot("load.png", "Load factor vs fingerprint bits", "fingerprint bits f", "load factor (%)", false, legendBottomRight, 1,
		[]curve{{name: "paper (Table 2)", xy: paper, points: true}, {name: "simulation", xy: sim},
			{name: "dynamic cuckoo.Filter", xy: dyn}, {name: fmt.Sprintf("static, asked %.3f", StaticLoadTarget), xy: stc},
			{name: fmt.Sprintf("static, asked %.2f", StaticLoadMax), xy: stm}})
}

func (r *Report) writeFPR(b *strings.Builder, plot plotFunc) {
	if !section(b, "2. False-positive rate against bits per key (the paper's Figure 2)", r.FPR != nil) {
		return
	}
	f := r.FPR
	fmt.Fprintf(b, "%d random 16-byte keys; FPR over %d non-member queries (hits shown: a count of 0 means below %s). "+
		"Bits per key are measured: 8·len(filter)/keys (trailers included), or m/n for the standard bloom filter. "+
		"Cuckoo blocks are described by cuckoopolicy.Inspect.\n\n", f.Keys, f.Queries, pct(1/float64(f.Queries)))

	var rows [][]string
	for bb := r.Config.FPRMinBits; bb <= r.Config.FPRMaxBits; bb++ {
		cp, _ := f.Find(SeriesCuckoo, bb)
		bp, _ := f.Find(SeriesPebbleBloom, bb)
		sp, _ := f.Find(SeriesStdBloom, bb)
		ratio := ""
		if bp.Queries > 0 && cp.Queries > 0 {
			ratio = fmt.Sprintf("%.3f", ratioHits(cp, bp))
		}
		rows = append(rows, []string{fmt.Sprint(bb),
			fmt.Sprintf("%s (%d) %.2f b/k, %s", pct(cp.FPR), cp.Hits, cp.BitsPerKey, cp.Info),
			fmt.Sprintf("%s (%d) %.2f b/k", pct(bp.FPR), bp.Hits, bp.BitsPerKey),
			ratio,
			fmt.Sprintf("%s (%d)", pct(sp.FPR), sp.Hits),
			pct(IdealBloomFPR(float64(bb)))})
	}
	b.WriteString("By budget B (FPR (hits) bits/key):\n\n")
	table(b, []string{"B", "cuckoo FilterPolicy(B)", "pebble bloom(B)", "FPR ratio cuckoo/bloom", "standard bloom", "ideal bloom"}, rows)

	rows = nil
	for _, series := range []string{SeriesCuckooPlain, SeriesCuckooSemi, SeriesFuse8, SeriesFuse16} {
		for _, p := range f.Points {
			if p.Series == series {
				rows = append(rows, []string{series, p.Param, f2(p.BitsPerKey), pct(p.FPR), fmt.Sprint(p.Hits),
					f2(p.BitsPerKey / math.Log2(1/math.Max(p.FPR, 0.5/float64(p.Queries)))), p.Info})
			}
		}
	}
	b.WriteString("Explicit layouts and binary fuse filters (space/bound: bits per key over log2(1/eps); with 0 hits eps is taken as half a hit):\n\n")
	table(b, []string{"filter", "param", "bits/key", "FPR", "hits", "space/bound", "inspect"}, rows)

	b.WriteString("The paper's headline rows beside ours (paper: 12-bit fingerprints at 12.53 bits/item and 0.19%; " +
		"semi-sorted at 12.57 bits/item and 0.09%; a standard bloom filter at 13 bits/item and 0.20%, set beside the standard bloom row, " +
		"not beside Pebble's, whose blocked layout and 32-bit hash cost it more at 13 bits):\n\n")
	rows = nil
	paper := map[string]string{SeriesCuckooPlain: "12.53 b/i, 0.19%", SeriesCuckooSemi: "12.57 b/i, 0.09%",
		SeriesStdBloom: "13 b/i, 0.20%"}
	for _, p := range f.Headline {
		rows = append(rows, []string{p.Series, p.Param, f2(p.BitsPerKey), pct(p.FPR), fmt.Sprint(p.Hits), paper[p.Series], p.Info})
	}
	table(b, []string{"filter", "config", "bits/key", "FPR", "hits", "paper", "inspect"}, rows)

	if len(f.BySize) > 0 {
		fmt.Fprintf(b, "By filter size, at B=%d over %d non-member queries each. Pebble's bloom picks a cache line and "+
			"the bit positions in it from one 32-bit hash: the more lines a filter has, the fewer hash bits are "+
			"left to choose the positions, and its rate rises with the number of keys in the filter (one filter covers one sstable). "+
			"Cuckoo filters hash to 64 bits:\n\n", f.SizeBits, f.SizeQueries)
		rows = nil
		for _, pair := range f.SizePairs() {
			cp, bp := pair[0], pair[1]
			rows = append(rows, []string{fmt.Sprint(cp.X),
				fmt.Sprintf("%s (%d) %.2f b/k", pct(cp.FPR), cp.Hits, cp.BitsPerKey),
				fmt.Sprintf("%s (%d) %.2f b/k", pct(bp.FPR), bp.Hits, bp.BitsPerKey),
				fmt.Sprintf("%.3f", ratioHits(cp, bp))})
		}
		table(b, []string{"keys", fmt.Sprintf("cuckoo FilterPolicy(%d)", f.SizeBits), fmt.Sprintf("pebble bloom(%d)", f.SizeBits), "FPR ratio cuckoo/bloom"}, rows)
	}

	if pairs := f.ShapePairs(); len(pairs) > 0 {
		fmt.Fprintf(b, "By key shape: sequential keys of each form, queried with the next %d keys of the same form "+
			"(the random rows repeat the first table). Pebble's bloom hashes with a 32-bit function whose spread "+
			"depends on the keys, so its rate moves with their form and their number; a cuckoo filter addresses by a "+
			"64-bit xxhash and its rate does not:\n\n", f.ShapeQueries)
		rows = nil
		row := func(shape string, cp, bp FPRPoint) []string {
			return []string{shape, fmt.Sprint(cp.Keys), fmt.Sprint(cp.X),
				fmt.Sprintf("%s (%d)", pct(cp.FPR), cp.Hits), fmt.Sprintf("%s (%d)", pct(bp.FPR), bp.Hits),
				fmt.Sprintf("%.3f", ratioHits(cp, bp))}
		}
		for _, bb := range r.Config.FPRShapeBits {
			cp, ok1 := f.Find(SeriesCuckoo, bb)
			bp, ok2 := f.Find(SeriesPebbleBloom, bb)
			if ok1 && ok2 {
				rows = append(rows, row("random bytes", cp, bp))
			}
		}
		for _, pair := range pairs {
			rows = append(rows, row("`"+pair[0].Param+"`", pair[0], pair[1]))
		}
		table(b, []string{"keys", "members", "B", "cuckoo FilterPolicy(B)", "pebble bloom(B)", "FPR ratio cuckoo/bloom"}, rows)
	}

	var cs []curve
	series := []string{SeriesCuckoo, SeriesCuckooPlain, SeriesCuckooSemi, SeriesPebbleBloom, SeriesStdBloom, SeriesIdealBloom, SeriesFuse8, SeriesFuse16, SeriesBound}
	for _, s := range series {
		var xy plotter.XYs
		for _, p := range f.Points {
			if p.Series == s {
				xy = append(xy, plotter.XY{X: p.BitsPerKey, Y: 100 * p.FPR})
			}
		}
		sort.Slice(xy, func(i, j int) bool { return xy[i].X < xy[j].X })
		cs = append(cs, curve{name: s, xy: xy, points: s == SeriesFuse8 || s == SeriesFuse16,
			dashed: s == SeriesBound || s == SeriesIdealBloom, gray: s == SeriesBound})
	}
	plot("fpr.png", "False-positive rate vs bits per key", "bits per key (measured)", "FPR (%)", true, legendBottomLeft, 2, cs)
}

func (r *Report) writeLookup(b *strings.Builder, plot plotFunc) {
	if !section(b, "3. Lookup time against the share of positive queries (the paper's Figure 3)", r.Lookup != nil) {
		return
	}
	l := r.Lookup
	fmt.Fprintf(b, "Budget B=%d. Each pass looks up the same %d 16-byte queries (a share p of members, in random order) "+
		"through each filter's concrete lookup in a loop; passes alternate between filters; the fastest of %d passes "+
		"of at least %s is shown (noise on a shared machine only adds time), in ns per lookup, and the ratio to "+
		"Pebble's bloom in the same run.\n\n",
		l.Bits, l.Queries, r.Config.LookupReps, r.Config.LookupMinTime)
	if len(l.FalseNegatives) > 0 {
		b.WriteString("**FALSE NEGATIVES:**\n\n")
		for _, s := range l.FalseNegatives {
			b.WriteString("- " + s + "\n")
		}
		b.WriteString("\n")
	}
	kinds := []string{KindCuckoo, KindPlain, KindBloom, KindFuse8}
	for _, size := range []string{"in-cache", "beyond-cache"} {
		var rows [][]string
		var cs []curve
		xys := make([]plotter.XYs, len(kinds))
		var ps []float64
		for _, p := range l.Points {
			if p.Size == size && !slices.Contains(ps, p.P) {
				ps = append(ps, p.P)
			}
		}
		if len(ps) == 0 {
			continue
		}
		first, _ := l.Get(size, KindCuckoo, ps[0])
		fmt.Fprintf(b, "**%s** (%d keys):", size, first.Keys)
		for _, k := range kinds {
			if p, ok := l.Get(size, k, ps[0]); ok {
				fmt.Fprintf(b, " %s %.2f MB;", k, float64(p.FilterBytes)/1e6)
			}
		}
		if llc := lastLevelCache(); llc > 0 && first.FilterBytes > 0 {
			fmt.Fprintf(b, " cuckoo's filter is %.3gx the last-level cache (%s).", float64(first.FilterBytes)/float64(llc), binarySize(llc))
		}
		b.WriteString("\n\n")
		for _, p := range ps {
			bl, _ := l.Get(size, KindBloom, p)
			row := []string{fmt.Sprintf("%.2f", p)}
			for i, k := range kinds {
				x, ok := l.Get(size, k, p)
				if !ok {
					row = append(row, "")
					continue
				}
				cell := f1(x.Ns)
				if k != KindBloom && bl.Ns > 0 {
					cell += fmt.Sprintf(" (%.2fx)", x.Ns/bl.Ns)
				}
				row = append(row, cell)
				xys[i] = append(xys[i], plotter.XY{X: p, Y: x.Ns})
			}
			rows = append(rows, row)
		}
		table(b, append([]string{"p"}, kinds...), rows)
		for i, k := range kinds {
			cs = append(cs, curve{name: k, xy: xys[i]})
		}
		plot("lookup_"+size+".png", fmt.Sprintf("Lookup time, %s filter (%d keys)", size, first.Keys),
			"share of positive queries p", "ns per lookup", false, legendBottomRight, 0.25, cs)
	}
}

func (r *Report) writeBuild(b *strings.Builder) {
	if !section(b, "4. Build throughput and temporary memory", r.Build != nil) {
		return
	}
	b.WriteString("Keys come from one flat buffer (generation not timed); the writer's AddKey for every key, then " +
		"Finish. Five rounds interleave the filters; in each, a filter is built twice: *cold* is the first " +
		"of the two, after two GCs, which finds the memory the other filters' builds left (fresh pages to fault in, pools the GCs " +
		"emptied), *warm* the second, after one GC, which reuses what the first left, as back-to-back builds of sstables do. " +
		"Both are the fastest of the 5 rounds; keys/s, ns/key and the throughput ratio are warm. A filter that " +
		"allocates more per key pays more when cold. *alloc B/key* is runtime.MemStats.TotalAlloc after minus before, over the keys: every " +
		"byte allocated during the build, freed or not, the output included, for the build that allocated most " +
		"(the first: pools cold), and after the slash for the one that allocated least (pools warm); *temp B/key* " +
		"subtracts the output from the first. It bounds the build's peak temporary memory from above. Binary fuse includes hashing the keys into a " +
		"[]uint64 (8 bytes a key), which it needs. Each filter's ratio is to the Pebble bloom filter nearest " +
		"in bits per key, named beside it: bloom(12) for plain f=12, the dynamic filter's inserts and the paper's " +
		"configuration near the load threshold, " + KindHighLoadBuild + " (12.3 bits a key, most of its " +
		"build in eviction walks).\n\n")
	var rows [][]string
	for _, p := range r.Build.Points {
		ratio, cold := "", ""
		if bp, ok := r.Build.Get(buildBase(p.Kind), p.KeyLen); ok {
			ratio = fmt.Sprintf("%.2fx vs %s", p.KeysPerSec/bp.KeysPerSec, bp.Kind)
			cold = fmt.Sprintf(" (%.2fx)", bp.ColdNsPerKey/p.ColdNsPerKey)
		}
		rows = append(rows, []string{p.Kind, fmt.Sprint(p.KeyLen), fmt.Sprint(p.Keys),
			fmt.Sprintf("%.2fM", p.KeysPerSec/1e6), f1(p.NsPerKey), ratio, f1(p.ColdNsPerKey) + cold,
			f1(p.AllocPerKey) + " / " + f1(p.WarmAlloc), f1(p.TempPerKey), f2(p.OutBitsPerKey)})
	}
	table(b, []string{"filter", "key bytes", "keys", "keys/s", "ns/key", "throughput ratio", "cold ns/key (ratio)", "alloc B/key (most / least)", "temp B/key", "output bits/key"}, rows)
	if r.Lookup != nil && len(r.Lookup.Builds) > 0 {
		b.WriteString("Builds of the lookup section's filters, one run each, key generation included " +
			"(the beyond-cache ones show how build cost grows with the table):\n\n")
		rows = nil
		for _, p := range r.Lookup.Builds {
			ratio := ""
			for _, q := range r.Lookup.Builds {
				if q.Kind == KindBloom && q.Keys == p.Keys && p.Kind != KindBloom {
					ratio = fmt.Sprintf("%.2fx", p.KeysPerSec/q.KeysPerSec)
				}
			}
			rows = append(rows, []string{p.Kind, fmt.Sprint(p.Keys), fmt.Sprintf("%.2fM", p.KeysPerSec/1e6), f1(p.NsPerKey), ratio, f2(p.OutBitsPerKey)})
		}
		table(b, []string{"filter", "keys", "keys/s", "ns/key", "throughput vs pebble bloom", "output bits/key"}, rows)
	}
}

func (r *Report) writeReadAmp(b *strings.Builder) {
	if !section(b, "5. Read amplification in a Pebble database", r.ReadAmp != nil) {
		return
	}
	ra := r.ReadAmp
	fmt.Fprintf(b, "An in-memory vfs (vfs.NewMem) wrapped by a counting FS that classifies every ReadAt by the "+
		"tables' layouts (data, filter, index blocks); a one-byte block cache, so every block a Get touches is read; "+
		"automatic compactions off; the policy on all seven levels. %d overlapping L0 tables of %d random 16-byte keys "+
		"(%d-byte values), then %d Gets of absent keys and %d of present keys; then a manual compaction into L6 and "+
		"%d SeekPrefixGE of absent keys through one iterator, with IterOptions.UseL6Filters (db.Get never consults L6 "+
		"filters) and without. Per operation: data blocks and bytes read; filter and index bytes are what the one-byte "+
		"cache makes Pebble re-read each time (a real cache keeps them). Filter hits/misses from db.Metrics().Filter.\n\n",
		ra.Tables, ra.KeysPerTable, ra.ValueLen, ra.Gets, ra.Gets, ra.Gets)
	var rows [][]string
	bl, _ := ra.Row("bloom(10)")
	for _, x := range ra.Rows {
		rows = append(rows, []string{x.Policy, fmt.Sprint(x.L0Tables), f2(x.L0FilterPerKey),
			f2(x.AbsentGet.DataBlocks), fmt.Sprintf("%.0f", x.AbsentGet.DataBytes), fmt.Sprintf("%.0f", x.AbsentGet.FilterBytes),
			fmt.Sprintf("%.0f", x.AbsentGet.TotalBytes), f2(x.AbsentGet.FilterHits),
			fmt.Sprintf("%.0f", x.AbsentGet.Ns) + ratioStr(x.AbsentGet.Ns, bl.AbsentGet.Ns),
			f2(x.PresentGet.DataBlocks), fmt.Sprintf("%.0f", x.PresentGet.DataBytes),
			fmt.Sprintf("%.0f", x.PresentGet.Ns) + ratioStr(x.PresentGet.Ns, bl.PresentGet.Ns)})
	}
	b.WriteString("L0, db.Get:\n\n")
	table(b, []string{"policy", "L0 tables", "filter B/key", "absent: data blocks", "data B", "filter B", "all B",
		"filter hits", "ns (vs bloom(10))", "present: data blocks", "data B", "ns (vs bloom(10))"}, rows)
	rows = nil
	for _, x := range ra.Rows {
		rows = append(rows, []string{x.Policy, fmt.Sprint(x.L6Tables), f2(x.L6FilterPerKey),
			f2(x.L6AbsentSeek.DataBlocks), fmt.Sprintf("%.0f", x.L6AbsentSeek.TotalBytes), fmt.Sprintf("%.0f", x.L6AbsentSeek.Ns),
			f2(x.L6AbsentNoFilter.DataBlocks), fmt.Sprintf("%.0f", x.L6AbsentNoFilter.TotalBytes), fmt.Sprintf("%.0f", x.L6AbsentNoFilter.Ns)})
	}
	b.WriteString("L6, SeekPrefixGE of absent keys:\n\n")
	table(b, []string{"policy", "L6 tables", "filter B/key", "UseL6Filters: data blocks", "all B", "ns",
		"default: data blocks", "all B", "ns"}, rows)
}

func ratioStr(a, base float64) string {
	if base == 0 || a == base {
		return ""
	}
	return fmt.Sprintf(" (%.2fx)", a/base)
}

func (r *Report) writePeers(b *strings.Builder) {
	if !section(b, "6. Seed systems and peers", r.CBF != nil || r.Peers != nil) {
		return
	}
	if len(r.CBF) > 0 {
		fmt.Fprintf(b, "**Cuckoo Bloom filter (Mun and Lim)**, implemented in bench/cbf.go from its description "+
			"(see the doc comment there for the choices it leaves open). |S| members, |U| = 3|S|: FPR over the "+
			"2|S| non-members, mean of %d runs, at %.1f bits per member for both filters; the standard bloom "+
			"filter uses k = round(bits·ln 2). The CBF's cell width f and positions k are not given in its description: "+
			"the first size sweeps f = 2..8, k = 1..3 and the best configuration is shown and used for the other sizes.\n\n",
			r.Config.CBFRuns, r.Config.CBFBitsPerItem)
		var rows [][]string
		for _, x := range r.CBF {
			paper := ""
			if p, ok := MunLimTable1[x.LogS]; ok {
				paper = fmt.Sprintf("%.3f / %.3f", p[0], p[1])
			}
			rows = append(rows, []string{fmt.Sprintf("2^%d", x.LogS), fmt.Sprintf("f=%d k=%d", x.F, x.K),
				fmt.Sprintf("%.4f", x.CBF), fmt.Sprintf("%.4f", x.Bloom), fmt.Sprintf("%.4f", x.BloomTheory),
				pct(x.Wildcards), fmt.Sprint(x.FalseNeg), paper})
		}
		table(b, []string{"|S|", "CBF config", "CBF FPR", "bloom FPR", "bloom theory", "wildcard cells", "false negatives", "paper CBF / bloom"}, rows)
		for _, row := range r.CBF {
			if len(row.Sweep) < 2 {
				continue
			}
			var sw []string
			for _, s := range row.Sweep {
				sw = append(sw, fmt.Sprintf("f=%d,k=%d: %.3f", s.F, s.K, s.FPR))
			}
			fmt.Fprintf(b, "CBF FPR by (f, k) at |S| = 2^%d: %s.\n\n", row.LogS, strings.Join(sw, "; "))
		}
	}
	if len(r.Peers) > 0 {
		fmt.Fprintf(b, "**Go cuckoo-filter libraries against cuckoo.Filter**, grouped by fingerprint size (equal "+
			"memory per slot). Capacity %d keys (95%% of a power of two, so the power-of-two libraries run at 95%% "+
			"load); then %d more inserts past capacity. *lost* counts keys whose insert reported success and that "+
			"a lookup later misses: false negatives. Lookup ns: the fastest of 3 timed loops of at least %s over 2^20 (or capacity) queries.\n\n",
			r.Peers[0].Capacity, r.Peers[0].Over, r.Config.LookupMinTime)
		var rows [][]string
		for _, p := range r.Peers {
			if p.Note != "" {
				rows = append(rows, []string{p.Name, p.FingerprintBits, p.Note, "", "", "", "", "", "", "", ""})
				continue
			}
			rows = append(rows, []string{p.Name, p.FingerprintBits, f2(p.BitsPerItem), pct(p.LoadAtCap), pct(p.FPR),
				f1(p.InsertNs), f1(p.LookupNegNs), f1(p.LookupPosNs),
				fmt.Sprintf("%d / %d", p.FailedAtCap, p.LostAtCap), fmt.Sprintf("%d / %d", p.FailedOver, p.LostOver),
				f1(p.OverInsertNs)})
		}
		table(b, []string{"implementation", "f", "bits/item", "load", "FPR", "insert ns", "lookup ns (absent)",
			"lookup ns (present)", "at capacity: failed / lost", "past capacity: failed / lost", "insert ns past capacity"}, rows)
	}
}

// verdicts are plain statements computed from the measurements.
func (r *Report) verdicts() []string {
	var v []string
	if f := r.FPR; f != nil {
		var win, loss []int
		var sumRatio float64
		for b := r.Config.FPRMinBits; b <= r.Config.FPRMaxBits; b++ {
			cp, ok1 := f.Find(SeriesCuckoo, b)
			bp, ok2 := f.Find(SeriesPebbleBloom, b)
			if !ok1 || !ok2 {
				continue
			}
			if cp.Hits < bp.Hits {
				win = append(win, b)
			} else {
				loss = append(loss, b)
			}
			sumRatio += cp.BitsPerKey / bp.BitsPerKey
		}
		if n := len(win) + len(loss); n > 0 {
			s := fmt.Sprintf("FPR: cuckoo FilterPolicy(B) beats Pebble's bloom(B) at %d of %d budgets", len(win), n)
			if len(loss) > 0 {
				s += fmt.Sprintf("; loses or ties at B = %v", loss)
			}
			s += fmt.Sprintf("; its blocks are %.2fx bloom's size on average", sumRatio/float64(n))
			v = append(v, s+".")
		}
		if b24, ok := f.Find(SeriesPebbleBloom, r.Config.FPRMaxBits); ok {
			v = append(v, fmt.Sprintf("Pebble's bloom at %d bits/key measures %s against %s for an ideal bloom filter (its 32-bit hash).",
				r.Config.FPRMaxBits, pct(b24.FPR), pct(IdealBloomFPR(float64(r.Config.FPRMaxBits)))))
		}
		if pairs := f.SizePairs(); len(pairs) >= 2 {
			c0, b0 := pairs[0][0], pairs[0][1]
			c1, b1 := pairs[len(pairs)-1][0], pairs[len(pairs)-1][1]
			v = append(v, fmt.Sprintf("Filter size, at B=%d: from %d to %d keys Pebble's bloom goes from %s to %s false positives, "+
				"cuckoo from %s to %s (ratio cuckoo/bloom %.3f, then %.3f).",
				f.SizeBits, c0.X, c1.X, pct(b0.FPR), pct(b1.FPR), pct(c0.FPR), pct(c1.FPR), ratioHits(c0, b0), ratioHits(c1, b1)))
		}
		// Per budget of the key-shape table: the range of cuckoo/bloom
		// ratios over its sets, and on how many bloom does better than on
		// random keys.
		pairs := f.ShapePairs()
		for _, bb := range r.Config.FPRShapeBits {
			lo, hi := math.Inf(1), math.Inf(-1)
			sets, better := 0, 0
			rb, haveRandom := f.Find(SeriesPebbleBloom, bb)
			for _, pair := range pairs {
				if pair[0].X != bb {
					continue
				}
				ratio := ratioHits(pair[0], pair[1])
				lo, hi, sets = min(lo, ratio), max(hi, ratio), sets+1
				if haveRandom && pair[1].FPR < rb.FPR {
					better++
				}
			}
			if sets > 0 {
				v = append(v, fmt.Sprintf("Key shape, B=%d: over %d sets of sequential keys the FPR ratio cuckoo/bloom ranges "+
					"from %.3f to %.3f; Pebble's bloom does better than on random keys on %d of them.",
					bb, sets, lo, hi, better))
			}
		}
		for _, fs := range []string{SeriesFuse8, SeriesFuse16} {
			for _, p := range f.Points {
				if p.Series != fs || p.Hits == 0 {
					continue
				}
				need, ok := bitsForFPR(f, SeriesCuckoo, p.FPR)
				if !ok {
					v = append(v, fmt.Sprintf("%s: %s at %.2f bits/key; the cuckoo sweep does not reach that FPR with measured hits.", fs, pct(p.FPR), p.BitsPerKey))
					continue
				}
				// The smaller filter's saving, relative to the larger one.
				smaller, small, large := "binary fuse", p.BitsPerKey, need
				if need < p.BitsPerKey {
					smaller, small, large = "cuckoo", need, p.BitsPerKey
				}
				v = append(v, fmt.Sprintf("Space at equal FPR: %s reaches %s at %.2f bits/key; cuckoo FilterPolicy needs %.2f (interpolated): %s takes %.0f%% less space; binary fuse is static (no deletes) and not a Pebble policy.",
					fs, pct(p.FPR), p.BitsPerKey, need, smaller, 100*(large-small)/large))
			}
		}
	}
	if l := r.Lookup; l != nil {
		for _, size := range []string{"in-cache", "beyond-cache"} {
			for _, k := range []string{KindCuckoo, KindPlain, KindFuse8} {
				var faster, slower []string
				lo, hi := math.Inf(1), 0.0
				for _, p := range l.Points {
					if p.Size != size || p.Kind != k {
						continue
					}
					bl, ok := l.Get(size, KindBloom, p.P)
					if !ok || bl.Ns == 0 {
						continue
					}
					ratio := p.Ns / bl.Ns
					lo, hi = math.Min(lo, ratio), math.Max(hi, ratio)
					if ratio <= 1 {
						faster = append(faster, fmt.Sprintf("%.2f", p.P))
					} else {
						slower = append(slower, fmt.Sprintf("%.2f", p.P))
					}
				}
				if len(faster)+len(slower) == 0 {
					continue
				}
				s := fmt.Sprintf("Lookup, %s, %s: %.2fx..%.2fx Pebble's bloom time", size, k, lo, hi)
				if len(slower) == 0 {
					s += " (no slower at any p)"
				} else if len(faster) == 0 {
					s += " (slower at every p)"
				} else {
					s += fmt.Sprintf(" (slower at p = %s)", strings.Join(slower, ", "))
				}
				v = append(v, s+".")
			}
		}
	}
	if bd := r.Build; bd != nil {
		for _, kl := range []int{ShortKeyLen, LongKeyLen} {
			c, ok1 := bd.Get("cuckoo FilterPolicy(10)", kl)
			bl, ok2 := bd.Get("pebble bloom(10)", kl)
			if ok1 && ok2 {
				v = append(v, fmt.Sprintf("Build, %d-byte keys: cuckoo FilterPolicy(10) %.2fM keys/s, %.2fx Pebble's bloom(10) (cold: %.2fx); %.1f against %.1f bytes allocated per key (first build).",
					kl, c.KeysPerSec/1e6, c.KeysPerSec/bl.KeysPerSec, bl.ColdNsPerKey/c.ColdNsPerKey, c.AllocPerKey, bl.AllocPerKey))
			}
		}
		c, ok1 := bd.Get(KindHighLoadBuild, ShortKeyLen)
		bl, ok2 := bd.Get(buildBase(KindHighLoadBuild), ShortKeyLen)
		if ok1 && ok2 {
			v = append(v, fmt.Sprintf("Build near the load threshold, %d-byte keys: %s %.2fM keys/s, %.2fx Pebble's bloom(12) (cold: %.2fx).",
				ShortKeyLen, KindHighLoadBuild, c.KeysPerSec/1e6, c.KeysPerSec/bl.KeysPerSec, bl.ColdNsPerKey/c.ColdNsPerKey))
		}
	}
	if ra := r.ReadAmp; ra != nil {
		none, _ := ra.Row("none")
		for _, row := range ra.Rows {
			if !strings.HasPrefix(row.Policy, "cuckoo(") {
				continue
			}
			bname := "bloom(" + strings.TrimPrefix(row.Policy, "cuckoo(")
			bl, ok := ra.Row(bname)
			if !ok {
				continue
			}
			v = append(v, fmt.Sprintf("Read amplification, %s: %.3f data blocks per absent Get against %.3f for %s and %.2f without a filter; %.2f against %.2f filter bytes per key.",
				row.Policy, row.AbsentGet.DataBlocks, bl.AbsentGet.DataBlocks, bname, none.AbsentGet.DataBlocks, row.L0FilterPerKey, bl.L0FilterPerKey))
		}
	}
	for _, p := range r.Peers {
		if p.Note != "" {
			continue
		}
		if p.LostAtCap > 0 || p.LostOver > 0 {
			v = append(v, fmt.Sprintf("%s (%s-bit) loses keys: %d false negatives at capacity, %d after inserting past it.", p.Name, p.FingerprintBits, p.LostAtCap, p.LostOver))
		}
	}
	v = append(v, peerSpeed(r.Peers)...)
	for _, row := range r.CBF {
		w := "below"
		if row.CBF >= row.Bloom {
			w = "not below"
		}
		v = append(v, fmt.Sprintf("Cuckoo Bloom filter at |S| = 2^%d, %.1f bits/member: FPR %.4f, %s the standard bloom filter's %.4f (paper: %.3f vs %.3f).",
			row.LogS, row.BitsPerItem, row.CBF, w, row.Bloom, MunLimTable1[row.LogS][0], MunLimTable1[row.LogS][1]))
	}
	return v
}

// peerSpeed sets the dynamic filter's insert and lookup times beside each Go
// library's at the same fingerprint size, as ratios (above 1: ours slower).
func peerSpeed(rows []PeerRow) []string {
	var v []string
	for _, p := range rows {
		if p.Note != "" || strings.HasPrefix(p.Name, "ours") || p.InsertNs <= 0 || p.LookupNegNs <= 0 || p.LookupPosNs <= 0 {
			continue
		}
		for _, o := range rows {
			if !strings.HasPrefix(o.Name, "ours") || o.FingerprintBits != p.FingerprintBits {
				continue
			}
			v = append(v, fmt.Sprintf("Dynamic filter against %s (%s-bit): %s takes %.2fx its time per insert (%.1f against %.1f ns), %.2fx per absent lookup and %.2fx per present lookup.",
				p.Name, p.FingerprintBits, o.Name, o.InsertNs/p.InsertNs, o.InsertNs, p.InsertNs, o.LookupNegNs/p.LookupNegNs, o.LookupPosNs/p.LookupPosNs))
			break
		}
	}
	return v
}

// bitsForFPR interpolates, along a series sorted by bits per key, the bits
// per key at which the measured FPR reaches eps (linear in log FPR).
func bitsForFPR(f *FPRResult, series string, eps float64) (float64, bool) {
	var pts []FPRPoint
	for _, p := range f.Points {
		if p.Series == series && p.Hits > 0 {
			pts = append(pts, p)
		}
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].BitsPerKey < pts[j].BitsPerKey })
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if a.FPR >= eps && b.FPR <= eps && a.FPR != b.FPR {
			t := (math.Log(a.FPR) - math.Log(eps)) / (math.Log(a.FPR) - math.Log(b.FPR))
			return a.BitsPerKey + t*(b.BitsPerKey-a.BitsPerKey), true
		}
	}
	return 0, false
}

// staticSizeNote explains a static builder's table smaller than the others.
func staticSizeNote(l *LoadResult) string {
	if l.StaticLogBuckets >= l.LogBuckets {
		return ""
	}
	return fmt.Sprintf(" (2^%d buckets, not 2^%d: the column makes 26 builds a run, and at 4·2^%d keys each "+
		"takes a minute or more, two attempts when asked above the threshold)",
		l.StaticLogBuckets, l.LogBuckets, l.LogBuckets)
}
