package workload

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// progress reports where a run is. On a terminal it writes one line,
// rewritten in place, at most every 200 ms; elsewhere (a log file, a pipe)
// it writes plain lines: every stage, and a tick at most every 10 s.
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time
	last  time.Time
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, tty: isTerminal(w), start: time.Now()}
}

// isTerminal says whether w is a character device, as a terminal is.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progress) stage(f string, args ...any) {
	p.print(fmt.Sprintf(f, args...))
}

func (p *progress) tick(f string, args ...any) {
	every := 200 * time.Millisecond
	if !p.tty {
		every = 10 * time.Second
	}
	if time.Since(p.last) < every {
		return
	}
	p.print(fmt.Sprintf(f, args...))
}

func (p *progress) print(s string) {
	if p.w == nil {
		return
	}
	p.last = time.Now()
	el := time.Since(p.start).Truncate(time.Second)
	if !p.tty {
		fmt.Fprintf(p.w, "[%s] %s\n", el, s)
		return
	}
	if len(s) > 110 {
		s = s[:110]
	}
	fmt.Fprintf(p.w, "\r\033[K[%s] %s", el, s)
}

func (p *progress) done() {
	if p.w == nil {
		return
	}
	prefix := ""
	if p.tty {
		prefix = "\r\033[K"
	}
	fmt.Fprintf(p.w, "%s[%s] done\n", prefix, time.Since(p.start).Truncate(time.Second))
}

// scan reads every key of db once, which brings every data and index block
// into the block cache.
func scan(db *pebble.DB) error {
	it, err := db.NewIter(nil)
	if err != nil {
		return err
	}
	for valid := it.First(); valid; valid = it.Next() {
	}
	return it.Close()
}
