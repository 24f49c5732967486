// Package progress prints where a long run is, for a person watching it or a
// log file keeping it. A stage starts a phase and is always printed, on a
// line of its own; a tick is a detail of the current stage ("stage: detail"),
// printed only when no line was printed for a while.
//
// On a terminal each tick is drawn over the one before it (a carriage return
// and an erase-line escape) and the next stage erases it, so the screen keeps
// the stages and one live detail. On anything else (a file, a pipe, a test's
// buffer) only plain lines are written, with no escapes, and ticks are rarer.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// How often a tick may be printed: on a terminal it only redraws a line; in
// a log every tick is a line kept.
const (
	terminalEvery = 200 * time.Millisecond
	logEvery      = 10 * time.Second
)

// maxTick is the length a tick is cut to on a terminal, so that it does not
// wrap: the erase-line escape clears only the last row of a wrapped line.
const maxTick = 110

// Printer prints stages and ticks to one writer. Workers running side by side
// each take a Fork: it shares the writer, the clock and the throttle, and
// keeps its own stage, so that a tick is printed under the stage it belongs
// to. A nil *Printer, and one on a nil writer, print nothing; both are valid
// receivers for every method. A Printer is not safe for concurrent use, its
// forks are: each goroutine uses its own.
type Printer struct {
	out   *output
	stage string
}

// output is what the forks of one Printer share.
type output struct {
	mu     sync.Mutex
	w      io.Writer
	tty    bool
	start  time.Time
	last   time.Time // when a line was last printed
	ticked bool      // a tick is on the terminal, not ended by a newline
}

// New returns a Printer that writes to w (nil: nowhere), with the time since
// now before each line. It writes terminal escapes only if w is an *os.File
// on a terminal.
func New(w io.Writer) *Printer {
	return &Printer{out: &output{w: w, tty: isTerminal(w), start: time.Now()}}
}

// isTerminal reports whether w is a character device, as a terminal is.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Fork returns a Printer on the same writer with no stage of its own yet.
// A nil Printer forks to nil.
func (p *Printer) Fork() *Printer {
	if p == nil {
		return nil
	}
	return &Printer{out: p.out}
}

// Stage starts a phase: its line is always printed.
func (p *Printer) Stage(format string, args ...any) {
	if p == nil || p.out.w == nil {
		return
	}
	p.stage = fmt.Sprintf(format, args...)
	p.out.print(p.stage, true)
}

// Tick prints a detail of the current stage, unless a line was printed
// less than 200 ms ago on a terminal, 10 s elsewhere.
func (p *Printer) Tick(format string, args ...any) {
	if p == nil || p.out.w == nil {
		return
	}
	s := fmt.Sprintf(format, args...)
	if p.stage != "" {
		s = p.stage + ": " + s
	}
	p.out.print(s, false)
}

// print writes one line: a stage always, a tick if the throttle lets it.
func (o *output) print(s string, stage bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	if !stage {
		every := logEvery
		if o.tty {
			every = terminalEvery
		}
		if now.Sub(o.last) < every {
			return
		}
	}
	o.last = now
	line := "[" + elapsed(now.Sub(o.start)) + "] " + s
	if !o.tty {
		fmt.Fprintln(o.w, line)
		return
	}
	if o.ticked {
		fmt.Fprint(o.w, "\r\033[K")
	}
	if stage {
		fmt.Fprintln(o.w, line)
	} else {
		fmt.Fprint(o.w, cut(line, maxTick))
	}
	o.ticked = !stage
}

// elapsed formats the time since the start: tenths of a second in the first
// minute, whole seconds after it.
func elapsed(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Truncate(time.Second).String()
}

// cut shortens s to at most n runes.
func cut(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}
