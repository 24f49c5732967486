package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// TestMain runs the command itself when the tests start this binary with
// WHATIF_RUN_MAIN set: the exit status and output are the real command's.
func TestMain(m *testing.M) {
	if os.Getenv("WHATIF_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// deadline bounds every run of the command: a run that hangs is killed and
// fails its test instead of blocking the tests. The databases are small; a
// run takes well under a second.
const deadline = 2 * time.Minute

// runCmd runs the command in a child process.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "WHATIF_RUN_MAIN=1")
	cmd.WaitDelay = time.Second
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("whatif %s did not finish within %v (hung); stderr:\n%s", strings.Join(args, " "), deadline, e.String())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func options() *pebble.Options {
	o := &pebble.Options{DisableAutomaticCompactions: true, Logger: pebbletest.QuietLogger{}}
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		o.Levels[i].FilterType = pebble.TableFilter
	}
	return o
}

// buildDB writes a small database with tables in L0 and L6.
func buildDB(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := pebble.Open(dir, options())
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		for i := range 5000 {
			if err := db.Set(fmt.Appendf(nil, "key%07d", i*3+round), []byte("v"), pebble.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			if err := db.Compact(context.Background(), []byte("a"), []byte("z"), false); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyDir copies the database directory src, LOCK included.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// newest returns the last file of dir that matches glob, in name order: the
// newest of Pebble's numbered files.
func newest(t *testing.T, dir, glob string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, glob))
	if err != nil || len(m) == 0 {
		t.Fatalf("no %s in %s: %v", glob, dir, err)
	}
	return m[len(m)-1]
}

// checkFailure checks that whatif failed as it should on a damaged
// database: exit status 1, no panic, and a message that names the file.
func checkFailure(t *testing.T, code int, stderr, path, want string) {
	t.Helper()
	if code != 1 || !strings.Contains(stderr, path) || !strings.Contains(stderr, want) ||
		strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
		t.Errorf("exit status %d, stderr:\n%s\nwant status 1 and a message with %s and %q", code, stderr, path, want)
	}
}

func TestRun(t *testing.T) {
	dir := buildDB(t)
	before := pebbletest.MustSnapshot(t, dir)
	out, errOut, code := runCmd(t, "-db", dir, "-budgets", "10,12", "-probes", "2000")
	if code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, errOut)
	}
	pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, dir))
	for _, s := range []string{"L0", "L6", "bloom(10)", "cuckoo(12)", "Get reads", "rocksdb.BuiltinBloomFilter (1)",
		"Measured through Pebble: the current filters, looked up as the plan's lookups are\n(db.Get)", "model/measured"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if testing.Verbose() {
		t.Log("\n" + out)
	}
}

func TestBadInput(t *testing.T) {
	db := buildDB(t)
	notDB := t.TempDir()
	if err := os.WriteFile(filepath.Join(notDB, "notes.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		dir  string
		args []string
		want string
	}{
		{"not a database", notDB, nil, "not a Pebble database"},
		{"unknown comparer", db, []string{"-comparer", "reverse"}, "unknown comparer"},
		{"comparer mismatch", db, []string{"-comparer", "cockroach"}, "comparer"},
		{"bad budget", db, []string{"-budgets", "10,x"}, "-budgets"},
		{"memory 0", db, []string{"-memory", "0"}, "-memory 0: a plan needs more than 0 bytes"},
		{"memory 0 MiB", db, []string{"-memory", "0MiB"}, "-memory 0MiB: a plan needs more than 0 bytes"},
		{"memory empty", db, []string{"-memory", ""}, `bad size ""`},
		{"memory unit", db, []string{"-memory", "64XB"}, `bad size "64XB"`},
		{"memory negative", db, []string{"-memory", "-1MiB"}, `bad size "-1MiB"`},
		{"memory fraction of a byte", db, []string{"-memory", "1.5"}, "whole number"},
		{"memory too large", db, []string{"-memory", "16777216TiB"}, "2^64 bytes or more"},
		{"cache 0", db, []string{"-cache", "0"}, "-cache 0: a block cache needs more than 0 bytes"},
		{"cache 0 GiB", db, []string{"-cache", "0GiB"}, "-cache 0GiB: a block cache needs more than 0 bytes"},
		{"cache empty", db, []string{"-cache", ""}, `bad size ""`},
		{"cache unit", db, []string{"-cache", "1GB/s"}, `bad size "1GB/s"`},
		{"cache negative", db, []string{"-cache", "-64MiB"}, `bad size "-64MiB"`},
		{"cache too large", db, []string{"-cache", "20000000TB"}, "2^64 bytes or more"},
		{"lookups 0", db, []string{"-lookups", "0"}, "-lookups and -lookuptime must be more than 0"},
		{"lookup time negative", db, []string{"-lookuptime", "-1s"}, "-lookups and -lookuptime must be more than 0"},
		// Refused before the directory is opened: its error would be another.
		{"cache before the database", notDB, []string{"-cache", "-1"}, "as in 64MiB (-cache)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := pebbletest.MustSnapshot(t, c.dir)
			_, errOut, code := runCmd(t, append([]string{"-db", c.dir}, c.args...)...)
			if code != 1 || !strings.Contains(errOut, c.want) {
				t.Errorf("exit status %d, stderr %q; want 1 and %q", code, errOut, c.want)
			}
			pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, c.dir))
		})
	}
	t.Run("in use", func(t *testing.T) {
		open, err := pebble.Open(db, options())
		if err != nil {
			t.Fatal(err)
		}
		defer open.Close()
		// Pebble removes obsolete files in the background after Open: wait
		// until the directory stops changing.
		before, err := pebbletest.Settled(db)
		if err != nil {
			t.Fatal(err)
		}
		_, errOut, code := runCmd(t, "-db", db)
		if code != 1 || !strings.Contains(errOut, "in use") {
			t.Errorf("exit status %d, stderr %q; want 1 and in use", code, errOut)
		}
		pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, db))
	})
}

