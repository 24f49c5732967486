package pebbletest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// FileState is what Snapshot records of a file: its size, mode and
// modification time and, for a regular file other than LOCK, a hash of its
// bytes.
type FileState struct {
	Size    int64
	Mode    fs.FileMode
	ModTime int64 // nanoseconds
	Sum     [32]byte
}

// Snapshot records every file under dir, dir included, to show that a
// read-only tool left a database untouched. It does not read LOCK's bytes:
// closing a descriptor of LOCK would drop the fcntl lock that a database
// open in this process holds on it. Files removed during the walk, as an
// open database removes obsolete ones, are left out.
func Snapshot(dir string) (map[string]FileState, error) {
	m := map[string]FileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		s := FileState{Size: st.Size(), Mode: st.Mode(), ModTime: st.ModTime().UnixNano()}
		if st.Mode().IsRegular() && d.Name() != "LOCK" {
			b, err := os.ReadFile(p)
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			s.Sum = sha256.Sum256(b)
		}
		m[p] = s
		return nil
	})
	return m, err
}

// Settled returns the Snapshot of dir once it has stopped changing: Pebble
// removes obsolete files (WALs, MANIFESTs, OPTIONS) in the background after
// Open, and on a busy machine that may take a while. It polls every 20 ms
// until dir has stayed the same for 200 ms, and returns an error if that has
// not happened within 30 s.
func Settled(dir string) (map[string]FileState, error) {
	return settle(dir, 200*time.Millisecond, 30*time.Second)
}

// settle is Settled with its quiet period and deadline as parameters.
func settle(dir string, quiet, timeout time.Duration) (map[string]FileState, error) {
	const poll = 20 * time.Millisecond
	deadline := time.Now().Add(timeout)
	last, err := Snapshot(dir)
	since := time.Now()
	for {
		time.Sleep(poll)
		s, serr := Snapshot(dir)
		now := time.Now()
		switch {
		case serr != nil || err != nil || !maps.Equal(s, last):
			last, err, since = s, serr, now
		case now.Sub(since) >= quiet:
			return s, nil
		}
		if now.After(deadline) {
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("pebbletest: %s still changing after %v", dir, timeout)
		}
	}
}

// Changes lists, sorted, the files after removed, changed or created
// against before; none if dir was left untouched.
func Changes(before, after map[string]FileState) []string {
	var c []string
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			c = append(c, p+" was removed")
		case a != b:
			c = append(c, fmt.Sprintf("%s changed: %+v, was %+v", p, a, b))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			c = append(c, p+" was created")
		}
	}
	slices.Sort(c)
	return c
}

// TB is the part of testing.TB this package's helpers use, so that it does
// not link the testing package into the benchmark commands.
type TB interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Error(args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// MustSnapshot is Snapshot for a test: it fails the test on an error.
func MustSnapshot(t TB, dir string) map[string]FileState {
	t.Helper()
	s, err := Snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// CheckUnchanged reports each of Changes(before, after) as a test error.
func CheckUnchanged(t TB, before, after map[string]FileState) {
	t.Helper()
	for _, c := range Changes(before, after) {
		t.Error(c)
	}
}
