package whatif

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// filterBytes returns the bytes of the filter blocks on levels L0 to last
// that db.SSTables reports.
func filterBytes(t *testing.T, dir string, last int) uint64 {
	t.Helper()
	lv, err := openCopy(t, dir).SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for l, ts := range lv {
		for _, s := range ts {
			if l <= last {
				n += s.Properties.FilterSize
			}
		}
	}
	return n
}

// fitPlan is plan.Fit with its defaults on a read-only Pebble
// over a copy of the database in dir.
func fitPlan(t *testing.T, dir string, mem uint64, useL6 bool) plan.Report {
	t.Helper()
	r, err := plan.Fit(openCopy(t, dir), plan.Config{MaxFilterBytes: mem, Fixed: true, UseL6: useL6})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPlan asks for the plan at the bytes of the database's bloom(10)
// filters, for Get and for lookups that read L6 filters.
func TestPlan(t *testing.T) {
	dir := t.TempDir()
	buildDB(t, dir)
	mem := filterBytes(t, dir, numLevels-1)
	for _, useL6 := range []bool{false, true} {
		t.Run(fmt.Sprintf("useL6=%v", useL6), func(t *testing.T) {
			before := pebbletest.MustSnapshot(t, dir)
			rep, err := Analyze(Config{Dir: dir, Probes: 5000, Budgets: []int{10, 16}, Memory: mem, UseL6: useL6})
			if err != nil {
				t.Fatal(err)
			}
			pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, dir))
			pr := rep.plan
			if pr == nil || pr.Memory != mem || pr.By != "" || pr.UseL6 != useL6 || len(pr.Projections) != 3 {
				t.Fatalf("plan section %+v", pr)
			}
			if want := fitPlan(t, dir, mem, useL6); pr.Plan != want.Plan || pr.Fit != want {
				t.Errorf("plan %v, plan.Fit on the database gives %v", pr.Plan, want.Plan)
			}
			if pr.Projections[2].Plan != pr.Fit.BloomOnly.Plan {
				t.Errorf("bloom-only projection %v, plan.Fit's %v", pr.Projections[2].Plan, pr.Fit.BloomOnly.Plan)
			}
			if hasL6 := pr.Plan[6] != nil && pr.Plan[6] != pebble.NoFilterPolicy; hasL6 != useL6 {
				t.Errorf("useL6 %v: plan %v has an L6 filter: %v", useL6, pr.Plan, hasL6)
			}
			checkBloomProjection(t, rep)
			checkPlanProjection(t, rep)
			checkPlanGains(t, rep)
			checkPlanOutput(t, rep)
		})
	}
}

// checkBloomProjection checks the bloom(10) projection against the
// database's own filters, which bloom(10) wrote: the same bytes, and the
// same reads as the current filters.
func checkBloomProjection(t *testing.T, rep *Report) {
	t.Helper()
	pj := &rep.plan.Projections[1]
	for l := range numLevels {
		L, c := &rep.levels[l], pj.Levels[l]
		if c.Name != "bloom(10)" || uint64(c.Bytes) != L.NowBytes || c.Hits != L.NowHits {
			t.Errorf("L%d: bloom(10) projection %+v; current filters %d bytes, %d reads", l, c, L.NowBytes, L.NowHits)
		}
	}
}

// checkPlanProjection checks the plan's filters level by level: a level
// without a filter reads a block on every check and takes no bytes; a level
// with one meets the rate the policy shows on other keys and takes about its
// bits per key.
func checkPlanProjection(t *testing.T, rep *Report) {
	t.Helper()
	pj := &rep.plan.Projections[0]
	for l := range numLevels {
		L, c, p := &rep.levels[l], pj.Levels[l], pj.Plan[l]
		if p == nil {
			if c.Name != "none" || c.Hits != L.Checks || c.Bytes != 0 {
				t.Errorf("L%d without a filter: %+v, %d checks", l, c, L.Checks)
			}
			continue
		}
		if L.Checks == 0 {
			continue
		}
		const n = 200000
		got, direct := L.FPRof(c), directFPR(p, 30000, n)
		if !within(got, L.Checks, direct, n, 5) {
			t.Errorf("L%d %s: %.4f%% false positives on %d checks; directly %.4f%%", l, c.Name, 100*got, L.Checks, 100*direct)
		}
		var budget int
		switch v := p.(type) {
		case cuckoopolicy.FilterPolicy:
			budget = int(v)
		case bloom.FilterPolicy:
			budget = int(v)
		default:
			continue
		}
		if bpk := 8 * c.Bytes / float64(L.Keys); bpk < 0.9*float64(budget) || bpk > 1.1*float64(budget)+1 {
			t.Errorf("L%d: %s takes %.2f bits per key", l, c.Name, bpk)
		}
	}
}

