package whatif

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

func TestBadInput(t *testing.T) {
	t.Run("not a database", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := pebbletest.MustSnapshot(t, dir)
		_, err := Analyze(Config{Dir: dir})
		if !errors.Is(err, errNotDB) {
			t.Errorf("Analyze on a directory of notes: %v, want errNotDB", err)
		}
		pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, dir))
	})
	t.Run("missing directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "nothing")
		if _, err := Analyze(Config{Dir: dir}); err == nil {
			t.Error("Analyze on a missing directory succeeded")
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Analyze created %s: %v", dir, err)
		}
	})
	dir := t.TempDir()
	buildDB(t, dir)
	t.Run("unknown comparer", func(t *testing.T) {
		before := pebbletest.MustSnapshot(t, dir)
		_, err := Analyze(Config{Dir: dir, Comparer: "reverse"})
		if err == nil || !strings.Contains(err.Error(), "unknown comparer") {
			t.Errorf("Analyze with comparer reverse: %v", err)
		}
		pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, dir))
	})
	t.Run("in use", func(t *testing.T) {
		db, err := pebble.Open(dir, dbOptions(false))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		before, err := pebbletest.Settled(dir)
		if err != nil {
			t.Fatal(err)
		}
		// Twice: the first refusal must leave this process's lock in place.
		for range 2 {
			if _, err = Analyze(Config{Dir: dir}); !errors.Is(err, errInUse) {
				t.Errorf("Analyze on an open database: %v, want errInUse", err)
			}
		}
		pebbletest.CheckUnchanged(t, before, pebbletest.MustSnapshot(t, dir))
	})
	t.Run("read-only file system", func(t *testing.T) {
		fs := readOnlyFS{vfs.Default}
		if _, err := fs.Create(filepath.Join(dir, "x"), vfs.WriteCategoryUnspecified); !errors.Is(err, errReadOnly) {
			t.Errorf("Create: %v", err)
		}
		if err := fs.Remove(filepath.Join(dir, "LOCK")); !errors.Is(err, errReadOnly) {
			t.Errorf("Remove: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "LOCK")); err != nil {
			t.Error(err)
		}
	})
}
