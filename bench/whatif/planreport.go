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

// writePlan prints the plan section: the plan, its filters level by level,
// the projected reads in vain against the current filters and bloom(10) on
// every level, and the Go lines that apply it.
func (r *Report) writePlan(b *strings.Builder) {
	pr := r.plan
	if pr == nil {
		return
	}
	lookups := "per absent Get (db.Get reads no L6 filter: L6 gets none)"
	if pr.UseL6 {
		lookups = "per absent lookup that reads L6 filters (IterOptions.UseL6Filters)"
	}
	fmt.Fprintf(b, "\nFilter plan: cuckoopolicy.PlanFor within %s of filters,\nfewest false-positive reads %s:\n\n    %s\n",
		formatSize(pr.Memory), lookups, pr.Plan)
	if r.probes > 0 {
		r.writePlanLevels(b)
		r.writePlanTotals(b)
	}
	b.WriteString("\nTo apply it (every level set; the readers of both filter families registered):\n\n")
	b.WriteString(indent(goLines(pr.Plan)))
	b.WriteString("\nThe plan fits the LSM as it is now: choose it again as the database grows.\n")
}

// writePlanLevels prints the plan's filters on each level that has tables.
func (r *Report) writePlanLevels(b *strings.Builder) {
	pj := &r.plan.Projections[0]
	b.WriteString("\n")
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
}

// writePlanTotals prints the projected reads in vain of the plan, the
// current filters and bloom(10) on every level, with their bytes.
func (r *Report) writePlanTotals(b *strings.Builder) {
	pr := r.plan
	b.WriteString("\nFalse-positive data-block reads per absent lookup (filter positives, and every table\n")
	b.WriteString("without a filter), on the absent probes above:\n\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "filters\tbytes\tper Get (L0-L5)\tplan/this\t"
	if pr.UseL6 {
		head += "per L6-filtered lookup (L0-L6)\tplan/this\t"
	}
	fmt.Fprintln(tw, head)
	rows := []struct {
		name  string
		j     int
		bytes float64
	}{
		{"plan", 0, 0},
		{"now", -1, 0},
		{"bloom(10) on every level", 1, 0},
	}
	for i := range rows {
		for li := range r.levels {
			if rows[i].j < 0 {
				rows[i].bytes += float64(r.levels[li].NowBytes)
			} else {
				rows[i].bytes += pr.Projections[rows[i].j].Levels[li].Bytes
			}
		}
	}
	for _, row := range rows {
		line := fmt.Sprintf("%s\t%s\t", row.name, num(uint64(row.bytes+0.5)))
		for _, last := range []int{numLevels - 2, numLevels - 1} {
			if last == numLevels-1 && !pr.UseL6 {
				break
			}
			v, plan := r.falseReads(row.j, last), r.falseReads(0, last)
			line += fmt.Sprintf("%.4f\t%s\t", v, times(plan, v, row.j == 0))
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if L6 := &r.levels[numLevels-1]; L6.Checks > 0 {
		fmt.Fprintf(b, "An absent Get also reads %.4f L6 blocks whatever the filters: db.Get reads no L6 filter.\n", r.perProbe(L6.Checks))
	}
	var entryBytes float64
	for li := range r.levels {
		L := &r.levels[li]
		if L.Keys > 0 {
			entryBytes += float64(L.Entries) * pr.Projections[0].Levels[li].Bytes / float64(L.Keys)
		}
	}
	fmt.Fprintf(b, "Bytes are the filters' on the current tables, built from their keys. PlanFor counts\n")
	fmt.Fprintf(b, "entries as keys: entries x the plan's bits per key / 8 = %s bytes, of %s.\n", num(uint64(entryBytes+0.5)), num(pr.Memory))
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

// times returns plan as a multiple of v: "" for the plan's own row, "-"
// where v is 0.
func times(plan, v float64, own bool) string {
	switch {
	case own:
		return ""
	case v == 0:
		return "-"
	}
	return fmt.Sprintf("%.3fx", plan/v)
}

// goLines returns Go source that applies p to a pebble.Options: its imports
// and two statements, gofmt'ed. A policy other than this module's, Pebble's
// bloom filter and no filter (which PlanFor never chooses) is written as
// nil with its name in a comment.
func goLines(p cuckoopolicy.Plan) string {
	var body strings.Builder
	useBloom := false
	body.WriteString("opts := &pebble.Options{}\ncuckoopolicy.ApplyPlan(opts, cuckoopolicy.Plan{\n")
	for l, fp := range p {
		lit, isBloom := goPolicy(fp)
		useBloom = useBloom || isBloom
		fmt.Fprintf(&body, "%s, // L%d\n", lit, l)
	}
	body.WriteString("})\n")
	imports := "import (\n\t\"github.com/cockroachdb/pebble/v2\"\n"
	if useBloom {
		imports += "\t\"github.com/cockroachdb/pebble/v2/bloom\"\n"
	}
	imports += "\n\t\"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy\"\n)\n"
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