// FPRof is the rate of data-block reads c causes on the level's checks.
func (l *levelRow) FPRof(c candidateResult) float64 { return ratio(c.Hits, l.Checks) }

// checkPlanGains checks that the plan, within bloom(10)'s bytes, meets fewer
// false positives than bloom(10) on the lookups it is for, by a margin far
// beyond the noise: upper levels are small, so the plan gives them many bits.
func checkPlanGains(t *testing.T, rep *Report) {
	t.Helper()
	last := numLevels - 2
	if rep.plan.UseL6 {
		last = numLevels - 1
	}
	plan, b10 := rep.falseReads(0, last), rep.falseReads(1, last)
	if now := rep.falseReads(-1, last); now != b10 {
		t.Errorf("reads in vain: current filters %.4f, bloom(10) %.4f; the database has bloom(10) filters", now, b10)
	}
	if b10 == 0 || plan > 0.6*b10 {
		t.Errorf("L0-L%d: the plan %v reads %.4f blocks in vain per absent lookup, bloom(10) %.4f", last, rep.plan.Plan, plan, b10)
	}
	var bytes float64
	for _, c := range rep.plan.Projections[0].Levels {
		bytes += c.Bytes
	}
	if bytes > 1.03*float64(rep.plan.Memory) {
		t.Errorf("the plan's filters take %.0f bytes, of %d", bytes, rep.plan.Memory)
	}
}

