package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRun runs the example on fewer keys and checks what it prints: a plan
// for Get with no filter on L6 and filters above it; no key lost in either
// database; and under the plan fewer false positives per absent Get than on
// the bloom(10) twin (bloom lets about 1% through per level probed; the plan
// spends L6's bytes on the levels above, at far lower rates).
func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(&out, 60_000, 5_000); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Log("\n" + text)
	plan := regexp.MustCompile(`useL6 false\):\n  (.*)\n`).FindStringSubmatch(text)
	if plan == nil || !strings.HasSuffix(plan[1], "L6 none") || strings.HasPrefix(plan[1], "L0-L6") {
		t.Fatalf("want a plan with filters above L6 and none on L6, got %q", plan)
	}
	if n := strings.Count(text, ", 0 lost"); n != 2 {
		t.Errorf("keys lost: %d of 2 databases read back every key", n)
	}
	fps := regexp.MustCompile(`false positives per absent Get: ([0-9.]+)`).FindAllStringSubmatch(text, -1)
	if len(fps) != 3 {
		t.Fatalf("want 3 false-positive figures, got %d", len(fps))
	}
	underPlan, _ := strconv.ParseFloat(fps[1][1], 64)
	baseline, _ := strconv.ParseFloat(fps[2][1], 64)
	if baseline == 0 || underPlan >= baseline {
		t.Errorf("false positives per absent Get: %v under the plan, %v on bloom(10); want fewer under the plan", underPlan, baseline)
	}
}
