package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRun runs the example on fewer keys and checks what it prints: with
// Apply the old tables are filtered after the switch or the rollback (most of
// the 4 probes per absent Get rule a table out) and ReadBy says yes; without
// it no filter is read and ReadBy says no; after the compaction only the new
// family's tables are left, in L6, and no key is lost.
func TestRun(t *testing.T) {
	const keys, flushes, gets = 8000, 4, 1000
	var out strings.Builder
	if err := run(&out, keys, flushes, gets); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Log("\n" + text)
	parts := strings.Split(text, "== ")
	if len(parts) != 5 {
		t.Fatalf("want four sections, got %d", len(parts)-1)
	}
	const bloomName, cuckooName = "rocksdb.BuiltinBloomFilter", "pebble_cuckoo.v1"
	probes := regexp.MustCompile(`absent Gets: +(\d+) filter probes, (\d+) tables ruled out`)
	for i, section := range parts[1:] {
		before, after, ok := strings.Cut(section, "after a manual compaction:")
		if !ok {
			t.Fatalf("section %d has no compaction", i)
		}
		was, now := bloomName, cuckooName
		if i >= 2 {
			was, now = now, was
		}
		withApply := i%2 == 0
		if !regexp.MustCompile(`L0 +` + regexp.QuoteMeta(was) + ` +4 `).MatchString(before) {
			t.Errorf("section %d: before the compaction, want 4 %s tables in L0:\n%s", i, was, before)
		}
		m := probes.FindStringSubmatch(before)
		if withApply {
			if m == nil || strings.Contains(before, "NO:") {
				t.Fatalf("section %d, with Apply: absent Gets read no filter or ReadBy says no:\n%s", i, before)
			}
			p, _ := strconv.Atoi(m[1])
			ruledOut, _ := strconv.Atoi(m[2])
			if p < flushes*gets*95/100 || ruledOut < p*95/100 {
				t.Errorf("section %d, with Apply: %d probes, %d ruled out over %d absent Gets and %d tables", i, p, ruledOut, gets, flushes)
			}
		} else {
			if m != nil || !strings.Contains(before, "absent Gets:          no filter read") {
				t.Errorf("section %d, without Apply: absent Gets read a filter:\n%s", i, before)
			}
			if !strings.Contains(before, "NO: these tables are read unfiltered") {
				t.Errorf("section %d, without Apply: ReadBy does not flag the unfiltered tables:\n%s", i, before)
			}
		}
		if strings.Contains(after, was) || !strings.Contains(after, now) || strings.Contains(after, "NO:") {
			t.Errorf("section %d: after the compaction, want only %s tables, read:\n%s", i, now, after)
		}
		if n := strings.Count(section, " 0 lost"); n != 2 {
			t.Errorf("section %d: keys lost:\n%s", i, section)
		}
	}
}