func TestHelp(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help"} {
		out, errOut, code := runCmd(t, arg)
		if code != 0 || !strings.Contains(errOut, "usage: whatif -db DIR") || !strings.Contains(errOut, "-comparer") {
			t.Errorf("whatif %s: exit status %d, stdout %q, stderr %q; want 0 and the usage", arg, code, out, errOut)
		}
	}
}

// TestNoTesting checks that the command does not link package testing, which
// a test fixture package would bring in.
func TestNoTesting(t *testing.T) {
	goCmd, err := exec.LookPath("go") // go test puts its own first in PATH
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	out, err := exec.Command(goCmd, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "testing" {
			t.Error("the whatif command links package testing")
		}
	}
}

// TestPlan runs the command with -memory, with and without -l6: the plan
// section, its Go lines, a filter on L6 only with -l6, the measurement
// through Pebble with the lookups the plan is for, and the decision.
func TestPlan(t *testing.T) {
	dir := buildDB(t)
	before := pebbletest.MustSnapshot(t, dir)
	for _, l6 := range []bool{false, true} {
		args := []string{"-db", dir, "-budgets", "10", "-probes", "2000", "-memory", "64KiB"}
		if l6 {
			args = append(args, "-l6")
		}
		out, errOut, code := runCmd(t, args...)
		if code != 0 {
			t.Fatalf("whatif %s: exit status %d, stderr:\n%s", strings.Join(args, " "), code, errOut)
		}
		for _, s := range []string{"Filter plan: plan.Fit within 64 KiB of the filters the lookups load.",
			"bloom(10) on every level", "best bloom-only plan", "plan.Apply(opts, plan.Plan{",
			"Verdict: at the same 64 KiB of filters the lookups load, "} {
			if !strings.Contains(out, s) {
				t.Errorf("-l6 %v: output lacks %q:\n%s", l6, s, out)
			}
		}
		// The measurement looks up keys as the plan's lookups are, and the
		// output ends with the decision.
		lookups := "(db.Get)"
		if l6 {
			lookups = "(SeekPrefixGE on an iterator with IterOptions.UseL6Filters)"
		}
		if !strings.Contains(out, "looked up as the plan's lookups are\n"+lookups) {
			t.Errorf("-l6 %v: the measurement does not say it looked up %s:\n%s", l6, lookups, out)
		}
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		checkDecision(t, out, lines[len(lines)-1])
		// The Go lines end with L6's entry: nil without -l6, a policy with it.
		noL6 := regexp.MustCompile(`\tnil, +// L6\n`).MatchString(out)
		if noL6 == l6 || strings.Contains(out, "the lookups load (L0-L6)") != l6 {
			t.Errorf("-l6 %v: L6 entry nil: %v; output:\n%s", l6, noL6, out)
		}
		if testing.Verbose() {
			t.Log("\n" + out[strings.Index(out, "\nFilter plan:"):])
		}
	}
	pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, dir))
}

