package main

import (
	"os"
	"testing"
)

// TestCorruptTable damages a table's footer, magic number or length: whatif
// must exit with status 1 and a message that names the table, not crash.
// Pebble hands a corrupt table it opens to the logger's Fatalf.
func TestCorruptTable(t *testing.T) {
	src := buildDB(t)
	for _, c := range []struct {
		name   string
		damage func(b []byte) []byte
		want   string
	}{
		{"bad magic number", func(b []byte) []byte { b[len(b)-1] ^= 0xff; return b }, "bad magic number"},
		{"bad format version", func(b []byte) []byte { b[len(b)-9] ^= 0x7f; return b }, "unsupported pebble format version"},
		{"footer zeroed", func(b []byte) []byte { clear(b[len(b)-64:]); return b }, "bad magic number"},
		{"footer handles garbled", func(b []byte) []byte {
			for i := len(b) - 50; i < len(b)-12; i++ {
				b[i] ^= 0x5a
			}
			return b
		}, "invalid table"},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, "size mismatch"},
		{"empty", func(b []byte) []byte { return nil }, "size mismatch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, src)
			path := newest(t, dir, "*.sst")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, c.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := runCmd(t, "-db", dir)
			checkFailure(t, code, errOut, path, c.want)
		})
	}
}
