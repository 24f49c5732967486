// Package report reproduces the cuckoo-filter paper's measurements with the
// cuckoo filter policy beside Pebble's bloom filter, always in the same run
// on the same keys, and writes them up as REPORT.md with PNG plots: the load
// factor against fingerprint size (the paper's Table 2), the false-positive
// rate against bits per key (Figure 2), lookup time against the share of
// positive queries (Figure 3), build throughput and memory, read
// amplification in a Pebble database, and the Go cuckoo-filter libraries and
// the Cuckoo Bloom filter of Mun and Lim. Each section's file measures it,
// writes its tables and plots, and judges its targets and verdicts.
//
// Run is the whole API, for bench/cmd/report; Config sizes the run, and Tiny,
// Quick and Full are its presets. The package's Go benchmarks (go test
// -bench) give benchstat-friendly numbers for the hot paths.
package report

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/machine"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/markdown"
	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/progress"
)

// Sections of the report, in the order they run.
var Sections = []string{"fpr", "load", "lookup", "build", "readamp", "peers"}

// report holds every measurement of one run.
type report struct {
	Config   Config
	Command  string
	Revision string // the commit measured, read when the run starts
	Start    time.Time
	Elapsed  map[string]time.Duration
	Failures map[string]string

	FPR     *fprResult
	Load    *loadResult
	Lookup  *lookupResult
	Build   *buildResult
	ReadAmp *readAmpResult
	CBF     []cbfRow
	Peers   []peerRow
}

// Run measures the chosen sections (nil: all) and writes out/REPORT.md and
// the plots. The report is rewritten after every section, so a long run
// that stops part way leaves what it measured. A section that fails (or
// panics) is reported as such and the others still run; Run returns an error
// naming the failed sections. command is the command line REPORT.md names.
func Run(c Config, out string, sections []string, command string) error {
	_, err := run(c, out, sections, command)
	return err
}

// run is Run, and returns what was measured.
func run(c Config, out string, sections []string, command string) (*report, error) {
	if len(sections) == 0 {
		sections = Sections
	}
	for _, s := range sections {
		if !slices.Contains(Sections, s) {
			return nil, fmt.Errorf("report: unknown section %q (have %s)", s, strings.Join(Sections, ", "))
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	r := &report{Config: c, Command: command, Revision: machine.Revision(), Start: time.Now(),
		Elapsed: map[string]time.Duration{}, Failures: map[string]string{}}
	pr := progress.New(c.Progress)
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
		if werr := r.write(out); werr != nil {
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
		return r, fmt.Errorf("report: sections failed: %s", strings.Join(names, ", "))
	}
	return r, nil
}

func (r *report) runSection(s string, pr *progress.Printer) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, firstLines(string(debug.Stack()), 12))
		}
	}()
	c := r.Config
	switch s {
	case "fpr":
		r.FPR, err = measureFPR(c, pr)
	case "load":
		r.Load, err = measureLoad(c, pr)
	case "lookup":
		r.Lookup, err = measureLookup(c, pr)
	case "build":
		r.Build, err = measureBuild(c, pr)
	case "readamp":
		r.ReadAmp, err = measureReadAmp(c, pr)
	case "peers":
		if r.CBF, err = measureCBF(c, pr); err == nil {
			r.Peers, err = measurePeers(c, pr)
		}
	}
	return err
}

func firstLines(s string, n int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[:min(n, len(l))], "\n")
}

// Targets evaluates the project's goals from the measurements, each
// section judging its own. A smoke test's sizes cannot show whether a
// target is met: what was measured is shown, but not judged.
func (r *report) targets() []target {
	ts := slices.Concat(r.fprTargets(), r.staticLoadTargets(), r.lookupTargets(), r.table2Targets())
	if r.Config.Smoke {
		for i := range ts {
			if ts[i].Status != notMeasured {
				ts[i].Status = notJudged
			}
		}
	}
	return ts
}

