package whatif

import (
	"fmt"
	"os"

	"github.com/cockroachdb/pebble/v2"
)

// logger is Pebble's logger under Analyze: Pebble's informational lines are
// kept out of the report, its error lines go to stderr, and a fatal one
// panics with a fatal value, which Analyze recovers and returns as an error
// (see catch). It is not the test fixtures' pebbletest.QuietLogger, which
// the tests use to build databases: that one panics with a string, which
// catch would let through, and the command links no test fixtures.
type logger struct{}

// Infof implements pebble.Logger.
func (logger) Infof(string, ...any) {}

// Errorf implements pebble.Logger.
func (logger) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}

// Fatalf implements pebble.Logger. Pebble expects it not to return.
func (logger) Fatalf(format string, args ...any) {
	panic(fatal(fmt.Sprintf(format, args...)))
}

// fatal is what logger.Fatalf panics with, and the error catch returns for it.
type fatal string

func (f fatal) Error() string { return "whatif: Pebble reported a fatal error: " + string(f) }

// catch calls f, which calls into Pebble, and returns its error; a fatal
// error Pebble raises meanwhile through logger.Fatalf is returned as a fatal
// error. Any other panic goes on. After a fatal error Pebble's state is
// unknown: the database is left unclosed.
func catch(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			ft, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			err = ft
		}
	}()
	return f()
}

// events are Pebble's event listeners under Analyze. A corrupt file is
// reported to DataCorruption, whose default calls Fatalf; the error also
// comes back to the caller, so the listener has nothing to do.
func events() *pebble.EventListener {
	return &pebble.EventListener{DataCorruption: func(pebble.DataCorruptionInfo) {}}
}