// TestPlanDefault runs the command without -memory: the plan section is
// there, at the bytes the current filters take on L0-L5 by the model (the
// current filters' row), the plan and the bloom-only plan within them, and
// the output ends with the verdict, its only line that starts so.
func TestPlanDefault(t *testing.T) {
	dir := buildDB(t)
	out, errOut, code := runCmd(t, "-db", dir, "-budgets", "10", "-probes", "2000")
	if code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, errOut)
	}
	head := regexp.MustCompile(`\nFilter plan: plan.Fit within (.*) of the filters the lookups load:\n` +
		`the bytes the current filters take on L0-L5, by plan.Fit's model`).FindStringSubmatch(out)
	if head == nil {
		t.Fatalf("no plan section at the current filters' bytes:\n%s", out)
	}
	rows := map[string]uint64{}
	for _, m := range regexp.MustCompile(`(?m)^ *(plan|current filters|best bloom-only plan) +([0-9,]+) `).FindAllStringSubmatch(out, -1) {
		n, err := strconv.ParseUint(strings.ReplaceAll(m[2], ",", ""), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		rows[m[1]] = n
	}
	ceiling := rows["current filters"]
	if len(rows) != 3 || ceiling == 0 || rows["plan"] > ceiling || rows["best bloom-only plan"] > ceiling {
		t.Errorf("bytes %v: want the plan and the bloom-only plan within the current filters'", rows)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	verdict, decision := lines[len(lines)-2], lines[len(lines)-1]
	if !strings.HasPrefix(verdict, "Verdict: at the same "+strings.Fields(head[1])[0]) || strings.Count(out, "Verdict:") != 1 ||
		!strings.Contains(verdict, "the false positives of the best bloom-only plan") {
		t.Errorf("output does not end with the verdict and the decision:\n%s", out)
	}
	checkDecision(t, out, decision)
	if testing.Verbose() {
		t.Log("\n" + out[strings.Index(out, "\nFilter plan:"):])
	}
}

// checkDecision checks that d, the last line of the output out, is its one
// decision line, and that it agrees with the measured figures the output
// prints: it quotes the current filters' measured reads in vain, and
// switches only where the plan's projection it quotes is below 1/1.3 of
// them and below their 95% interval.
func checkDecision(t *testing.T, out, d string) {
	t.Helper()
	row := regexp.MustCompile(`(?m)^ *measured \(Pebble\) +(\S+) +(\S+) to (\S+) `).FindStringSubmatch(out)
	if row == nil || strings.Count(out, "Decision:") != 1 {
		t.Errorf("no measurement through Pebble, or not one decision line:\n%s", out)
		return
	}
	measured, _ := strconv.ParseFloat(row[1], 64)
	lo, _ := strconv.ParseFloat(row[2], 64)
	m := regexp.MustCompile(`^Decision: (switch to this plan|stay with the current filters): the plan's projected (\S+) ` +
		`.* the current filters' measured (\S+) `).FindStringSubmatch(d)
	if m == nil || m[3] != row[1] {
		t.Errorf("decision %q does not weigh the plan against the measured %s", d, row[1])
		return
	}
	plan, _ := strconv.ParseFloat(m[2], 64)
	if want := plan*1.3 <= measured && plan < lo; want != (m[1] == "switch to this plan") {
		t.Errorf("decision %q: the plan's %g against the measured %g (95%% from %g)", d, plan, measured, lo)
	}
}

// TestCache runs the command with -cache: the block-cache section before
// the plan section, which still ends the output with its verdict; at a
// cache of 1 GiB the plan it recommends, with its Go lines; at 1 KiB, less
// than the indexes, no L6 filter.
func TestCache(t *testing.T) {
	dir := buildDB(t)
	for cache, want := range map[string][]string{
		"1GiB": {"Block cache (-cache): 1 GiB, shared by filter, index and data blocks,",
			"Recommended budget: ", "plan.Apply(opts, plan.Plan{"},
		"1KiB": {"Block cache (-cache): 1 KiB, shared by filter, index and data blocks,",
			"Even the indexes", "Recommended: no L6 filter", "\tbloom.FilterPolicy(10), // L5\n"},
	} {
		out, errOut, code := runCmd(t, "-db", dir, "-budgets", "10", "-probes", "1000", "-cache", cache)
		if code != 0 {
			t.Fatalf("-cache %s: exit status %d, stderr:\n%s", cache, code, errOut)
		}
		sec, plan := strings.Index(out, "\nBlock cache (-cache): "), strings.Index(out, "\nFilter plan: ")
		if sec < 0 || plan < sec {
			t.Fatalf("-cache %s: no block-cache section before the plan section:\n%s", cache, out)
		}
		for _, w := range want {
			if !strings.Contains(out[sec:plan], w) {
				t.Errorf("-cache %s: the section lacks %q:\n%s", cache, w, out[sec:plan])
			}
		}
		// The Go lines give L6 a filter only where the rule leaves a budget.
		if noL6 := regexp.MustCompile(`\tnil, +// L6\n`).MatchString(out[sec:plan]); noL6 != (cache == "1KiB") {
			t.Errorf("-cache %s: L6 entry nil: %v:\n%s", cache, noL6, out[sec:plan])
		}
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if !strings.HasPrefix(lines[len(lines)-2], "Verdict: ") {
			t.Errorf("-cache %s: the output does not end with the verdict and the decision:\n%s", cache, out)
		}
		checkDecision(t, out, lines[len(lines)-1])
		if testing.Verbose() {
			t.Log(out[sec:plan])
		}
	}
}