// checkPlanOutput checks the plan section of the report: the plan, the
// three configurations, and Go lines that give back the plan.
func checkPlanOutput(t *testing.T, rep *Report) {
	t.Helper()
	var out bytes.Buffer
	if err := rep.Write(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"Filter plan: plan.Fit within", rep.plan.Plan.String(), "bloom(10) on every level",
		"best bloom-only plan", "The best bloom-only plan: " + rep.plan.Fit.BloomOnly.Plan.String(), "plan.Apply(opts"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	last := lastLevel(rep.plan.UseL6)
	if !strings.Contains(s, fmt.Sprintf("bytes count the filters the lookups load (L0-L%d)", last)) {
		t.Errorf("useL6 %v: the report does not say the bytes count L0-L%d:\n%s", rep.plan.UseL6, last, s)
	}
	checkVerdict(t, s, rep.verdict())
	if strings.Contains(s, "0.000x") {
		t.Errorf("report prints a ratio of nothing:\n%s", s)
	}
	if !strings.Contains(s, indent(goLines(rep.plan.Plan))) {
		t.Errorf("report lacks the Go lines:\n%s", s)
	}
	if testing.Verbose() {
		t.Log("\n" + s[strings.Index(s, "\nFilter plan:"):])
	}
}

// TestPlanDefault runs Analyze without Memory: the plan section is there,
// its ceiling the bytes plan.Fit's model gives the current filters on the
// levels the lookups load, the plan and the bloom-only plan within it, and
// the report ends with the verdict.
func TestPlanDefault(t *testing.T) {
	dir := t.TempDir()
	buildDB(t, dir)
	for _, useL6 := range []bool{false, true} {
		t.Run(fmt.Sprintf("useL6=%v", useL6), func(t *testing.T) {
			rep, err := Analyze(Config{Dir: dir, Probes: 3000, Budgets: []int{10}, UseL6: useL6})
			if err != nil {
				t.Fatal(err)
			}
			pr := rep.plan
			if pr == nil {
				t.Fatal("no plan section without Memory")
			}
			last := lastLevel(useL6)
			want := fitPlan(t, dir, 0, useL6).Current.Bytes
			if tb := filterBytes(t, dir, last); want == 0 || pr.Memory != want || pr.TableBytes != tb {
				t.Errorf("ceiling %d bytes (tables: %d); want the current filters' %d by the model (tables: %d)", pr.Memory, pr.TableBytes, want, tb)
			}
			fit := &pr.Fit
			if fit.Current.Bytes != pr.Memory || fit.Bytes > pr.Memory || fit.BloomOnly.Bytes > pr.Memory || fit.Bytes == 0 {
				t.Errorf("ceiling %d: plan %d bytes, bloom-only %d, current %d", pr.Memory, fit.Bytes, fit.BloomOnly.Bytes, fit.Current.Bytes)
			}
			if fit.FalsePositives >= fit.Current.FalsePositives || fit.FalsePositives > fit.BloomOnly.FalsePositives {
				t.Errorf("false positives: plan %g, bloom-only %g, current %g", fit.FalsePositives, fit.BloomOnly.FalsePositives, fit.Current.FalsePositives)
			}
			var out bytes.Buffer
			if err := rep.Write(&out); err != nil {
				t.Fatal(err)
			}
			s := out.String()
			for _, w := range []string{
				"Filter plan: plan.Fit within " + formatSize(want) + " of the filters the lookups load:",
				fmt.Sprintf("the bytes the current filters take on L0-L%d, by plan.Fit's model", last),
				fmt.Sprintf("properties say %s bytes", num(pr.TableBytes)),
				"Verdict: at the same " + shortSize(want) + " of filters the lookups load, the plan meets ",
			} {
				if !strings.Contains(s, w) {
					t.Errorf("report lacks %q:\n%s", w, s)
				}
			}
			checkVerdict(t, s, rep.verdict())
			if testing.Verbose() {
				t.Log("\n" + s[strings.Index(s, "\nFilter plan:"):])
			}
		})
	}
}

// checkVerdict checks that the report s ends with the verdict line v, its
// only line that starts with "Verdict:".
func checkVerdict(t *testing.T, s, v string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if lines[len(lines)-1] != v || strings.Count(s, "Verdict:") != 1 || strings.Contains(v, "\n") {
		t.Errorf("the report does not end with the one verdict line %q:\n%s", v, s)
	}
}

// TestVerdict pins the verdict's wording: ratios where both figures count,
// absolute figures where one is nothing, and a plan no better than the
// bloom-only plan said to be so.
func TestVerdict(t *testing.T) {
	c10, c16, b10 := cuckoopolicy.FilterPolicy(10), cuckoopolicy.FilterPolicy(16), bloom.FilterPolicy(10)
	p := plan.Plan{c16, c16, c16, c16, c16, c10}
	bloomOnly := plan.Plan{b10, b10, b10, b10, b10, b10}
	est := func(p plan.Plan, bytes uint64, fp float64) plan.Estimate {
		return plan.Estimate{Plan: p, Bytes: bytes, FalsePositives: fp}
	}
	const mem = 1 << 20
	head := "Verdict: at the same 1 MiB of filters the lookups load, "
	for _, c := range []struct {
		name             string
		plan, bloom, now plan.Estimate
		tableBytes       uint64
		want             string
	}{
		{"better", est(p, mem, 0.01), est(bloomOnly, mem, 0.04), est(bloomOnly, mem, 0.05), mem,
			head + "the plan meets 0.25x the false positives of the best bloom-only plan, and 0.20x those of the current filters."},
		{"far better", est(p, mem, 2e-5), est(bloomOnly, mem, 0.01), est(bloomOnly, mem, 0.01), mem,
			head + "the plan meets 0.002x the false positives of the best bloom-only plan, and 0.002x those of the current filters."},
		{"no better", est(p, mem, 0.04), est(bloomOnly, mem, 0.04), est(bloomOnly, mem/2, 0.08), mem / 2,
			head + "the plan is no better than the best bloom-only plan (1.00x its false positives), and 0.50x those of the current filters (which take 512 KiB)."},
		{"bloom only", est(bloomOnly, mem, 0.04), est(bloomOnly, mem, 0.04), est(bloomOnly, mem, 0.04), mem,
			head + "the plan is the best bloom-only plan (the cuckoo filter gains nothing here), and 1.00x those of the current filters."},
		{"nothing", est(p, mem, 0), est(bloomOnly, mem, 1e-3), est(bloomOnly, mem, 0.5), mem,
			head + "the plan meets 0 false-positive reads per absent lookup, the best bloom-only plan 0.001, and the current filters 0.5."},
		{"unknown", est(p, mem, 0.01), est(bloomOnly, mem, 0.02), est(plan.Plan{}, 0, 3), mem,
			head + "the plan meets 0.50x the false positives of the best bloom-only plan; plan.Fit's model does not know the current filters."},
	} {
		r := &Report{plan: &planReport{Memory: mem, TableBytes: c.tableBytes}}
		r.plan.Fit.Estimate, r.plan.Fit.BloomOnly, r.plan.Fit.Current = c.plan, c.bloom, c.now
		if got := r.verdict(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestGoLines(t *testing.T) {
	mixed := plan.Plan{
		bloom.FilterPolicy(6), cuckoopolicy.FilterPolicy(20), pebble.NoFilterPolicy, nil,
		cuckoopolicy.Policy{}, cuckoopolicy.Policy{FingerprintBits: 13},
		cuckoopolicy.Policy{FingerprintBits: 12, SemiSort: true, LoadFactor: 0.975},
	}
	for _, p := range []plan.Plan{{}, plan.Progressive(), mixed} {
		src := goLines(p)
		got, imports := evalGoLines(t, src)
		want := p
		for l := range want {
			if want[l] == pebble.NoFilterPolicy {
				want[l] = nil
			}
		}
		if got != want {
			t.Errorf("Go lines\n%s\ngive the plan %v, want %v", src, got, want)
		}
		usesBloom := strings.Contains(src, "bloom.")
		usesCuckoo := strings.Contains(src, "cuckoopolicy.")
		if imports["github.com/cockroachdb/pebble/v2/bloom"] != usesBloom || !imports["github.com/cockroachdb/pebble/v2"] ||
			imports["github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"] != usesCuckoo ||
			!imports["github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"] {
			t.Errorf("Go lines import %v, uses bloom: %v, cuckoopolicy: %v:\n%s", imports, usesBloom, usesCuckoo, src)
		}
	}
}

// evalGoLines parses Go lines in a function of a file, checks that gofmt
// leaves them as they are, and evaluates the plan literal they pass to
// plan.Apply. It returns the plan and the paths imported.
func evalGoLines(t *testing.T, src string) (plan.Plan, map[string]bool) {
	t.Helper()
	head, body, ok := strings.Cut(src, ")\n\n")
	head += ")"
	if !ok {
		t.Fatalf("Go lines without imports:\n%s", src)
	}
	file := "package p\n\n" + head + "\n\nfunc f() {\n\t" + strings.ReplaceAll(body, "\n", "\n\t") + "\n\t_ = opts\n}\n"
	if f, err := format.Source([]byte(file)); err != nil || string(f) != file {
		t.Errorf("Go lines are not gofmt'ed (%v):\n%s", err, src)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "plan.go", file, 0)
	if err != nil {
		t.Fatalf("Go lines do not parse: %v\n%s", err, src)
	}
	imports := map[string]bool{}
	for _, is := range f.Imports {
		path, _ := strconv.Unquote(is.Path.Value)
		imports[path] = true
	}
	var lit *ast.CompositeLit
	ast.Inspect(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CompositeLit); ok && selector(c.Type) == "plan.Plan" {
			lit = c
		}
		return lit == nil
	})
	if lit == nil || len(lit.Elts) != numLevels {
		t.Fatalf("no plan literal of %d entries in\n%s", numLevels, src)
	}
	var p plan.Plan
	for l, e := range lit.Elts {
		p[l] = evalPolicy(t, e)
	}
	return p, imports
}

func selector(e ast.Expr) string {
	if s, ok := e.(*ast.SelectorExpr); ok {
		if x, ok := s.X.(*ast.Ident); ok {
			return x.Name + "." + s.Sel.Name
		}
	}
	return ""
}

// evalPolicy evaluates a plan entry: nil, NAME.FilterPolicy(INT) or a
// cuckoopolicy.Policy literal with keyed fields.
func evalPolicy(t *testing.T, e ast.Expr) pebble.FilterPolicy {
	t.Helper()
	switch v := e.(type) {
	case *ast.Ident:
		if v.Name == "nil" {
			return nil
		}
	case *ast.CallExpr:
		if len(v.Args) != 1 {
			break
		}
		arg, ok := v.Args[0].(*ast.BasicLit)
		if !ok {
			break
		}
		n, err := strconv.Atoi(arg.Value)
		if err != nil {
			break
		}
		switch selector(v.Fun) {
		case "cuckoopolicy.FilterPolicy":
			return cuckoopolicy.FilterPolicy(n)
		case "bloom.FilterPolicy":
			return bloom.FilterPolicy(n)
		}
	case *ast.CompositeLit:
		if selector(v.Type) != "cuckoopolicy.Policy" {
			break
		}
		var p cuckoopolicy.Policy
		for _, el := range v.Elts {
			kv := el.(*ast.KeyValueExpr)
			switch val := kv.Value.(type) {
			case *ast.BasicLit:
				x, _ := strconv.ParseFloat(val.Value, 64)
				switch kv.Key.(*ast.Ident).Name {
				case "FingerprintBits":
					p.FingerprintBits = int(x)
				case "LoadFactor":
					p.LoadFactor = x
				}
			case *ast.Ident:
				p.SemiSort = kv.Key.(*ast.Ident).Name == "SemiSort" && val.Name == "true"
			}
		}
		return p
	}
	t.Fatalf("plan entry %T %v is not a policy the Go lines should write", e, e)
	return nil
}
