package growth

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/markdown"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// Report is a run's result. Rows and Verified are indexed in the policies'
// report order: live plan, start plan, bloom(10), bloom-only start plan.
type Report struct {
	Config Config // with defaults filled in
	// Budget is B: bloom(10)'s filter bytes on L0-L5 of the start database.
	Budget uint64
	// Start is plan.Fit's report at B on the start bloom(10) database: the
	// start plan is its Plan, the bloom-only start plan its BloomOnly.Plan.
	Start       plan.Report
	Checkpoints []Checkpoint
	Verified    [numPolicies]Verified
	// Unsettled lists the databases whose compactions had not settled
	// within Config.Settle when a checkpoint was taken.
	Unsettled []string
}

// Checkpoint is every database measured at one size.
type Checkpoint struct {
	Growth int // keys over the start keys: 1, 2, 4, ...
	Keys   int // keys written so far
	Rows   [numPolicies]Row
	Live   LiveFit // the live plan after its refit at the checkpoint
	Fresh  Fresh   // a plan made fresh on the start plan's database
	// FreshLive is plan.Fit at B on the live plan's database, by the model:
	// what the live plan is judged against.
	FreshLive FreshLive
}

// FreshLive is plan.Fit at B on the live plan's database at a checkpoint,
// by the model.
type FreshLive struct {
	Plan                string
	ModelBytes          uint64
	ModelFalsePositives float64
}

// Row is one database at a checkpoint.
type Row struct {
	Policy      string
	Plan        string // the plan the levels write now
	FilterBytes uint64 // filter bytes on L0-L5
	Tables      [7]int // tables per level
	// LevelFilterBytes and LevelEntries are each level's filter bytes
	// and entries, from the tables' properties.
	LevelFilterBytes [7]uint64
	LevelEntries     [7]uint64
	// ReferenceBytes is what bloom(10)'s filter blocks would take on the
	// same L0-L5 tables: the reference's bytes on this database.
	ReferenceBytes uint64
	Absent         Absent
}

// LiveFit is the live plan's state at a checkpoint, by its model.
type LiveFit struct {
	Plan                string
	Refits              int
	FitTime             time.Duration // the last refit's
	ModelBytes          uint64
	ModelFalsePositives float64
}

// Fresh is plan.Fit at B on the start plan's database at a checkpoint, by
// the model: the fresh plan, and the kept start plan on the same tables.
type Fresh struct {
	Plan                    string
	ModelBytes              uint64
	ModelFalsePositives     float64
	KeptModelBytes          uint64
	KeptModelFalsePositives float64
}

// absentFound is how many absent keys policy p's database returned, over
// all checkpoints.
func (r *Report) absentFound(p int) int {
	n := 0
	for _, cp := range r.Checkpoints {
		n += cp.Rows[p].Absent.Found
	}
	return n
}

// Markdown writes the report as a Markdown document.
func (r *Report) Markdown(w io.Writer) error {
	d := markdown.New("")
	c := r.Config
	fmt.Fprintf(d, "# Growth scenario\n\n")
	fmt.Fprintf(d, "One stream of random %d-byte keys with %d-byte values written into four databases, "+
		"from %d keys to %dx (%d keys), a checkpoint at each doubling: flush, compactions settled, "+
		"then %d absent Gets per database. MemTableSize %d, LBaseMaxBytes %d, TargetFileSizes[0] %d, automatic compactions on, "+
		"live plan refit interval %s (and a refit at each checkpoint). Seed %d.\n\n",
		16, c.ValueSize, c.Keys, 1<<c.Doublings, c.Keys<<c.Doublings, c.Absent, c.MemTableSize, c.LBaseMaxBytes, c.TargetFileSize, c.RefitInterval, c.Seed)
	if c.Command != "" {
		fmt.Fprintf(d, "Command: `%s`\n\n", c.Command)
	}
	fmt.Fprintf(d, "B = %d bytes: bloom(10)'s filter bytes on L0-L5 of the start database.\n\n", r.Budget)
	d.List([]string{
		"start plan (plan.Fit at B on the start database, kept): " + r.Start.Plan.String(),
		"bloom-only start plan (plan.Fit's BloomOnly at B, kept): " + r.Start.BloomOnly.Plan.String(),
		"FP reads = data blocks read per absent Get, measured in Pebble (filter misses plus probes of L0-L5 tables without a filter)",
		"bytes/(B·g) = L0-L5 filter bytes over B times the keys' growth g",
	})
	d.WriteString("\n")
	if len(r.Unsettled) > 0 {
		fmt.Fprintf(d, "Compactions had not settled for: %s.\n\n", strings.Join(r.Unsettled, "; "))
	}
	for _, cp := range r.Checkpoints {
		r.writeCheckpoint(d, cp)
	}
	if len(r.Checkpoints) > 0 {
		r.writeSummary(d)
	}
	r.writeVerified(d)
	_, err := io.WriteString(w, d.String())
	return err
}

