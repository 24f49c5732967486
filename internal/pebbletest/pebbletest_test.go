package pebbletest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

func TestSeedReplay(t *testing.T) {
	t.Setenv(LongEnv, "")
	t.Setenv(SeedEnv, "")
	if s := FixedSeed(t, 7); s != 7 {
		t.Errorf("FixedSeed(7) = %d by default", s)
	}
	t.Setenv(SeedEnv, "42")
	if s := Seed(t); s != 42 {
		t.Errorf("Seed = %d with %s=42", s, SeedEnv)
	}
	if s := FixedSeed(t, 7); s != 42 {
		t.Errorf("FixedSeed(7) = %d with %s=42", s, SeedEnv)
	}
	if Rand(42).Uint64() != Rand(42).Uint64() {
		t.Error("Rand(42) differs from itself")
	}
}

func TestScale(t *testing.T) {
	t.Setenv(LongEnv, "1")
	if !Long() || Scale(1, 2, 3) != 3 {
		t.Errorf("%s=1: Long() = %v, Scale = %d", LongEnv, Long(), Scale(1, 2, 3))
	}
	t.Setenv(LongEnv, "")
	want := 2
	if testing.Short() {
		want = 1
	}
	if Long() || Scale(1, 2, 3) != want {
		t.Errorf("by default: Long() = %v, Scale = %d, want %d", Long(), Scale(1, 2, 3), want)
	}
}

func TestCountingFS(t *testing.T) {
	fs := NewCountingFS(vfs.NewMem())
	for _, name := range []string{"000001.sst", "MANIFEST"} {
		f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	read := func(name string, offs ...int64) {
		f, err := fs.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, off := range offs {
			if _, err := f.ReadAt(make([]byte, 10), off); err != nil {
				t.Fatal(err)
			}
		}
	}
	read("000001.sst", 0, 50, 50)
	read("MANIFEST", 0) // not an sstable: not counted
	in, other := fs.Count(map[string]map[int64]bool{"000001.sst": {50: true}})
	if in != 2 || other != 1 {
		t.Errorf("Count = %d, %d; want 2 in the block at 50, 1 other", in, other)
	}
	var bytes int64
	fs.Each(func(_ string, _ int64, r Reads) { bytes += r.Bytes })
	if bytes != 30 {
		t.Errorf("%d bytes read, want 30", bytes)
	}
	fs.Reset()
	if in, other := fs.Count(nil); in != 0 || other != 0 {
		t.Errorf("after Reset: %d, %d reads", in, other)
	}
}

func TestFPRBound(t *testing.T) {
	// 1000 keys at load 1/2 with 10-bit fingerprints: 8*0.5/1023 a probe.
	lambda, bound := FPRBound(cuckoopolicy.Info{FingerprintBits: 10, Buckets: 500, Keys: 1000}, 1023)
	if lambda != 4 || bound != 4+5*2+5 {
		t.Errorf("FPRBound = %v, %v; want 4, 19", lambda, bound)
	}
	if _, b := FPRBound(cuckoopolicy.Info{}, 10); b < 1e300 {
		t.Errorf("an empty Info gave bound %v, want +Inf", b)
	}
}

// TestSnapshotChanges checks that Changes finds a file created, removed,
// rewritten with bytes of the same length, and touched, the directory whose
// entries changed, and nothing in a directory left alone.
func TestSnapshotChanges(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a", "aaaa")
	write("b", "bbbb")
	write("c", "cccc")
	before, err := Snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := Snapshot(dir); err != nil || len(Changes(before, again)) != 0 {
		t.Fatalf("untouched directory: %v %v", Changes(before, again), err)
	}
	stA, err := os.Stat(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	write("a", "AAAA") // same length, same time: only the bytes differ
	if err := os.Chtimes(filepath.Join(dir, "a"), stA.ModTime(), stA.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "c"), later, later); err != nil {
		t.Fatal(err)
	}
	write("d", "")
	after, err := Snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := Changes(before, after)
	want := []string{dir + " changed", // its entries and so its times
		filepath.Join(dir, "a") + " changed", filepath.Join(dir, "b") + " was removed",
		filepath.Join(dir, "c") + " changed", filepath.Join(dir, "d") + " was created"}
	if len(got) != len(want) {
		t.Fatalf("changes %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("change %d: %q, want %q...", i, got[i], want[i])
		}
	}
}

// TestSettled checks that settle waits out a directory that keeps changing
// for longer than its quiet period, returns the state it settled in, and
// gives up at its deadline on one that does not stop.
func TestSettled(t *testing.T) {
	dir := t.TempDir()
	churn := func(stop <-chan struct{}, done chan<- time.Time) {
		var last time.Time
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- last
				return
			default:
			}
			name := filepath.Join(dir, "f"+strconv.Itoa(i%3))
			if err := os.WriteFile(name, []byte(strconv.Itoa(i)), 0o644); err != nil {
				t.Error(err)
			}
			last = time.Now()
			time.Sleep(5 * time.Millisecond)
		}
	}

	stop, done := make(chan struct{}), make(chan time.Time, 1)
	go churn(stop, done)
	time.AfterFunc(300*time.Millisecond, func() { close(stop) })
	s, err := settle(dir, 100*time.Millisecond, 30*time.Second)
	returned := time.Now()
	last := <-done
	if err != nil {
		t.Fatal(err)
	}
	if returned.Before(last) {
		t.Errorf("settle returned %v before the last change", last.Sub(returned))
	}
	CheckUnchanged(t, s, MustSnapshot(t, dir))

	stop, done = make(chan struct{}), make(chan time.Time, 1)
	go churn(stop, done)
	_, err = settle(dir, 100*time.Millisecond, 300*time.Millisecond)
	close(stop)
	<-done
	if err == nil || !strings.Contains(err.Error(), "still changing") {
		t.Errorf("settle on a directory that keeps changing: %v", err)
	}
}

// TestNoTestingInCommands checks that no command under bench/cmd links
// package testing, which this package, shared with the tests, would bring
// in if it imported it.
func TestNoTestingInCommands(t *testing.T) {
	goCmd, err := exec.LookPath("go") // go test puts its own first in PATH
	if err != nil {
		t.Fatalf("no go command: %v", err)
	}
	out, err := exec.Command(goCmd, "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}",
		"github.com/pebble-cuckoo/pebble-cuckoo/bench/cmd/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 5 {
		t.Fatalf("go list found %d commands, want the 5 or more under bench/cmd", len(lines))
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if slices.Contains(f[1:], "testing") {
			t.Errorf("%s links package testing", f[0])
		}
	}
}
