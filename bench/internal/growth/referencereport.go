package growth

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/markdown"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// The targets for a live plan at its default (relative) budget,
// against the reference it replaces and the plain swap.
const (
	targetSettledBytes = 1.05 // L0-L5 filter bytes over the reference's, settled
	targetSampledBytes = 1.5  // the same, at most, sampled while writing
	targetFPReference  = 0.70 // false-positive reads over the reference's
	targetFPSwap       = 1.05 // false-positive reads over the swap's
)

// ReferenceReport is RunReference's result. Its arrays are indexed in the
// databases' report order: the reference, the swap, the live plan at
// plan.DefaultRefitInterval, the live plan at Config.RefitInterval.
type ReferenceReport struct {
	Config    Config // with defaults filled in
	Names     [numStores]string
	Intervals [2]time.Duration // the live plans' least times between refits
	// StartErrors are the live plans' first fits' errors, on the empty
	// databases ("" for none); a plan runs on after one.
	StartErrors [2]string
	Samples     []Sample // one after each batch, in order
	Checkpoints []ReferenceCheckpoint
	Verified    [numStores]Verified
	// Unsettled lists the databases whose compactions had not settled
	// within Config.Settle when a checkpoint was taken.
	Unsettled []string
}

// Sample is the databases' L0-L5 filter bytes while writing, each taken
// just after its batch that brought it to Keys keys committed.
type Sample struct {
	Keys  int
	Bytes [numStores]uint64
}

// ReferenceCheckpoint is every database measured, settled, at one size.
type ReferenceCheckpoint struct {
	Growth int // keys over the start keys: 1, 2, 4, ...
	Keys   int // keys written so far
	Rows   [numStores]Row
	Live   [2]plan.Status // the live plans', once the databases settled
}

// absentFound is how many absent keys database i returned, over all
// checkpoints.
func (r *ReferenceReport) absentFound(i int) int {
	n := 0
	for _, cp := range r.Checkpoints {
		n += cp.Rows[i].Absent.Found
	}
	return n
}

// Markdown writes the report as a Markdown document.
func (r *ReferenceReport) Markdown(w io.Writer) error {
	d := markdown.New("")
	r.writeHeader(d)
	if len(r.Checkpoints) > 0 {
		r.writeRatios(d)
	}
	if len(r.Samples) > 0 {
		r.writeSampled(d)
	}
	for _, cp := range r.Checkpoints {
		r.writeSettled(d, cp)
	}
	r.writeSamples(d)
	r.writeReadBack(d)
	_, err := io.WriteString(w, d.String())
	return err
}

func (r *ReferenceReport) writeHeader(d *markdown.Doc) {
	c := r.Config
	fmt.Fprintf(d, "# Growth scenario: live plans against their reference\n\n")
	fmt.Fprintf(d, "One stream of random %d-byte keys with %d-byte values written into four databases as a client writes: "+
		"batches of %d keys committed (no WAL, no sync), no explicit flush, automatic compactions on; %d keys (the start, 1x), "+
		"then doubling to %dx (%d keys). At each doubling: flush, compactions settled, then absent Gets. "+
		"MemTableSize %d, LBaseMaxBytes %d, TargetFileSizes[0] %d. Seed %d.\n\n",
		16, c.ValueSize, c.Batch, c.Keys, 1<<c.Doublings, c.Keys<<c.Doublings, c.MemTableSize, c.LBaseMaxBytes, c.TargetFileSize, c.Seed)
	if c.Command != "" {
		fmt.Fprintf(d, "Command: `%s`\n\n", c.Command)
	}
	if c.Smoke {
		d.WriteString("Smoke run: too small to judge the live plans by; figures only, no verdicts.\n\n")
	}
	d.List([]string{
		r.Names[reference] + ": cuckoopolicy.Apply(opts, bloom.FilterPolicy(10)), then opts.Levels[6].FilterPolicy = pebble.NoFilterPolicy",
		r.Names[swap] + ": the same with cuckoopolicy.FilterPolicy(10)",
		fmt.Sprintf("%s, %s: the reference's levels set on the options, then plan.NewLive(plan.Config{}, interval) (the default, relative "+
			"budget), its Apply, pebble.Open, Start, and Close through the DB Start returns; nothing refits them but themselves",
			r.Names[liveDefault], r.Names[liveFast]),
		"bytes: L0-L5 filter bytes (cuckoopolicy.FilterUsage), the filters an absent Get loads",
		"FP reads: data blocks read by absent Gets, filter misses counted by Pebble (db.Metrics().Filter) plus probes of L0-L5 " +
			"tables without a filter; per Get, and per filter check (filter hits and misses, and probes of tables without a filter), " +
			"as the databases' shapes differ with compaction timing",
		fmt.Sprintf("absent Gets: %d at a time until a database's FP reads reach %d, at most %d Gets", c.Absent, c.FalsePositives, c.MaxAbsent),
		"the reference's bytes on its own tables: what bloom(10)'s filter blocks, built by Pebble's writer, take for each L0-L5 table's entries " +
			"(every key is written once) on the database measured: the target's bytes, as the databases' shapes differ with compaction timing; " +
			"the bytes of the reference's own database and bits per entry beside it",
		"bits per entry: L0-L5 filter bits over L0-L5 entries",
		"± is two standard errors, FP read counts taken as Poisson",
		fmt.Sprintf("the issue's targets for a live plan: bytes <= %.2fx the reference's settled and <= %.2fx sampled while writing "+
			"(the largest ratio over the samples from 1x to %dx); FP reads <= %.2fx the reference's and <= %.2fx the swap's",
			targetSettledBytes, targetSampledBytes, 1<<c.Doublings, targetFPReference, targetFPSwap),
	})
	d.WriteString("\n")
	for i, e := range r.StartErrors {
		if e != "" {
			fmt.Fprintf(d, "%s: Start's first fit on the empty database failed (the plan ran on): %s.\n\n", r.Names[liveDefault+i], e)
		}
	}
	if len(r.Unsettled) > 0 {
		fmt.Fprintf(d, "Compactions had not settled for: %s.\n\n", strings.Join(r.Unsettled, "; "))
	}
}