// verdicts are plain statements computed from the measurements, each
// section drawing its own.
func (r *report) verdicts() []string {
	return slices.Concat(r.fprVerdicts(), r.lookupVerdicts(), r.buildVerdicts(), r.readAmpVerdicts(), r.peerVerdicts())
}

// Write writes dir/REPORT.md and the plots for what has been measured.
func (r *report) write(dir string) error {
	w := markdown.New(dir)
	r.writeHeader(w)
	r.writeFailures(w)

	w.WriteString("## Targets\n\n")
	var rows [][]string
	for _, t := range r.targets() {
		rows = append(rows, []string{"**" + t.Status + "**", t.Name, t.Measured})
	}
	w.Table([]string{"status", "target", "measured"}, rows)

	w.WriteString("## Where this project wins and loses\n\n")
	if r.Config.Smoke {
		w.WriteString("Not drawn: a smoke test's sizes cannot support them.\n\n")
	} else {
		w.WriteString("Computed from the numbers below.\n\n")
		w.List(r.verdicts())
		w.WriteString("\n")
	}

	r.writeLoad(w)
	r.writeFPR(w)
	r.writeLookup(w)
	r.writeBuild(w)
	r.writeReadAmp(w)
	r.writePeers(w)
	if len(w.PlotErrs()) > 0 {
		w.WriteString("## Plot errors\n\n")
		w.List(w.PlotErrs())
	}
	return os.WriteFile(filepath.Join(dir, "REPORT.md"), []byte(w.String()), 0o644)
}

// writeHeader writes the title, the machine, the command and how long each
// section took.
func (r *report) writeHeader(w *markdown.Doc) {
	w.WriteString("# pebble-cuckoo benchmark report\n\n")
	w.WriteString(machine.Describe(r.Revision))
	fmt.Fprintf(w, "- Command: `%s`\n- Mode: %s; started %s; ran %s so far",
		r.Command, r.Config.Mode, r.Start.Format(time.RFC3339), time.Since(r.Start).Round(time.Second))
	var secs []string
	for _, s := range Sections {
		if d, ok := r.Elapsed[s]; ok {
			secs = append(secs, fmt.Sprintf("%s %s", s, d.Round(100*time.Millisecond)))
		}
	}
	fmt.Fprintf(w, " (%s)\n", strings.Join(secs, ", "))
	w.WriteString("- Lookup times are the fastest of passes interleaved between the filters; builds, " +
		"the read-amplification Get times and the peers' times come from one pass (or the fastest of " +
		"three) per filter and are noisier. On a shared machine read the ratios to Pebble's bloom " +
		"from the same run, not the absolute numbers.\n")
	if r.Config.Smoke {
		w.WriteString("- **A smoke test**: its sizes show that every section runs, and are far too small for the " +
			"numbers to mean anything; targets are not judged and no verdicts are drawn. Run -quick or the full " +
			"report for those.\n")
	}
	w.WriteString("\n")
}

// writeFailures lists the sections that failed, with their errors.
func (r *report) writeFailures(w *markdown.Doc) {
	if len(r.Failures) == 0 {
		return
	}
	w.WriteString("## Failed sections\n\n")
	for _, s := range Sections {
		if f, ok := r.Failures[s]; ok {
			fmt.Fprintf(w, "- **%s**:\n\n```\n%s\n```\n", s, f)
		}
	}
	w.WriteString("\n")
}

// target is one of the project's measured goals.
type target struct {
	Name     string
	Measured string
	Status   string // PASS, FAIL, NOT MEASURED or NOT JUDGED (smoke test)
}

const (
	notMeasured = "NOT MEASURED"
	notJudged   = "NOT JUDGED"
)

// newTarget is a target with its measurement; measured false means its
// section did not run (or found nothing to judge).
func newTarget(name string, ok, measured bool, format string, args ...any) target {
	t := target{Name: name, Measured: fmt.Sprintf(format, args...), Status: notMeasured}
	if measured {
		t.Status = map[bool]string{true: "PASS", false: "FAIL"}[ok]
	}
	return t
}
