package whatif

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

func TestCatch(t *testing.T) {
	err := catch(func() error {
		logger{}.Fatalf("table %s is corrupt", "000007.sst")
		return nil
	})
	var f fatal
	if !errors.As(err, &f) || !strings.Contains(err.Error(), "table 000007.sst is corrupt") {
		t.Errorf("catch of a Fatalf: %v, want a fatal error with Pebble's message", err)
	}
	want := errors.New("plain")
	if err := catch(func() error { return want }); err != want {
		t.Errorf("catch of an error: %v", err)
	}
	defer func() {
		if r := recover(); r != "other" {
			t.Errorf("catch let through %v, want the panic other", r)
		}
	}()
	_ = catch(func() error { panic("other") })
}

// TestCorruptionNotFatal checks the listener under openReadOnly: Pebble,
// reading the properties of a table with a bad magic number, returns an error
// naming it instead of calling Fatalf, even without whatif's own check of the
// tables before it.
func TestCorruptionNotFatal(t *testing.T) {
	src := t.TempDir()
	buildDB(t, src)
	dir := copyDB(t, src)
	tables, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil || len(tables) == 0 {
		t.Fatalf("no tables: %v", err)
	}
	path := tables[0]
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	db, _, _, closeDB, err := openReadOnly(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	err = catch(func() error {
		_, err := db.SSTables(pebble.WithProperties())
		return err
	})
	defer func() {
		if err := closeDB(err); err != nil {
			t.Error(err)
		}
	}()
	var f fatal
	if err == nil || errors.As(err, &f) || !strings.Contains(namePath(err).Error(), path) {
		t.Errorf("SSTables on a corrupt table: %v, want an error naming %s and no fatal error", err, path)
	}
}