// writeRatios is the settled figures the targets are judged on, every
// doubling and both live plans, with the swap beside the reference as a
// control.
func (r *ReferenceReport) writeRatios(d *markdown.Doc) {
	d.Section("Settled, at each doubling: ratios and targets", true)
	var rows [][]string
	for _, cp := range r.Checkpoints {
		ref, sw := cp.Rows[reference], cp.Rows[swap]
		for i := swap; i < numStores; i++ {
			row := cp.Rows[i]
			cells := []string{fmt.Sprintf("%dx", cp.Growth), r.Names[i],
				ratio(float64(row.FilterBytes), float64(row.ReferenceBytes)),
				ratio(float64(row.FilterBytes), float64(ref.FilterBytes)), ratio(upperBitsPerEntry(row), upperBitsPerEntry(ref)),
				fpRatio(row.Absent, ref.Absent, Absent.PerGet), fpRatio(row.Absent, ref.Absent, Absent.PerProbe), "-", "-"}
			if i != swap {
				cells[2] = r.judge(cells[2], float64(row.FilterBytes), float64(row.ReferenceBytes), targetSettledBytes)
				cells[5] = r.judge(cells[5], row.Absent.PerGet(), ref.Absent.PerGet(), targetFPReference)
				cells[6] = r.judge(cells[6], row.Absent.PerProbe(), ref.Absent.PerProbe(), targetFPReference)
				cells[7] = r.judge(fpRatio(row.Absent, sw.Absent, Absent.PerGet), row.Absent.PerGet(), sw.Absent.PerGet(), targetFPSwap)
				cells[8] = r.judge(fpRatio(row.Absent, sw.Absent, Absent.PerProbe), row.Absent.PerProbe(), sw.Absent.PerProbe(), targetFPSwap)
			}
			rows = append(rows, cells)
		}
	}
	d.Table([]string{"growth", "database", fmt.Sprintf("bytes / reference's on its own tables (<= %.2f)", targetSettledBytes),
		"bytes / reference database's", "bits per entry / reference database's",
		fmt.Sprintf("FP reads per Get / reference (<= %.2f)", targetFPReference),
		fmt.Sprintf("FP reads per check / reference (<= %.2f)", targetFPReference),
		fmt.Sprintf("FP reads per Get / swap (<= %.2f)", targetFPSwap),
		fmt.Sprintf("FP reads per check / swap (<= %.2f)", targetFPSwap)}, rows)
	var short []string
	for _, cp := range r.Checkpoints {
		for i, row := range cp.Rows {
			if row.Absent.Reads() < int64(r.Config.FalsePositives) {
				short = append(short, fmt.Sprintf("%s at %dx (%d in %d Gets)", r.Names[i], cp.Growth, row.Absent.Reads(), row.Absent.Gets))
			}
		}
	}
	if len(short) > 0 {
		fmt.Fprintf(d, "Fewer than %d FP reads within %d absent Gets: %s.\n\n", r.Config.FalsePositives, r.Config.MaxAbsent, strings.Join(short, "; "))
	}
}