func (r *Report) writeCheckpoint(d *markdown.Doc, cp Checkpoint) {
	fmt.Fprintf(d, "## %dx: %d keys\n\n", cp.Growth, cp.Keys)
	base := cp.Rows[bloom10].Absent.PerGet()
	var rows [][]string
	for _, row := range cp.Rows {
		b := float64(row.FilterBytes)
		rows = append(rows, []string{
			row.Policy, strconv.Itoa(cp.Keys), strconv.FormatUint(row.FilterBytes, 10),
			ratio(b, float64(r.Budget)), ratio(b, float64(r.Budget)*float64(cp.Growth)),
			fmt.Sprintf("%.5f", row.Absent.PerGet()), ratio(row.Absent.PerGet(), base), levels(row.Tables),
			bitsPerEntry(row),
		})
	}
	d.Table([]string{"policy", "keys", "L0-L5 filter bytes", "bytes/B", "bytes/(B·g)",
		"FP reads/absent Get", "FP vs bloom(10)", "tables L0..L6", "filter bits/entry L0..L5"}, rows)
	d.List([]string{
		fmt.Sprintf("live plan now (after %d refits, the last taking %v): %s; its model: %d bytes, %.5f FP reads/Get",
			cp.Live.Refits, cp.Live.FitTime.Round(time.Millisecond), cp.Live.Plan, cp.Live.ModelBytes, cp.Live.ModelFalsePositives),
		fmt.Sprintf("fresh plan.Fit at B on the start plan's database (model): %s; %d bytes, %.5f FP reads/Get",
			cp.Fresh.Plan, cp.Fresh.ModelBytes, cp.Fresh.ModelFalsePositives),
		fmt.Sprintf("the kept start plan on the same tables (model): %d bytes, %.5f FP reads/Get",
			cp.Fresh.KeptModelBytes, cp.Fresh.KeptModelFalsePositives),
		fmt.Sprintf("fresh plan.Fit at B on the live plan's database (model): %s; %d bytes, %.5f FP reads/Get",
			cp.FreshLive.Plan, cp.FreshLive.ModelBytes, cp.FreshLive.ModelFalsePositives),
	})
	d.WriteString("\n")
}

// writeSummary puts the figures the plan targets are read from side by
// side, one row per checkpoint.
func (r *Report) writeSummary(d *markdown.Doc) {
	d.Section("Summary", true)
	var rows [][]string
	for _, cp := range r.Checkpoints {
		lv, sp := cp.Rows[live], cp.Rows[startPlan]
		rows = append(rows, []string{
			fmt.Sprintf("%dx", cp.Growth),
			ratio(float64(lv.FilterBytes), float64(r.Budget)),
			fmt.Sprintf("%.5f", lv.Absent.PerGet()),
			fmt.Sprintf("%.5f", cp.FreshLive.ModelFalsePositives),
			ratio(lv.Absent.PerGet(), cp.FreshLive.ModelFalsePositives),
			ratio(float64(sp.FilterBytes), float64(r.Budget)*float64(cp.Growth)),
			fmt.Sprintf("%.5f", sp.Absent.PerGet()),
			fmt.Sprintf("%.5f", cp.Fresh.KeptModelFalsePositives),
		})
	}
	d.Table([]string{"growth", "live bytes/B", "live FP/Get (measured)", "fresh plan.Fit on the live database, FP/Get (model)",
		"live measured / fresh model", "start plan bytes/(B·g)", "start plan FP/Get (measured)",
		"start plan FP/Get (model)"}, rows)
}

func (r *Report) writeVerified(d *markdown.Doc) {
	d.Section("Keys read back", r.Verified[0].Keys > 0)
	if r.Verified[0].Keys == 0 {
		return
	}
	var rows [][]string
	for p, v := range r.Verified {
		rows = append(rows, []string{policyNames[p], strconv.Itoa(v.Keys), strconv.Itoa(v.Found),
			strconv.Itoa(v.Lost), strconv.Itoa(v.Unexpected), strconv.Itoa(r.absentFound(p))})
	}
	d.Table([]string{"policy", "keys written", "read back", "lost", "unexpected entries", "absent keys found"}, rows)
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", a/b)
}

// levels is the tables per level, as "0 0 0 0 3 12 80".
func levels(t [7]int) string {
	s := make([]string, len(t))
	for i, n := range t {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " ")
}

// bitsPerEntry is each upper level's filter bits per entry, "-" for an
// empty level.
func bitsPerEntry(row Row) string {
	s := make([]string, getLevels)
	for l := range s {
		s[l] = "-"
		if n := row.LevelEntries[l]; n > 0 {
			s[l] = fmt.Sprintf("%.1f", 8*float64(row.LevelFilterBytes[l])/float64(n))
		}
	}
	return strings.Join(s, " ")
}
