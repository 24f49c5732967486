package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRun runs the example on fewer keys and checks what it prints: db.Get
// asks no L6 filter; lookup.Has asks one per absent key and rules nearly all
// of them out (cuckoo(10) lets about 0.7% through); lookup.Adaptive.Has
// moves to the filtered path after a score of absent keys; every present key
// is found by each.
func TestRun(t *testing.T) {
	keys, asks := 20000, 2000
	if testing.Short() {
		keys, asks = 5000, 500
	}
	var out strings.Builder
	if err := run(&out, keys, asks); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Log("\n" + text)
	row := func(name string) (probes, ruledOut, found int) {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` +(\d+) +(\d+) +(\d+)$`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no row for %s", name)
		}
		probes, _ = strconv.Atoi(m[1])
		ruledOut, _ = strconv.Atoi(m[2])
		found, _ = strconv.Atoi(m[3])
		return probes, ruledOut, found
	}
	for _, name := range []string{"db.Get", "lookup.Has", "lookup.Adaptive.Has"} {
		probes, ruledOut, found := row(name)
		if found != asks {
			t.Errorf("%s found %d of %d present keys", name, found, asks)
		}
		switch name {
		case "db.Get":
			if probes != 0 {
				t.Errorf("db.Get asked %d L6 filters, want none", probes)
			}
		case "lookup.Has":
			if probes != asks || ruledOut < asks*97/100 {
				t.Errorf("lookup.Has: %d probes, %d ruled out, for %d absent keys", probes, ruledOut, asks)
			}
		default:
			if probes < asks*9/10 || ruledOut < probes*97/100 {
				t.Errorf("Adaptive: %d probes, %d ruled out, for %d absent keys", probes, ruledOut, asks)
			}
		}
	}
}
