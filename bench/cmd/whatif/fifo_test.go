//go:build unix

package main

import (
	"os"
	"syscall"
	"testing"
)

// TestFIFO replaces a file of the database by a named pipe: whatif must
// refuse it, naming it, and exit with status 1 instead of waiting forever
// for a writer.
func TestFIFO(t *testing.T) {
	src := buildDB(t)
	for _, c := range []struct{ name, glob string }{
		{"MANIFEST", "MANIFEST-*"},
		{"OPTIONS", "OPTIONS-*"},
		{"LOCK", "LOCK"},
		{"table", "*.sst"},
		{"WAL", "*.log"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, src)
			path := newest(t, dir, c.glob)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := runCmd(t, "-db", dir)
			checkFailure(t, code, errOut, path, "named pipe")
		})
	}
}
