package whatif

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// stopText says in words why a measurement stopped, by measurement.Stop.
var stopText = map[string]string{
	stopTarget:    "once the reads in vain were enough for a stable figure (%d)",
	stopLookups:   "at the cap of %s lookups (-lookups)",
	stopTime:      "at the cap of %v (-lookuptime)",
	stopExhausted: "when no more absent keys could be derived from the source keys",
	stopNothing:   "as its first round met no table on the levels the lookups load",
}

// writeMeasured prints the current filters measured through Pebble beside
// plan.Fit's figure for them, and what the verdict makes of the difference.
func (r *Report) writeMeasured(b *strings.Builder) {
	m := r.plan.Measured
	if m == nil {
		b.WriteString("\nNot measured through Pebble: there are no absent probes to look up.\n")
		return
	}
	lookups := "db.Get"
	if m.UseL6 {
		lookups = "SeekPrefixGE on an iterator with IterOptions.UseL6Filters"
	}
	fmt.Fprintf(b, "\nMeasured through Pebble: the current filters, looked up as the plan's lookups are\n(%s), ", lookups)
	b.WriteString("with keys of the database's own key space, each absent: the probes' source keys\n")
	b.WriteString("with a byte appended (1, 2, ... a round each, shuffled). Not a bit flipped, as in the\n")
	b.WriteString("probes above: Pebble's bloom filter answers \"may contain\" more often for a key one bit\n")
	b.WriteString("from a present one. Pebble's filter counters (db.Metrics().Filter) count each filter that\n")
	b.WriteString("says \"may contain\", a data-block read in vain; each table without a filter Pebble reads\n")
	b.WriteString("adds one read where its range holds the key.\n\n")
	f := r.footing()
	if m.Lookups == 0 {
		b.WriteString("No absent lookup was counted.\n")
	} else {
		r.writeMeasuredTable(b, m, f)
	}
	r.writeMeasureNotes(b, m, f)
}

// writeMeasuredTable prints the current filters' reads in vain per absent
// lookup, measured and by plan.Fit's model, and the model's error.
func (r *Report) writeMeasuredTable(b *strings.Builder, m *measurement, f footing) {
	lo, hi := m.interval()
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "current filters\treads in vain per absent lookup\t95% interval\treads in vain\tlookups\t")
	fmt.Fprintf(tw, "measured (Pebble)\t%s\t%s to %s\t%s\t%s\t\n", fpText(m.perLookup()), fpText(lo), fpText(hi),
		num(uint64(m.reads())), num(uint64(m.Lookups)))
	model, errText, errRange := "not modelled", "", ""
	if r.currentKnown() {
		model = fpText(f.model)
		errText, errRange = errorText(f.model, m.perLookup(), lo, hi)
	}
	fmt.Fprintf(tw, "plan.Fit's model\t%s\t\t\t\t\n", model)
	if errText != "" {
		fmt.Fprintf(tw, "model/measured\t%s\t%s\t\t\t\n", errText, errRange)
	}
	tw.Flush()
}

// writeMeasureNotes prints how the measurement ran and stopped, and what the
// verdict makes of the model's error.
func (r *Report) writeMeasureNotes(b *strings.Builder, m *measurement, f footing) {
	why := stopText[m.Stop]
	switch m.Stop {
	case stopTarget:
		why = fmt.Sprintf(why, targetReads)
	case stopLookups:
		why = fmt.Sprintf(why, num(uint64(m.MaxLookups)))
	case stopTime:
		why = fmt.Sprintf(why, m.MaxTime)
	}
	fmt.Fprintf(b, "Filter misses %s, hits %s, reads of unfiltered tables %s;\nit stopped %s.\n",
		num(uint64(m.Misses)), num(uint64(m.Hits)), num(uint64(m.Unfiltered)), why)
	if m.Dropped > 0 {
		fmt.Fprintf(b, "%s lookups, in batches where a key was present (in the memtable, say), are not counted.\n", num(uint64(m.Dropped)))
	}
	if r.plan.Fit.Levels[0].Projected {
		b.WriteString("plan.Fit's model counts L0, empty now, as planned for the flushes to come; the lookups meet\n")
		b.WriteString("only the tables there are.\n")
	}
	switch f.kind {
	case confirmed:
		fmt.Fprintf(b, "The model's figure is within %gx of the measurement: its projections stand.\n", modelTolerance)
	case modelOff:
		fmt.Fprintf(b, "The model's figure is off by more than %gx: the verdict takes the plan's projection both as\n", modelTolerance)
		b.WriteString("modelled and scaled by the model's error, and the decision the larger of the two.\n")
	}
}

// errorText returns the model's error, model over measured, and its 95%
// interval from the measured one [lo, hi]; "" where nothing was measured.
func errorText(model, measured, lo, hi float64) (string, string) {
	switch {
	case measured == 0 && model < negligible:
		return "", ""
	case measured == 0:
		return "-", fmt.Sprintf("at least %s", errRatio(model/hi))
	case model < negligible:
		return "0x", ""
	case lo == 0:
		return errRatio(model / measured), fmt.Sprintf("at least %s", errRatio(model/hi))
	}
	return errRatio(model / measured), fmt.Sprintf("%s to %s", errRatio(model/hi), errRatio(model/lo))
}

// errRatio formats a ratio of two figures, such as the model's error.
func errRatio(x float64) string {
	switch {
	case x >= 0.1 && x < 10:
		return fmt.Sprintf("%.2fx", x)
	case x >= 10 && x < 1e4:
		return fmt.Sprintf("%.0fx", x)
	}
	return fmt.Sprintf("%.2gx", x)
}
