package whatif

import (
	"fmt"
	"go/format"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// levelHits returns the checks of level li that read a data block under
// projection j of the plan section, or under the current filters for j < 0.
func (r *Report) levelHits(j, li int) int {
	if j < 0 {
		return r.levels[li].NowHits
	}
	return r.plan.Projections[j].Levels[li].Hits
}

// falseReads returns the data-block reads in vain per absent lookup on
// levels L0 to last under projection j of r.plan (-1: the current filters):
// filter positives, and every check of a table without a filter. last is 5
// for db.Get, which reads no L6 filter, and 6 for lookups that read L6
// filters (IterOptions.UseL6Filters). It is 0 without a plan section.
func (r *Report) falseReads(j, last int) float64 {
	if r.plan == nil {
		return 0
	}
	n := 0
	for li := 0; li <= last && li < numLevels; li++ {
		n += r.levelHits(j, li)
	}
	return r.perProbe(n)
}

// writePlan prints the plan section: the plan and its ceiling, its filters
// level by level, the plan beside the current filters, bloom(10) on every
// level and the best bloom-only plan at equal bytes, the current filters
// measured through Pebble, the Go lines that apply the plan, a one-line
// verdict and, last, the decision line.
func (r *Report) writePlan(b *strings.Builder) {
	pr := r.plan
	if pr == nil {
		b.WriteString("\nNo filter plan: the levels the lookups load hold no keys to plan for.\n")
		b.WriteString("\nDecision: stay with the current filters: there is no plan to switch to.\n")
		return
	}
	lookups := "per absent Get (db.Get reads no L6 filter: L6 gets none)"
	if pr.UseL6 {
		lookups = "per absent lookup that reads L6 filters (IterOptions.UseL6Filters)"
	}
	fmt.Fprintf(b, "\nFilter plan: plan.Fit within %s of the filters the lookups load", formatSize(pr.Memory))
	if pr.By != "" {
		fmt.Fprintf(b, ":\n%s.\n-memory SIZE sets another ceiling", pr.By)
	}
	b.WriteString(".\n")
	fmt.Fprintf(b, "Fewest false-positive reads %s:\n\n    %s\n", lookups, pr.Plan)
	if pr.Fit.BelowLeast {
		b.WriteString("The ceiling is below the least filters a plan can take (4 bits per key on every level).\n")
	}
	if r.probes > 0 {
		r.writePlanLevels(b)
	}
	r.writeEqualBytes(b)
	r.writeMeasured(b)
	b.WriteString("\nTo apply it (every level set; the readers of both filter families registered):\n\n")
	b.WriteString(indent(goLines(pr.Plan)))
	b.WriteString("\nThe plan fits the LSM as it is now: choose it again as the database grows.\n")
	b.WriteString("\n" + r.verdict() + "\n" + r.decision() + "\n")
}

// writePlanLevels prints the plan's filters on each level that has tables,
// measured, and the levels plan.Fit planned for as they will fill.
func (r *Report) writePlanLevels(b *strings.Builder) {
	pj := &r.plan.Projections[0]
	b.WriteString("\nMeasured on the current tables (each table's filter built from its keys, the absent probes above):\n\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "level\tfilter\tfilter keys\tbytes\tbits/key\tfpr %\t±\treads/absent lookup\tnow\t")
	for li := range r.levels {
		L := &r.levels[li]
		if L.Tables == 0 {
			continue
		}
		c := pj.Levels[li]
		fpr, mg := "-", ""
		if L.Checks > 0 {
			fpr, mg = fmt.Sprintf("%.3f", 100*ratio(c.Hits, L.Checks)), margin(c.Hits, L.Checks)
		}
		fmt.Fprintf(tw, "L%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.4f\t%.4f\t\n", li, c.Name, num(L.Keys),
			num(uint64(c.Bytes+0.5)), bitsPerKey(c.Bytes, L.Keys), fpr, mg, r.perProbe(c.Hits), r.perProbe(L.NowHits))
	}
	tw.Flush()
	if !r.plan.UseL6 && r.levels[numLevels-1].Tables > 0 {
		b.WriteString("(L6: db.Get reads no L6 filter; its reads are those of prefix reads with UseL6Filters.)\n")
	}
	var empty []string
	for l, s := range r.plan.Fit.Levels {
		if s.Projected {
			empty = append(empty, fmt.Sprintf("L%d (%s)", l, keysText(s.Keys)))
		}
	}
	if len(empty) > 0 {
		fmt.Fprintf(b, "Empty now, planned for the keys they will hold: %s.\n", strings.Join(empty, ", "))
	}
}

// keysText returns "1 key" or "N keys".
func keysText(n uint64) string {
	if n == 1 {
		return "1 key"
	}
	return num(n) + " keys"
}

// writeEqualBytes prints the plan, the current filters, bloom(10) on every
// level and the best bloom-only plan: their bytes and expected false
// positives by plan.Fit's model, the plan's as a multiple of each, and the
// reads in vain measured on the absent probes.
func (r *Report) writeEqualBytes(b *strings.Builder) {
	pr := r.plan
	fit, last := &pr.Fit, lastLevel(pr.UseL6)
	fmt.Fprintf(b, "\nAt equal bytes, by plan.Fit's model: bytes count the filters the lookups load (L0-L%d),\n", last)
	b.WriteString("levels empty now included as planned for the keys they will hold; false positives are the\n")
	b.WriteString("expected data-block reads in vain per absent lookup; plan/this is the plan's as a multiple.\n")
	if r.probes > 0 {
		fmt.Fprintf(b, "Measured: the reads in vain on L0-L%d of the absent probes, filters built on the current tables.\n", last)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "filters\tbytes\tfalse positives\tplan/this\tmeasured\t")
	rows := []struct {
		name string
		e    plan.Estimate
		j    int // projection; -1: the current filters
	}{
		{"plan", fit.Estimate, 0},
		{"current filters", fit.Current, -1},
		{"bloom(10) on every level", fit.Bloom10, 1},
		{"best bloom-only plan", fit.BloomOnly, 2},
	}
	for i, row := range rows {
		bytes, fp, times := num(row.e.Bytes), fpText(row.e.FalsePositives), ""
		if i > 0 {
			times = ratioText(fit.FalsePositives, row.e.FalsePositives)
		}
		if row.j < 0 && !r.currentKnown() {
			bytes, fp, times = num(pr.TableBytes), "not modelled", ""
		}
		measured := ""
		if r.probes > 0 {
			measured = fmt.Sprintf("%.4f", r.falseReads(row.j, last))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", row.name, bytes, fp, times, measured)
	}
	tw.Flush()
	fmt.Fprintf(b, "The best bloom-only plan: %s\n", fit.BloomOnly.Plan)
	if L6 := &r.levels[numLevels-1]; !pr.UseL6 && L6.Checks > 0 {
		fmt.Fprintf(b, "An absent Get also reads %.4f L6 blocks whatever the filters: db.Get reads no L6 filter.\n", r.perProbe(L6.Checks))
	}
}

// currentKnown reports whether plan.Fit's model knows the current filters:
// it costs them, or there are none on the levels the lookups load.
func (r *Report) currentKnown() bool {
	return r.plan.Fit.Current.Bytes > 0 || r.plan.TableBytes == 0
}

// fpText formats expected false-positive reads per absent lookup.
func fpText(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// ratioText returns plan as a multiple of v, "-" where either is
// negligible.
func ratioText(plan, v float64) string {
	if plan < negligible || v < negligible {
		return "-"
	}
	x := plan / v
	if x >= 0.1 {
		return fmt.Sprintf("%.2fx", x)
	}
	return strconv.FormatFloat(x, 'g', 2, 64) + "x"
}

// shortSize is formatSize without the exact byte count.
func shortSize(n uint64) string {
	s, _, _ := strings.Cut(formatSize(n), " (")
	return s
}

// indent returns the lines of s indented by four spaces, blank lines
// left blank.
func indent(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if line != "" {
			b.WriteString("    " + line)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// goLines returns Go source that applies p to a pebble.Options: its imports
// and two statements, gofmt'ed. A policy other than this module's, Pebble's
// bloom filter and no filter (which plan.Fit never chooses) is written as
// nil with its name in a comment.
func goLines(p plan.Plan) string {
	var body strings.Builder
	useBloom, useCuckoo := false, false
	body.WriteString("opts := &pebble.Options{}\nplan.Apply(opts, plan.Plan{\n")
	for l, fp := range p {
		lit, isBloom := goPolicy(fp)
		useBloom = useBloom || isBloom
		useCuckoo = useCuckoo || strings.HasPrefix(lit, "cuckoopolicy.")
		fmt.Fprintf(&body, "%s, // L%d\n", lit, l)
	}
	body.WriteString("})\n")
	imports := "import (\n\t\"github.com/cockroachdb/pebble/v2\"\n"
	if useBloom {
		imports += "\t\"github.com/cockroachdb/pebble/v2/bloom\"\n"
	}
	imports += "\n"
	if useCuckoo {
		imports += "\t\"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy\"\n"
	}
	imports += "\t\"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan\"\n)\n"
	src := body.String()
	if f, err := format.Source([]byte(src)); err == nil {
		src = string(f)
	}
	return imports + "\n" + strings.TrimRight(src, "\n")
}

// goPolicy returns the Go expression of a plan entry, and whether it uses
// package bloom.
func goPolicy(fp pebble.FilterPolicy) (string, bool) {
	switch v := fp.(type) {
	case nil:
		return "nil", false
	case cuckoopolicy.FilterPolicy:
		return fmt.Sprintf("cuckoopolicy.FilterPolicy(%d)", int(v)), false
	case bloom.FilterPolicy:
		return fmt.Sprintf("bloom.FilterPolicy(%d)", int(v)), true
	case cuckoopolicy.Policy:
		var fields []string
		if v.FingerprintBits != 0 {
			fields = append(fields, fmt.Sprintf("FingerprintBits: %d", v.FingerprintBits))
		}
		if v.SemiSort {
			fields = append(fields, "SemiSort: true")
		}
		if v.LoadFactor != 0 {
			fields = append(fields, "LoadFactor: "+strconv.FormatFloat(v.LoadFactor, 'g', -1, 64))
		}
		return "cuckoopolicy.Policy{" + strings.Join(fields, ", ") + "}", false
	}
	if fp == pebble.NoFilterPolicy {
		return "nil", false
	}
	return fmt.Sprintf("nil /* %s */", strings.ReplaceAll(fp.Name(), "*/", "* /")), false
}
