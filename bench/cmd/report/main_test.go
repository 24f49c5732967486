package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunTiny(t *testing.T) {
	out := t.TempDir()
	var stderr bytes.Buffer
	if err := run([]string{"-tiny", "-only", "fpr,build", "-out", out}, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "go run ./bench/cmd/report -tiny -only fpr,build") {
		t.Error("REPORT.md lacks the command line")
	}
	if !strings.Contains(stderr.String(), "done in") {
		t.Errorf("no progress on stderr: %q", stderr.String())
	}
}

func TestRunBadFlags(t *testing.T) {
	var stderr bytes.Buffer
	if err := run(nil, &stderr); err == nil {
		t.Error("no -out accepted")
	}
	if err := run([]string{"-tiny", "-only", "nope", "-out", t.TempDir()}, &stderr); err == nil {
		t.Error("unknown section accepted")
	}
	for _, f := range []string{"1", "17", "x", "4,,8"} {
		if err := run([]string{"-tiny", "-only", "load", "-loadf", f, "-out", t.TempDir()}, &stderr); err == nil {
			t.Errorf("-loadf %q accepted", f)
		}
	}
}
