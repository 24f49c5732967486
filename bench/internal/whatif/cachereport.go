package whatif

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// cacheRow is one configuration of the block-cache section: its filter
// bytes and expected reads in vain by plan.Fit's model.
type cacheRow struct {
	name string
	plan.Estimate
}

// rows returns the configurations the section weighs: no filters,
// CockroachDB's, bloom(10) on every level, and the plan at the budget when
// there is one.
func (cr *cacheReport) rows() []cacheRow {
	rows := []cacheRow{
		{"none", plan.Estimate{FalsePositives: noFilters(&cr.Fit)}},
		{"bloom(10) on L0-L5, none on L6 (CockroachDB)", cr.Fit.Current},
		{"bloom(10) on every level", cr.Fit.Bloom10},
	}
	if cr.Budget > 0 {
		rows = append(rows, cacheRow{"the plan below", cr.Fit.Estimate})
	}
	return rows
}

// fits reports whether filters and indexes of those bytes fit the cache,
// and the bytes they leave for data blocks (0 when they do not fit).
func fits(cache, index, filters uint64) (bool, uint64) {
	if index+filters > cache {
		return false, 0
	}
	return true, cache - index - filters
}

// writeCache prints the block-cache section: the measured sizes, each
// configuration's filters and indexes against the cache, the rule, and the
// recommended budget and plan, or no L6 filter where the rule leaves none.
func (r *Report) writeCache(b *strings.Builder) {
	cr := r.cache
	if cr == nil {
		return
	}
	fmt.Fprintf(b, "\nBlock cache (-cache): %s, shared by filter, index and data blocks,\n", formatSize(cr.Cache))
	b.WriteString("for lookups that read L6 filters (SeekPrefixGE on an iterator with IterOptions.UseL6Filters;\n")
	b.WriteString("db.Get reads none).\n")
	fmt.Fprintf(b, "Measured by the tables' properties, each file once: index blocks %s", formatSize(cr.Index))
	if cr.Data > 0 {
		fmt.Fprintf(b, ",\n%s of the data blocks' %s on disk", percent(cr.Index, cr.Data), shortSize(cr.Data))
	}
	fmt.Fprintf(b, "; the current filters %s.\n", shortSize(cr.Filters))
	if cr.Fit.Bloom10.Bytes == 0 {
		b.WriteString("The tables hold no keys: there is nothing for filters to fit.\n")
		return
	}
	b.WriteString("Estimated by plan.Fit's model: each configuration's filter bytes on L0-L6, levels empty now\n")
	b.WriteString("included as planned for the keys they will hold, and its expected data-block reads in vain\n")
	b.WriteString("per absent lookup (filter false positives, and every probed table without a filter).\n\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "filters\tfilter bytes\twith indexes\tof the cache\tfits\tleft for data\treads in vain\t")
	for _, row := range cr.rows() {
		all := row.Bytes + cr.Index
		ok, left := fits(cr.Cache, cr.Index, row.Bytes)
		yes := "no"
		if ok {
			yes = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.name, num(row.Bytes), num(all),
			percent(all, cr.Cache), yes, num(left), fpText(row.FalsePositives))
	}
	tw.Flush()
	fmt.Fprintf(b, "\nRule: filters and indexes take at most half the cache (%s), data blocks the rest:\n", shortSize(cr.Cache/2))
	b.WriteString("every lookup touches filter and index blocks, so they stay resident, and present keys,\n")
	b.WriteString("which no filter saves, need their data blocks cached.\n")
	bigger := cacheFor(cr.Index, cr.Fit.Bloom10.Bytes)
	if cr.Budget == 0 {
		if cr.Index > cr.Cache {
			fmt.Fprintf(b, "Even the indexes (%s) do not fit the cache: an absent lookup reads index blocks from\n", shortSize(cr.Index))
			b.WriteString("disk beside L6's data block, and L6 filters would evict more.\n")
		} else {
			fmt.Fprintf(b, "The indexes take %s, %s of the cache: the rule leaves no bytes for filters.\n",
				shortSize(cr.Index), percent(cr.Index, cr.Cache))
		}
		b.WriteString("Recommended: no L6 filter (CockroachDB's configuration: bloom(10) on L0-L5, none on L6),\n")
		writeBigger(b, "and a larger cache: one of", bigger)
		b.WriteString("\nTo apply it (every level set; the readers of both filter families registered):\n\n")
		b.WriteString(indent(goLines(cockroach())))
		writeReserve(b)
		return
	}
	fmt.Fprintf(b, "Recommended budget: %s of filters, half the cache less the indexes.\n", formatSize(cr.Budget))
	fmt.Fprintf(b, "The plan plan.Fit gives at it for lookups that read L6 filters:\n\n    %s\n\n", cr.Fit.Plan)
	fmt.Fprintf(b, "It takes %s bytes by the model, with the indexes %s of the cache", num(cr.Fit.Bytes),
		percent(cr.Fit.Bytes+cr.Index, cr.Cache))
	if cr.Fit.Bytes < cr.Budget-cr.Budget/100 {
		b.WriteString(":\nFitPlan stops where a byte saves too few reads")
	}
	b.WriteString(".\n")
	if cr.Fit.Plan[numLevels-1] == nil {
		b.WriteString("At this budget the plan has no L6 filter: its bytes save more on the upper levels.\n")
		writeBigger(b, "A cache of", bigger)
	}
	b.WriteString("\nTo apply it (every level set; the readers of both filter families registered), and\n")
	b.WriteString("read with IterOptions.UseL6Filters:\n\n")
	b.WriteString(indent(goLines(cr.Fit.Plan)))
	writeReserve(b)
}

// percent returns part as a percentage of whole, to a tenth; "<0.1%" for a
// share that rounds to nothing.
func percent(part, whole uint64) string {
	v := 100 * float64(part) / float64(whole)
	if v > 0 && v < 0.05 {
		return "<0.1%"
	}
	return fmt.Sprintf("%.1f%%", v)
}

// writeBigger prints the cache whose budget is the bytes of bloom(10) on
// every level, in a sentence that starts with lead.
func writeBigger(b *strings.Builder, lead string, cache uint64) {
	fmt.Fprintf(b, "%s %s or more\n", lead, formatSize(cache))
	b.WriteString("(twice the indexes and bloom(10) on every level's filters, by the model) leaves L6-filtered\n")
	b.WriteString("lookups a budget of bloom(10)'s bytes.\n")
}

// writeReserve prints what -cache should leave out of the block cache.
func writeReserve(b *strings.Builder) {
	b.WriteString("\nPebble charges its memtables (Options.MemTableSize each) to the block cache too: give -cache\n")
	b.WriteString("the block cache's bytes less theirs.\n")
}
