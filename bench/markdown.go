package bench

import (
	"fmt"
	"strings"
)

// markdown is a REPORT.md being written: its text, the directory its plots
// go to, and the plots that could not be drawn (listed at the end).
type markdown struct {
	strings.Builder
	dir      string
	plotErrs []string
}

// plot draws curves into a PNG beside the report and links it from the text.
func (w *markdown) plot(file, title, xl, yl string, logY bool, legend int, xstep float64, cs []curve) {
	if err := savePlot(w.dir, file, title, xl, yl, logY, legend, xstep, cs); err != nil {
		w.plotErrs = append(w.plotErrs, file+": "+err.Error())
		return
	}
	fmt.Fprintf(w, "![%s](%s)\n\n", title, file)
}

// table writes a Markdown table.
func (w *markdown) table(header []string, rows [][]string) {
	w.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		w.WriteString(" --- |")
	}
	w.WriteString("\n")
	for _, r := range rows {
		w.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	w.WriteString("\n")
}

// section writes a section heading, and says so when the section was not
// measured in this run; it returns whether it was.
func (w *markdown) section(title string, measured bool) bool {
	w.WriteString("## " + title + "\n\n")
	if !measured {
		w.WriteString("Not measured in this run.\n\n")
	}
	return measured
}

// list writes one bullet a line.
func (w *markdown) list(lines []string) {
	for _, l := range lines {
		w.WriteString("- " + l + "\n")
	}
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

func f2(x float64) string { return fmt.Sprintf("%.2f", x) }
func f1(x float64) string { return fmt.Sprintf("%.1f", x) }

// ratioStr is " (a/base x)", or "" where base is 0 or a is base.
func ratioStr(a, base float64) string {
	if base == 0 || a == base {
		return ""
	}
	return fmt.Sprintf(" (%.2fx)", a/base)
}

// Target is one of the project's measured goals.
type Target struct {
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
func newTarget(name string, ok, measured bool, format string, args ...any) Target {
	t := Target{Name: name, Measured: fmt.Sprintf(format, args...), Status: notMeasured}
	if measured {
		t.Status = map[bool]string{true: "PASS", false: "FAIL"}[ok]
	}
	return t
}