// upperEntries is row's entries on L0-L5.
func upperEntries(row Row) uint64 {
	var n uint64
	for l := range getLevels {
		n += row.LevelEntries[l]
	}
	return n
}

// upperBitsPerEntry is row's filter bits per entry on L0-L5.
func upperBitsPerEntry(row Row) float64 {
	var b uint64
	for l := range getLevels {
		b += row.LevelFilterBytes[l]
	}
	if n := upperEntries(row); n > 0 {
		return 8 * float64(b) / float64(n)
	}
	return 0
}

// judge is cell with the verdict on a/b against target, none in a smoke
// run or where b is 0.
func (r *ReferenceReport) judge(cell string, a, b, target float64) string {
	if r.Config.Smoke || b == 0 {
		return cell
	}
	if a/b <= target {
		return cell + " met"
	}
	return cell + " **not met**"
}

// fpRatio is a's FP reads over b's, each normalized by per, with two
// standard errors taking the counts as Poisson.
func fpRatio(a, b Absent, per func(Absent) float64) string {
	if per(b) == 0 || a.Reads() == 0 {
		return ratio(per(a), per(b))
	}
	q := per(a) / per(b)
	return fmt.Sprintf("%.3f ±%.3f", q, 2*q*math.Sqrt(1/float64(a.Reads())+1/float64(b.Reads())))
}

// writeSampled gives, phase by phase, the largest and the mean ratio of
// each database's bytes to the reference's over the samples.
func (r *ReferenceReport) writeSampled(d *markdown.Doc) {
	d.Section("Sampled while writing: bytes over the reference's", true)
	c := r.Config
	type phase struct {
		name   string
		lo, hi int // keys, lo excluded
		judged bool
	}
	phases := []phase{{"0 to 1x", 0, c.Keys, false}}
	for k := 1; k <= c.Doublings; k++ {
		phases = append(phases, phase{fmt.Sprintf("%dx to %dx", 1<<(k-1), 1<<k), c.Keys << (k - 1), c.Keys << k, false})
	}
	phases = append(phases, phase{fmt.Sprintf("**1x to %dx**", 1<<c.Doublings), c.Keys, c.Keys << c.Doublings, true})
	header := []string{"keys written", "samples"}
	for i := swap; i < numStores; i++ {
		header = append(header, r.Names[i]+": largest", "mean")
	}
	var rows [][]string
	for _, ph := range phases {
		cells := []string{ph.name, ""}
		for i := swap; i < numStores; i++ {
			s := r.sampleRatios(i, ph.lo, ph.hi)
			cells[1] = strconv.Itoa(s.n)
			if s.n == 0 {
				cells = append(cells, "-", "-")
				continue
			}
			top := fmt.Sprintf("%.3f at %d keys", s.max, s.at)
			if ph.judged && i != swap {
				top = r.judge(top, s.max, 1, targetSampledBytes)
			}
			cells = append(cells, top, fmt.Sprintf("%.3f", s.mean))
		}
		rows = append(rows, cells)
	}
	d.Table(header, rows)
	fmt.Fprintf(d, "Each database is sampled just after its batch committed; its flush is then still to come. "+
		"The swap's column shows how far the timing alone moves the ratio. The target is judged on 1x to %dx (<= %.2f).\n\n",
		1<<c.Doublings, targetSampledBytes)
	for i := swap; i < numStores; i++ {
		if s := r.sampleRatios(i, 0, c.Keys<<c.Doublings); s.unbounded > 0 {
			fmt.Fprintf(d, "%s had filter bytes where the reference had none in %d of the samples (left out above).\n\n", r.Names[i], s.unbounded)
		}
	}
}

// sampled is the ratios of one database's bytes to the reference's over
// some samples.
type sampled struct {
	n         int     // samples where the reference had filter bytes
	max, mean float64 // over those
	at        int     // the keys at the largest
	unbounded int     // samples where only this database had filter bytes
}

