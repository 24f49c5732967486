package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// checkPlans checks the plan and the best bloom-only plan printed beside it:
// both within the ceiling, the bloom(10) filters' bytes on L0-L5, the
// bloom-only plan of bloom filters alone, and the plan expecting no more
// false positives than it.
func checkPlans(t *testing.T, text string) {
	t.Helper()
	ceiling := regexp.MustCompile(`MaxFilterBytes: ([0-9]+), Fixed: true\}\), the bloom\(10\) filters' bytes on L0-L5`).FindStringSubmatch(text)
	loaded := regexp.MustCompile(`on L0-L5, which a Get loads: ([0-9]+)`).FindStringSubmatch(text)
	if ceiling == nil || loaded == nil || ceiling[1] != loaded[1] {
		t.Fatalf("the ceiling %q is not the bloom(10) filters' bytes on L0-L5 %q", ceiling, loaded)
	}
	max, _ := strconv.ParseUint(ceiling[1], 10, 64)
	est := regexp.MustCompile(`\n  (plan|best bloom-only plan): +(.*)\n +([0-9]+) bytes, ([0-9.]+) expected false positives`).FindAllStringSubmatch(text, -1)
	if len(est) != 2 {
		t.Fatalf("want the plan and the best bloom-only plan with their bytes, got %q", est)
	}
	var fp [2]float64
	for i, e := range est {
		bytes, _ := strconv.ParseUint(e[3], 10, 64)
		fp[i], _ = strconv.ParseFloat(e[4], 64)
		if bytes == 0 || bytes > max {
			t.Errorf("%s: %d bytes, ceiling %d", e[1], bytes, max)
		}
	}
	if strings.Contains(est[1][2], "cuckoo") || !strings.Contains(est[1][2], "bloom") {
		t.Errorf("the best bloom-only plan is %q", est[1][2])
	}
	if fp[0] > fp[1] {
		t.Errorf("the plan expects %v false positives per absent Get, the bloom-only plan %v", fp[0], fp[1])
	}
}

// TestRun runs the example on fewer keys and checks what it prints: a plan
// for Get with no filter on L6 and filters above it, within the ceiling and
// expecting fewer false positives than the best bloom-only plan; no key lost
// in either database; the measured false positives of both databases. At
// the same loaded bytes the plan's measured gain on this small database is a
// few tens of false positives among 5,000 absent Gets, too few to judge
// without failing by chance: the workload benchmark measures it.
func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(&out, 60_000, 5_000); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Log("\n" + text)
	plan := regexp.MustCompile(`\n  plan: +(.*)\n`).FindStringSubmatch(text)
	if plan == nil || !strings.HasSuffix(plan[1], "L6 none") || strings.HasPrefix(plan[1], "L0-L6") {
		t.Fatalf("want a plan with filters above L6 and none on L6, got %q", plan)
	}
	checkPlans(t, text)
	if n := strings.Count(text, ", 0 lost"); n != 2 {
		t.Errorf("keys lost: %d of 2 databases read back every key", n)
	}
	fps := regexp.MustCompile(`false positives per absent Get: ([0-9.]+)`).FindAllStringSubmatch(text, -1)
	if len(fps) != 3 {
		t.Fatalf("want 3 false-positive figures, got %d", len(fps))
	}
	for _, fp := range fps {
		if v, err := strconv.ParseFloat(fp[1], 64); err != nil || v <= 0 || v >= 1 {
			t.Errorf("false positives per absent Get %q: want a rate between 0 and 1", fp[1])
		}
	}
}
