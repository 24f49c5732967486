// Package markdown writes the Markdown documents the benchmarks produce
// (REPORT.md): headings, tables, lists and links to plots drawn beside the
// document. A plot that cannot be drawn does not stop the document: its error
// is kept, for the document to list.
package markdown

import (
	"fmt"
	"strings"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/plot"
)

// Doc is a Markdown document being written: its text, the directory its
// plots go to, and the plots that could not be drawn. Write text with the
// strings.Builder methods or fmt.Fprintf. The zero value writes plots to the
// current directory; New names another. Not safe for concurrent use.
type Doc struct {
	strings.Builder
	dir      string
	plotErrs []string
}

// New returns an empty document whose plots go to dir.
func New(dir string) *Doc { return &Doc{dir: dir} }

// PlotErrs returns the plots that could not be drawn, each as "file: error".
func (d *Doc) PlotErrs() []string { return d.plotErrs }

// Plot draws curves into file, a PNG beside the document, and links it from
// the text with the figure's title; a plot that fails is left out and its
// error kept.
func (d *Doc) Plot(file string, f plot.Figure, cs []plot.Curve) {
	if err := f.Save(d.dir, file, cs); err != nil {
		d.plotErrs = append(d.plotErrs, file+": "+err.Error())
		return
	}
	fmt.Fprintf(d, "![%s](%s)\n\n", f.Title, file)
}

// Table writes a table: a header row, its rule, the rows, and a blank line.
func (d *Doc) Table(header []string, rows [][]string) {
	d.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		d.WriteString(" --- |")
	}
	d.WriteString("\n")
	for _, r := range rows {
		d.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	d.WriteString("\n")
}

// Section writes a second-level heading, and says so when the section was
// not measured in this run; it returns whether it was.
func (d *Doc) Section(title string, measured bool) bool {
	d.WriteString("## " + title + "\n\n")
	if !measured {
		d.WriteString("Not measured in this run.\n\n")
	}
	return measured
}

// List writes one bullet a line.
func (d *Doc) List(lines []string) {
	for _, l := range lines {
		d.WriteString("- " + l + "\n")
	}
}
