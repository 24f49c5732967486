package whatif

import (
	"fmt"
	"os"
)

// logger is Pebble's logger under Analyze: Pebble's informational lines are
// kept out of the report, its error lines go to stderr, and a fatal one
// panics. whatif imports no test package, so it keeps its own logger rather
// than the test fixtures' one, which would link package testing into the
// command.
type logger struct{}

// Infof implements pebble.Logger.
func (logger) Infof(string, ...any) {}

// Errorf implements pebble.Logger.
func (logger) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}

// Fatalf implements pebble.Logger. Pebble expects it not to return.
func (logger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}