// sampleRatios is database i's ratios over the samples with keys in
// (lo, hi].
func (r *ReferenceReport) sampleRatios(i, lo, hi int) sampled {
	var s sampled
	for _, smp := range r.Samples {
		if smp.Keys <= lo || smp.Keys > hi {
			continue
		}
		ref := smp.Bytes[reference]
		if ref == 0 {
			if smp.Bytes[i] > 0 {
				s.unbounded++
			}
			continue
		}
		q := float64(smp.Bytes[i]) / float64(ref)
		if s.n == 0 || q > s.max {
			s.max, s.at = q, smp.Keys
		}
		s.mean += q
		s.n++
	}
	if s.n > 0 {
		s.mean /= float64(s.n)
	}
	return s
}

// writeSettled is one checkpoint's databases and the live plans' status.
func (r *ReferenceReport) writeSettled(d *markdown.Doc, cp ReferenceCheckpoint) {
	fmt.Fprintf(d, "## %dx: %d keys, settled\n\n", cp.Growth, cp.Keys)
	var rows [][]string
	for i, row := range cp.Rows {
		a := row.Absent
		rows = append(rows, []string{
			r.Names[i], strconv.FormatUint(row.FilterBytes, 10), strconv.FormatUint(upperEntries(row), 10), strconv.Itoa(a.Gets), strconv.FormatInt(a.Reads(), 10),
			fmt.Sprintf("%.5f", a.PerGet()), strconv.FormatInt(a.Probes(), 10), fmt.Sprintf("%.5f", a.PerProbe()),
			levels(row.Tables), bitsPerEntry(row),
		})
	}
	d.Table([]string{"database", "L0-L5 filter bytes", "L0-L5 entries", "absent Gets", "FP reads", "FP reads/Get", "filter checks",
		"FP reads/check", "tables L0..L6", "filter bits/entry L0..L5"}, rows)
	var lines []string
	for i, st := range cp.Live {
		line := fmt.Sprintf("%s: %d refits (the last took %v); budget %d bytes, %.2f bits/key; the tables' L0-L5 filters %s x the budget; "+
			"plan %s. By the model: the plan %d bytes, %.5f FP reads/Get; the reference %d bytes, %.5f; the filters the tables carry %d bytes, %.5f",
			r.Names[liveDefault+i], st.Refits, st.FitTime.Round(time.Millisecond), st.Budget, st.BudgetBitsPerKey,
			ratio(float64(cp.Rows[liveDefault+i].FilterBytes), float64(st.Budget)), st.Plan, st.Bytes, st.FalsePositives,
			st.Reference.Bytes, st.Reference.FalsePositives, st.Current.Bytes, st.Current.FalsePositives)
		if st.FitError != nil {
			line += "; the last fit failed: " + st.FitError.Error()
		}
		lines = append(lines, line)
	}
	for i, row := range cp.Rows {
		lines = append(lines, fmt.Sprintf("%s writes %s", r.Names[i], row.Plan))
	}
	d.List(lines)
	d.WriteString("\n")
}

// writeSamples lists every sample.
func (r *ReferenceReport) writeSamples(d *markdown.Doc) {
	if !d.Section("Samples while writing: L0-L5 filter bytes", len(r.Samples) > 0) {
		return
	}
	header := []string{"keys"}
	for i := range numStores {
		header = append(header, r.Names[i])
	}
	header = append(header, r.Names[liveDefault]+" / reference", r.Names[liveFast]+" / reference")
	var rows [][]string
	for _, smp := range r.Samples {
		cells := []string{strconv.Itoa(smp.Keys)}
		for _, b := range smp.Bytes {
			cells = append(cells, strconv.FormatUint(b, 10))
		}
		ref := float64(smp.Bytes[reference])
		cells = append(cells, ratio(float64(smp.Bytes[liveDefault]), ref), ratio(float64(smp.Bytes[liveFast]), ref))
		rows = append(rows, cells)
	}
	d.Table(header, rows)
}

func (r *ReferenceReport) writeReadBack(d *markdown.Doc) {
	if !d.Section("Keys read back", r.Verified[0].Keys > 0) {
		return
	}
	var rows [][]string
	for i, v := range r.Verified {
		rows = append(rows, []string{r.Names[i], strconv.Itoa(v.Keys), strconv.Itoa(v.Found),
			strconv.Itoa(v.Lost), strconv.Itoa(v.Unexpected), strconv.Itoa(r.absentFound(i))})
	}
	d.Table([]string{"database", "keys written", "read back", "lost", "unexpected entries", "absent keys found"}, rows)
}
