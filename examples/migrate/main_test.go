package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRun runs the example on fewer keys and checks what it prints: with
// Apply the bloom tables are filtered after the switch (most of the 4 probes
// per absent Get rule a table out), without it no filter is read; after the
// compaction only cuckoo tables are left, in L6, and no key is lost.
func TestRun(t *testing.T) {
	const keys, flushes, gets = 8000, 4, 1000
	var out strings.Builder
	if err := run(&out, keys, flushes, gets); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Log("\n" + text)
	parts := strings.Split(text, "== ")
	if len(parts) != 3 {
		t.Fatalf("want two sections, got %d", len(parts)-1)
	}
	probes := regexp.MustCompile(`absent Gets: +(\d+) filter probes, (\d+) tables ruled out`)
	for i, section := range parts[1:] {
		before, after, ok := strings.Cut(section, "after a manual compaction:")
		if !ok {
			t.Fatalf("section %d has no compaction", i)
		}
		if !strings.Contains(before, "L0    rocksdb.BuiltinBloomFilter      4") {
			t.Errorf("section %d: before the compaction, want 4 bloom tables in L0:\n%s", i, before)
		}
		m := probes.FindStringSubmatch(before)
		if i == 0 {
			if m == nil {
				t.Fatalf("with Apply, absent Gets read no filter:\n%s", before)
			}
			p, _ := strconv.Atoi(m[1])
			ruledOut, _ := strconv.Atoi(m[2])
			if p < flushes*gets*95/100 || ruledOut < p*95/100 {
				t.Errorf("with Apply: %d probes, %d ruled out over %d absent Gets and %d tables", p, ruledOut, gets, flushes)
			}
		} else if m != nil || !strings.Contains(before, "absent Gets:          no filter read") {
			t.Errorf("without Apply, absent Gets read a filter:\n%s", before)
		}
		if strings.Contains(after, "rocksdb.BuiltinBloomFilter") || !strings.Contains(after, "pebble_cuckoo.v1") {
			t.Errorf("section %d: after the compaction, want only cuckoo tables:\n%s", i, after)
		}
		if n := strings.Count(section, " 0 lost"); n != 2 {
			t.Errorf("section %d: keys lost:\n%s", i, section)
		}
	}
}
