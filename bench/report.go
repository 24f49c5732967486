package bench

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

// Targets evaluates the project's goals from the measurements, each
// section judging its own. A smoke test's sizes cannot show whether a
// target is met: what was measured is shown, but not judged.
func (r *Report) Targets() []Target {
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
func (r *Report) verdicts() []string {
	return slices.Concat(r.fprVerdicts(), r.lookupVerdicts(), r.buildVerdicts(), r.readAmpVerdicts(), r.peerVerdicts())
}

// Write writes dir/REPORT.md and the plots for what has been measured.
func (r *Report) Write(dir string) error {
	w := &markdown{dir: dir}
	r.writeHeader(w)
	r.writeFailures(w)

	w.WriteString("## Targets\n\n")
	var rows [][]string
	for _, t := range r.Targets() {
		rows = append(rows, []string{"**" + t.Status + "**", t.Name, t.Measured})
	}
	w.table([]string{"status", "target", "measured"}, rows)

	w.WriteString("## Where this project wins and loses\n\n")
	if r.Config.Smoke {
		w.WriteString("Not drawn: a smoke test's sizes cannot support them.\n\n")
	} else {
		w.WriteString("Computed from the numbers below.\n\n")
		w.list(r.verdicts())
		w.WriteString("\n")
	}

	r.writeLoad(w)
	r.writeFPR(w)
	r.writeLookup(w)
	r.writeBuild(w)
	r.writeReadAmp(w)
	r.writePeers(w)
	if len(w.plotErrs) > 0 {
		w.WriteString("## Plot errors\n\n")
		w.list(w.plotErrs)
	}
	return os.WriteFile(filepath.Join(dir, "REPORT.md"), []byte(w.String()), 0o644)
}

// writeHeader writes the title, the machine, the command and how long each
// section took.
func (r *Report) writeHeader(w *markdown) {
	w.WriteString("# pebble-cuckoo benchmark report\n\n")
	w.WriteString(machine(r.Revision))
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
func (r *Report) writeFailures(w *markdown) {
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
