//go:build unix

package whatif

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestOpenFIFO checks the guards behind checkFiles: the file system Pebble
// reads through and the LOCK check refuse a named pipe instead of waiting for
// a writer.
func TestOpenFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "LOCK")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		open func() error
	}{
		{"readOnlyFS.Open", func() error {
			f, err := readOnlyFS{vfs.Default}.Open(path)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"lockShared", func() error {
			unlock, err := lockShared(path)
			if err == nil {
				unlock()
			}
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- c.open() }()
			select {
			case err := <-done:
				if !errors.Is(err, errNotRegular) || !strings.Contains(err.Error(), path) {
					t.Errorf("%s on a named pipe: %v, want errNotRegular naming %s", c.name, err, path)
				}
			case <-time.After(time.Minute):
				t.Fatalf("%s on a named pipe did not return within a minute", c.name)
			}
		})
	}
}
