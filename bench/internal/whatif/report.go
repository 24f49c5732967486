package whatif

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// FPR returns the candidate's false-positive rate on the level's checks.
func (l *levelRow) FPR(i int) float64 { return ratio(l.Candidates[i].Hits, l.Checks) }

// NowFPR returns the current filters' false-positive rate on the checks of
// tables that have a filter whatif can probe.
func (l *levelRow) NowFPR() float64 { return ratio(l.NowFalsePos, l.NowFiltered) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// baseHits returns the level's data-block reads under the baseline filters.
func (r *Report) baseHits(L *levelRow) int {
	switch r.baseline {
	case "now":
		return L.NowHits
	case "none":
		return L.Checks
	}
	for _, c := range L.Candidates {
		if c.Name == r.baseline {
			return c.Hits
		}
	}
	return L.Checks
}

// perProbe returns n data-block reads over all probes, per absent read.
func (r *Report) perProbe(n int) float64 { return ratio(n, r.probes) }

// reads returns the data-block reads per absent read that candidate i
// (-1: the current filters) costs on levels 0 to last, with db.Get's rule
// that L6 filters are not read when getL6 is true.
func (r *Report) reads(i int, last int, getL6 bool) float64 {
	n := 0
	for li := 0; li <= last && li < numLevels; li++ {
		L := &r.levels[li]
		switch {
		case li == numLevels-1 && getL6:
			n += L.Checks
		case i < 0:
			n += L.NowHits
		default:
			n += L.Candidates[i].Hits
		}
	}
	return r.perProbe(n)
}

// baselineReads is reads for the baseline filters.
func (r *Report) baselineReads(last int, getL6 bool) float64 {
	n := 0
	for li := 0; li <= last && li < numLevels; li++ {
		L := &r.levels[li]
		if li == numLevels-1 && getL6 {
			n += L.Checks
		} else {
			n += r.baseHits(L)
		}
	}
	return r.perProbe(n)
}

// Write prints the report as plain text.
func (r *Report) Write(w io.Writer) error {
	b := &strings.Builder{}
	r.writeHeader(b)
	r.writeNow(b)
	r.writeMethod(b)
	if r.probes == 0 {
		b.WriteString("\nNo absent probes: nothing to measure.\n")
		r.writeCache(b)
		r.writePlan(b)
		_, err := io.WriteString(w, b.String())
		return err
	}
	base := r.baselineName()
	if r.baseline != "now" {
		fmt.Fprintf(b, "No table has a filter whatif can probe: savings are against %s.\n", base)
	}
	for li := range r.levels {
		r.writeLevel(b, li)
	}
	r.writeTotals(b, base)
	r.writeCache(b)
	r.writePlan(b)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHeader prints what database was read and what its filter keys are.
func (r *Report) writeHeader(b *strings.Builder) {
	fmt.Fprintf(b, "whatif: %s (opened read-only), comparer %s\n", r.dir, r.comparer)
	if r.comparer == "leveldb.BytewiseComparator" {
		b.WriteString("Filter keys are whole user keys.\n")
	} else {
		b.WriteString("Filter keys are Comparer.Split prefixes, consecutive equal prefixes once.\n")
	}
	b.WriteString("Keys in the memtable (replayed from the WAL) are not counted: they have no filter.\n")
	if r.remoteTables > 0 {
		fmt.Fprintf(b, "%d tables on shared or external storage were not read.\n", r.remoteTables)
	}
}

// writeNow prints the table of the database's levels and current filters.
func (r *Report) writeNow(b *strings.Builder) {
	b.WriteString("\nThe database now\n\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "level\ttables\tentries\tfilter keys\tfilter bytes\tbits/key\tfilter policy (tables)\t")
	var tt int
	var te, tk, tb uint64
	for li := range r.levels {
		L := &r.levels[li]
		if L.Tables == 0 {
			continue
		}
		tt += L.Tables
		te += L.Entries
		tk += L.Keys
		tb += L.NowBytes
		var pol []string
		for _, n := range L.Now {
			name := n.Policy
			if name == "" {
				name = "none"
			}
			pol = append(pol, fmt.Sprintf("%s (%d)", name, n.Tables))
		}
		fmt.Fprintf(tw, "L%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", li, L.Tables, num(L.Entries), num(L.Keys),
			num(L.NowBytes), bitsPerKey(float64(L.NowBytes), L.Keys), strings.Join(pol, ", "))
	}
	fmt.Fprintf(tw, "total\t%d\t%s\t%s\t%s\t%s\t\t\n", tt, num(te), num(tk), num(tb), bitsPerKey(float64(tb), tk))
	tw.Flush()
	if len(r.unreadable) > 0 {
		fmt.Fprintf(b, "whatif cannot probe filters of %s: their tables count as having no filter.\n", strings.Join(r.unreadable, ", "))
	}
}

// writeMethod prints how the absent probes were made and the read model.
func (r *Report) writeMethod(b *strings.Builder) {
	fmt.Fprintf(b, "\nAbsent probes: %s distinct keys in no table, made from %s keys of the database picked\n", num(uint64(r.probes)), num(uint64(r.sources)))
	fmt.Fprintf(b, "evenly over all its filter keys: %s with one bit of the last byte flipped (the lowest bit\n", num(uint64(r.byFlip)))
	fmt.Fprintf(b, "that gives a key in no table), %s with a 0x00 byte appended, %s with neither.\n", num(uint64(r.byAppend)), num(uint64(r.noProbe)))
	if r.comparer != "leveldb.BytewiseComparator" {
		b.WriteString("The byte altered is the last one before the key's sentinel.\n")
	}
	b.WriteString("Read model: a point read of an absent key probes the filter of every L0 table whose\n")
	b.WriteString("key range holds the key and of the one table per level L1-L6 that does; each filter\n")
	b.WriteString("positive, and each table without a filter, costs one data-block read.\n")
	b.WriteString("± is two standard errors of the false-positive rate, in percentage points.\n")
	if r.sampled {
		b.WriteString("Candidates were built from a sample of each large table's keys (-sample); their bytes\n")
		b.WriteString("are scaled up to all its keys.\n")
	}
}

// baselineName returns the baseline filters in words.
func (r *Report) baselineName() string {
	switch r.baseline {
	case "now":
		return "the current filters"
	case "none":
		return "no filters"
	}
	return r.baseline
}

// writeLevel prints level li's current and candidate filters, if it has
// tables.
func (r *Report) writeLevel(b *strings.Builder, li int) {
	L := &r.levels[li]
	if L.Tables == 0 {
		return
	}
	fmt.Fprintf(b, "\nL%d: %s, %s filter keys, %s filter probes by the absent keys\n",
		li, plural(L.Tables, "table"), num(L.Keys), num(uint64(L.Checks)))
	if li == numLevels-1 {
		b.WriteString("(db.Get does not read L6 filters: these reads and savings are those of prefix reads.)\n")
	}
	if L.Checks == 0 {
		return
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "filter\tfpr %\t±\tbytes\tbits/key\treads/absent read\tsaved\t")
	nowFPR, nowErr := "-", ""
	if L.NowFiltered > 0 {
		nowFPR, nowErr = fmt.Sprintf("%.3f", 100*L.NowFPR()), margin(L.NowFalsePos, L.NowFiltered)
	}
	fmt.Fprintf(tw, "now\t%s\t%s\t%s\t%s\t%.4f\t\t\n", nowFPR, nowErr, num(L.NowBytes),
		bitsPerKey(float64(L.NowBytes), L.Keys), r.perProbe(L.NowHits))
	bh := r.baseHits(L)
	for i, c := range L.Candidates {
		fmt.Fprintf(tw, "%s\t%.3f\t%s\t%s\t%s\t%.4f\t%+.4f\t\n", c.Name, 100*L.FPR(i), margin(c.Hits, L.Checks),
			num(uint64(c.Bytes+0.5)), bitsPerKey(c.Bytes, L.Keys), r.perProbe(c.Hits), r.perProbe(bh-c.Hits))
	}
	tw.Flush()
}

// writeTotals prints the reads and bytes of each filter over all levels,
// savings against base.
func (r *Report) writeTotals(b *strings.Builder, base string) {
	fmt.Fprintf(b, "\nData-block reads per absent read, all levels together; saved is against %s.\n", base)
	b.WriteString("Get: L0-L5 filters, plus one L6 block wherever an L6 table holds the key (db.Get never\n")
	b.WriteString("reads L6 filters). Prefix read: an iterator with UseL6Filters, L0-L6 filters.\n\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "filter\tGet reads\tsaved\tprefix reads\tsaved\tbytes L0-L5\tbytes L0-L6\t")
	baseGet, basePrefix := r.baselineReads(numLevels-1, true), r.baselineReads(numLevels-1, false)
	var nb5, nb6 uint64
	for li := range r.levels {
		if li < numLevels-1 {
			nb5 += r.levels[li].NowBytes
		}
		nb6 += r.levels[li].NowBytes
	}
	fmt.Fprintf(tw, "now\t%.4f\t\t%.4f\t\t%s\t%s\t\n", r.reads(-1, numLevels-1, true), r.reads(-1, numLevels-1, false), num(nb5), num(nb6))
	for i, name := range r.candidates {
		var b5, b6 float64
		for li := range r.levels {
			if li < numLevels-1 {
				b5 += r.levels[li].Candidates[i].Bytes
			}
			b6 += r.levels[li].Candidates[i].Bytes
		}
		g, p := r.reads(i, numLevels-1, true), r.reads(i, numLevels-1, false)
		fmt.Fprintf(tw, "%s\t%.4f\t%+.4f\t%.4f\t%+.4f\t%s\t%s\t\n", name, g, baseGet-g, p, basePrefix-p,
			num(uint64(b5+0.5)), num(uint64(b6+0.5)))
	}
	tw.Flush()
}

// margin returns two standard errors of the rate k/n, in percentage points;
// a rate of zero uses 1/n, so that it does not read as exact.
func margin(k, n int) string {
	if n == 0 {
		return ""
	}
	p := max(float64(k), 1) / float64(n)
	return fmt.Sprintf("%.3f", 200*math.Sqrt(p*(1-p)/float64(n)))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func bitsPerKey(bytes float64, keys uint64) string {
	if keys == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", 8*bytes/float64(keys))
}

// num formats n with thousands separators.
func num(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}
