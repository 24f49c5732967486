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
	"github.com/pebble-cuckoo/pebble-cuckoo/sstable_integration/pebbletest"
)

// filterBytes returns the bytes of the filter blocks db.SSTables reports.
func filterBytes(t *testing.T, dir string) uint64 {
	t.Helper()
	lv, err := openCopy(t, dir).SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, ts := range lv {
		for _, s := range ts {
			n += s.Properties.FilterSize
		}
	}
	return n
}

// planFor is cuckoopolicy.PlanFor on a read-only Pebble over a copy of the
// database in dir.
func planFor(t *testing.T, dir string, mem uint64, useL6 bool) cuckoopolicy.Plan {
	t.Helper()
	p, err := cuckoopolicy.PlanFor(openCopy(t, dir), mem, useL6)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlan asks for the plan at the bytes of the database's bloom(10)
// filters, for Get and for lookups that read L6 filters.
func TestPlan(t *testing.T) {
	dir := t.TempDir()
	buildDB(t, dir)
	mem := filterBytes(t, dir)
	for _, useL6 := range []bool{false, true} {
		t.Run(fmt.Sprintf("useL6=%v", useL6), func(t *testing.T) {
			before := pebbletest.MustSnapshot(t, dir)
			rep, err := Analyze(Config{Dir: dir, Probes: 5000, Budgets: []int{10, 16}, Memory: mem, UseL6: useL6})
			if err != nil {
				t.Fatal(err)
			}
			pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, dir))
			pr := rep.plan
			if pr == nil || pr.Memory != mem || pr.UseL6 != useL6 || len(pr.Projections) != 2 {
				t.Fatalf("plan section %+v", pr)
			}
			if want := planFor(t, dir, mem, useL6); pr.Plan != want {
				t.Errorf("plan %v, PlanFor on the database gives %v", pr.Plan, want)
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
	for _, want := range []string{"Filter plan: cuckoopolicy.PlanFor within", rep.plan.Plan.String(), "bloom(10) on every level", "per Get (L0-L5)", "cuckoopolicy.ApplyPlan(opts"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if l6 := strings.Contains(s, "per L6-filtered lookup"); l6 != rep.plan.UseL6 {
		t.Errorf("useL6 %v: the report shows reads per L6-filtered lookup: %v", rep.plan.UseL6, l6)
	}
	if !strings.Contains(s, indent(goLines(rep.plan.Plan))) {
		t.Errorf("report lacks the Go lines:\n%s", s)
	}
	if testing.Verbose() {
		t.Log("\n" + s[strings.Index(s, "\nFilter plan:"):])
	}
}

func TestGoLines(t *testing.T) {
	mixed := cuckoopolicy.Plan{
		bloom.FilterPolicy(6), cuckoopolicy.FilterPolicy(20), pebble.NoFilterPolicy, nil,
		cuckoopolicy.Policy{}, cuckoopolicy.Policy{FingerprintBits: 13},
		cuckoopolicy.Policy{FingerprintBits: 12, SemiSort: true, LoadFactor: 0.975},
	}
	for _, p := range []cuckoopolicy.Plan{{}, cuckoopolicy.Progressive(), mixed} {
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
		if imports["github.com/cockroachdb/pebble/v2/bloom"] != usesBloom || !imports["github.com/cockroachdb/pebble/v2"] ||
			!imports["github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"] {
			t.Errorf("Go lines import %v, uses bloom: %v:\n%s", imports, usesBloom, src)
		}
	}
}

// evalGoLines parses Go lines in a function of a file, checks that gofmt
// leaves them as they are, and evaluates the plan literal they pass to
// ApplyPlan. It returns the plan and the paths imported.
func evalGoLines(t *testing.T, src string) (cuckoopolicy.Plan, map[string]bool) {
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
		if c, ok := n.(*ast.CompositeLit); ok && selector(c.Type) == "cuckoopolicy.Plan" {
			lit = c
		}
		return lit == nil
	})
	if lit == nil || len(lit.Elts) != numLevels {
		t.Fatalf("no plan literal of %d entries in\n%s", numLevels, src)
	}
	var p cuckoopolicy.Plan
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
