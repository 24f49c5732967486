package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain runs the command itself when the tests start this binary with
// WORKLOAD_RUN_MAIN set, so that the exit status is the real command's.
func TestMain(m *testing.M) {
	if os.Getenv("WORKLOAD_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runCmd(t *testing.T, args ...string) (stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "WORKLOAD_RUN_MAIN=1")
	var e bytes.Buffer
	cmd.Stderr = &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return e.String(), 0
	case errors.As(err, &exit):
		return e.String(), exit.ExitCode()
	default:
		t.Fatal(err)
		return "", -1
	}
}

// TestRefusesNonEmptyDir: a data directory that holds anything is refused
// with exit status 1 and left as it was; no report is written.
func TestRefusesNonEmptyDir(t *testing.T) {
	dir, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	keep := filepath.Join(dir, "precious")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr, code := runCmd(t, "-tiny", "-dir", dir, "-out", out)
	if code != 1 || !strings.Contains(stderr, "not empty") {
		t.Fatalf("exit %d, stderr %q; want 1 and a refusal", code, stderr)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "x" {
		t.Fatalf("the directory's file changed: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(out, "WORKLOAD.md")); err == nil {
		t.Error("a report was written for a refused run")
	}
}

// TestRefusesNonEmptyOut: a report directory that holds anything is
// refused with exit status 1 before anything runs, and left as it was.
func TestRefusesNonEmptyOut(t *testing.T) {
	out, data := t.TempDir(), filepath.Join(t.TempDir(), "data")
	keep := filepath.Join(out, "WORKLOAD.md")
	if err := os.WriteFile(keep, []byte("earlier"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr, code := runCmd(t, "-tiny", "-dir", data, "-out", out)
	if code != 1 || !strings.Contains(stderr, "report directory is not empty") {
		t.Fatalf("exit %d, stderr %q; want 1 and a refusal", code, stderr)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "earlier" {
		t.Fatalf("the earlier report changed: %q, %v", b, err)
	}
	if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a data directory was created: %v", err)
	}
}

// TestBadThreads: a malformed flag is a usage error.
func TestBadThreads(t *testing.T) {
	if _, code := runCmd(t, "-tiny", "-threads", "0", "-out", t.TempDir()); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
}

// TestRefusesNestedDirs: -out equal to or inside -dir (or -dir inside -out)
// is refused with exit status 1 before anything is created: a data
// directory's cleanup would otherwise delete the report.
func TestRefusesNestedDirs(t *testing.T) {
	root := t.TempDir()
	x := filepath.Join(root, "new", "x")
	for _, c := range [][2]string{{x, x}, {filepath.Join(x, "report"), x}, {x, filepath.Join(x, "data")}} {
		stderr, code := runCmd(t, "-tiny", "-out", c[0], "-dir", c[1])
		if code != 1 || !strings.Contains(stderr, "must be apart") || strings.Contains(stderr, "wrote") {
			t.Errorf("-out %s -dir %s: exit %d, stderr %q; want 1 and a refusal", c[0], c[1], code, stderr)
		}
		if _, err := os.Stat(filepath.Join(root, "new")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("-out %s -dir %s: a directory was created: %v", c[0], c[1], err)
		}
	}
}

// TestRefusesNestedThroughDanglingLink: the reported `ln -s D L; workload
// -tiny -dir D -out L/o` with D absent is refused with exit status 1, and
// the link, which points nowhere, is kept.
func TestRefusesNestedThroughDanglingLink(t *testing.T) {
	root := t.TempDir()
	d, l := filepath.Join(root, "D"), filepath.Join(root, "L")
	if err := os.Symlink(d, l); err != nil {
		t.Fatal(err)
	}
	stderr, code := runCmd(t, "-tiny", "-dir", d, "-out", filepath.Join(l, "o"))
	if code != 1 || !strings.Contains(stderr, "must be apart") {
		t.Errorf("exit %d, stderr %q; want 1 and a refusal", code, stderr)
	}
	if got, err := os.Readlink(l); err != nil || got != d {
		t.Errorf("the link was not kept: %q, %v", got, err)
	}
	if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a directory was created: %v", err)
	}
}
