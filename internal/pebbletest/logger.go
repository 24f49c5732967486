package pebbletest

import (
	"fmt"
	"os"
)

// QuietLogger is a pebble.Logger that drops Pebble's info messages, prints
// errors to stderr (a background goroutine may log after its test has
// finished, so testing.T's Logf cannot be used) and panics on a fatal one.
type QuietLogger struct{}

// Infof implements pebble.Logger.
func (QuietLogger) Infof(string, ...any) {}

// Errorf implements pebble.Logger.
func (QuietLogger) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}

// Fatalf implements pebble.Logger.
func (QuietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}
