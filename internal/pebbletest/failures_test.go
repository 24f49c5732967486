package pebbletest

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a TB that records a Fatalf instead of stopping the test.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

// TestFailures checks that Failures fails a check once, with the count and
// the first ten mismatches, its kind defaulted, and passes one without any.
func TestFailures(t *testing.T) {
	r := &recorder{TB: t}
	f := &Failures{T: r, What: "scan"}
	f.Check()
	if r.fatal != "" {
		t.Fatalf("no mismatch, yet: %q", r.fatal)
	}
	for i := range 12 {
		f.Add("key %d", i)
	}
	f.Check()
	if f.Len() != 12 || !strings.HasPrefix(r.fatal, "scan: 12 mismatches against the oracle; first ones:\n  key 0\n") ||
		!strings.HasSuffix(r.fatal, "key 9") {
		t.Errorf("12 mismatches: Len %d, message %q", f.Len(), r.fatal)
	}
	f = &Failures{T: r, What: "get", Kind: "answers differ"}
	f.Add("x")
	f.Check()
	if r.fatal != "get: 1 answers differ; first ones:\n  x" {
		t.Errorf("with a kind: %q", r.fatal)
	}
}
