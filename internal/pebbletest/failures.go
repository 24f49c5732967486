package pebbletest

import (
	"fmt"
	"strings"
)

// Failures collects a check's mismatches and fails the test once, with the
// count and the first ten.
type Failures struct {
	T    TB
	What string // the check, named before the count
	// Kind names the mismatches after the count; "" means "mismatches
	// against the oracle".
	Kind string
	n    int
	msgs []string
}

// Add records one mismatch.
func (f *Failures) Add(format string, args ...any) {
	f.n++
	if len(f.msgs) < 10 {
		f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
	}
}

// Len is the number of mismatches recorded.
func (f *Failures) Len() int { return f.n }

// Check fails the test if any mismatch was recorded.
func (f *Failures) Check() {
	f.T.Helper()
	if f.n == 0 {
		return
	}
	kind := f.Kind
	if kind == "" {
		kind = "mismatches against the oracle"
	}
	f.T.Fatalf("%s: %d %s; first ones:\n  %s", f.What, f.n, kind, strings.Join(f.msgs, "\n  "))
}
