package progress

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPlain checks what a writer that is not a terminal receives: plain
// lines, every stage, ticks under their stage and throttled, no escapes.
func TestPlain(t *testing.T) {
	var b bytes.Buffer
	p := New(&b)
	p.Tick("before any stage")
	p.Stage("load f=%d", 8)
	p.Tick("dropped: a line was printed just now")
	p.out.last = time.Time{}
	p.Tick("%d inserted", 1024)
	p.Stage("done")
	want := []string{"before any stage", "load f=8", "load f=8: 1024 inserted", "done"}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %q, want lines ending in %q", b.String(), want)
	}
	prefix := regexp.MustCompile(`^\[\d+\.\ds\] `)
	for i, l := range lines {
		if !prefix.MatchString(l) || strings.TrimPrefix(l, prefix.FindString(l)) != want[i] {
			t.Errorf("line %d is %q, want %q after the time", i, l, want[i])
		}
	}
	if strings.ContainsAny(b.String(), "\r\033") {
		t.Errorf("escapes written to a writer that is not a terminal: %q", b.String())
	}
}

// TestTerminal checks the redraw on a terminal: a tick is drawn over the
// last one, cut to maxTick, and a stage erases it and ends its line.
func TestTerminal(t *testing.T) {
	var b bytes.Buffer
	p := New(&b)
	p.out.tty = true
	p.Stage("a")
	p.out.last = time.Time{}
	p.Tick("one")
	p.out.last = time.Time{}
	p.Tick("%s", strings.Repeat("x", 200))
	p.Stage("b")
	got := regexp.MustCompile(`\[\d+\.\ds\] `).ReplaceAllString(b.String(), "")
	want := "a\n" + "a: one" + "\r\033[K" + ("a: " + strings.Repeat("x", maxTick-len("a: ")-len("[0.0s] "))) + "\r\033[K" + "b\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestForks checks that forks keep their own stages, share the writer, and
// may print from several goroutines.
func TestForks(t *testing.T) {
	var b syncBuffer
	p := New(&b)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func(f *Printer) {
			defer wg.Done()
			f.Stage("worker %d", i)
			f.Tick("tick")
		}(p.Fork())
	}
	wg.Wait()
	for i := range 4 {
		if !strings.Contains(b.String(), "] worker "+string(rune('0'+i))+"\n") {
			t.Errorf("worker %d's stage missing: %q", i, b.String())
		}
	}
	var nilp *Printer
	nilp.Fork().Stage("nothing")
	nilp.Tick("nothing")
	New(nil).Stage("nothing")
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
