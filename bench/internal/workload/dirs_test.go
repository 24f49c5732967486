package workload

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realTempDir is t.TempDir() with its symbolic links resolved, so that it
// compares equal to the paths resolvePath returns.
func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// symlink makes link point to target.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// mkdir makes the directory p and its parents.
func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

// keepsLink fails t unless link is still a symbolic link to target.
func keepsLink(t *testing.T, link, target string) {
	t.Helper()
	if got, err := os.Readlink(link); err != nil || got != target {
		t.Errorf("the link %s was not kept: now %q, %v; want a link to %s", link, got, err, target)
	}
}

// absent fails t unless none of paths exists.
func absent(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists: %v", p, err)
		}
	}
}

// runStopped runs the tiny mode with Config.Stop already closed: Run
// creates its directories, stops before measuring anything and cleans up.
func runStopped(t *testing.T, out, dir string) error {
	t.Helper()
	cfg := Defaults("tiny")
	cfg.Out, cfg.Dir = out, dir
	stop := make(chan struct{})
	close(stop)
	cfg.Stop = stop
	_, err := Run(cfg)
	return err
}

// runRefused runs the tiny mode on out and dir, which it must refuse before
// running anything; it returns Run's error.
func runRefused(t *testing.T, out, dir string) error {
	t.Helper()
	cfg := Defaults("tiny")
	cfg.Out, cfg.Dir = out, dir
	res, err := Run(cfg)
	if err == nil || res != nil {
		t.Fatalf("-out %s -dir %s: ran (error %v), want a refusal", out, dir, err)
	}
	return err
}

// TestRefusesNestedDirs checks that a report directory equal to, inside or
// around the data directory is refused before anything is created, and
// that nothing is left behind, parents included.
func TestRefusesNestedDirs(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "new", "a")
	link := filepath.Join(root, "link")
	symlink(t, root, link)
	for _, c := range [][2]string{
		{a, a},
		{filepath.Join(a, "out"), a},
		{a, filepath.Join(a, "data")},
		{filepath.Join(link, "new", "a", "x"), a}, // the same through a symbolic link
		{a + "/", filepath.Join(a, ".")},
		{a + "/x/../../a/y", a}, // ".." through directories to create
	} {
		if err := runRefused(t, c[0], c[1]); !errors.Is(err, errNested) {
			t.Errorf("-out %s -dir %s: %v, want errNested", c[0], c[1], err)
		}
		absent(t, filepath.Join(root, "new"))
	}
	if err := checkApart(filepath.Join(root, "ab"), filepath.Join(root, "a")); err != nil {
		t.Errorf("siblings sharing a prefix refused: %v", err)
	}
}

// TestRefusesNestedThroughDanglingLink is the reported `ln -s D L;
// workload -tiny -dir D -out L/o` with D absent, and its mirror image: the
// link is resolved though it points nowhere yet, the pair refused, and the
// link kept (it was removed as if the run had created it).
func TestRefusesNestedThroughDanglingLink(t *testing.T) {
	t.Chdir(t.TempDir())
	symlink(t, "D", "L")
	for _, c := range [][2]string{{"L/o", "D"}, {"D", "L/d"}, {"L", "D/d"}} {
		if err := runRefused(t, c[0], c[1]); !errors.Is(err, errNested) {
			t.Errorf("-out %s -dir %s: %v, want errNested", c[0], c[1], err)
		}
		keepsLink(t, "L", "D")
		absent(t, "D")
	}
}

// TestRefusesDataDirThroughLinkToAbsentOut is the reported `-out O -dir
// L/d` with L a link to O and O absent: the databases would have gone
// inside the report directory once the run had created O.
func TestRefusesDataDirThroughLinkToAbsentOut(t *testing.T) {
	root := realTempDir(t)
	o, l := filepath.Join(root, "O"), filepath.Join(root, "L")
	symlink(t, o, l)
	err := runRefused(t, o, filepath.Join(l, "d"))
	if !errors.Is(err, errNested) {
		t.Fatalf("%v, want errNested", err)
	}
	if want := filepath.Join(o, "d") + " lies inside " + o; !strings.Contains(err.Error(), want) {
		t.Errorf("%q does not say %q", err, want)
	}
	keepsLink(t, l, o)
	absent(t, o)
}

// TestDotDotCreatesNothingElse is the reported `-dir H1 -out
// H1/r/../../H1out` with H1 absent: the report directory is H1out, so
// neither H1 (which the data directory must then get empty) nor H1/r is
// created for it; and on a refusal of the data directory nothing is left.
func TestDotDotCreatesNothingElse(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := runStopped(t, "H1/r/../../H1out", "H1"); !errors.Is(err, errStopped) {
		t.Fatalf("%v, want errStopped", err)
	}
	absent(t, "H1", "H1out")

	mkdir(t, "full")
	if err := os.WriteFile("full/precious", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runRefused(t, "H1/r/../../H1out", "full"); !errors.Is(err, errDirNotEmpty) {
		t.Fatalf("%v, want errDirNotEmpty", err)
	}
	absent(t, "H1", "H1out")
}

// TestDotDotAfterLink checks that a ".." after a link leaves the link's
// target, as the kernel does, not the link's directory: L/../o is
// deep/o for L -> deep/x, and an existing o beside L is not the run's to
// remove.
func TestDotDotAfterLink(t *testing.T) {
	root := realTempDir(t)
	mkdir(t, filepath.Join(root, "deep", "x"))
	mkdir(t, filepath.Join(root, "o"))
	keep := filepath.Join(root, "o", "precious")
	if err := os.WriteFile(keep, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	l := filepath.Join(root, "L")
	symlink(t, filepath.Join(root, "deep", "x"), l)
	out := l + "/../o" // not filepath.Join, which would drop L
	if got, err := resolvePath(out); got != filepath.Join(root, "deep", "o") || err != nil {
		t.Errorf("resolvePath(%s) = %s, %v; want deep/o", out, got, err)
	}
	if err := runStopped(t, out, filepath.Join(root, "data")); !errors.Is(err, errStopped) {
		t.Fatalf("%v, want errStopped", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the existing o lost its file: %v", err)
	}
	absent(t, filepath.Join(root, "deep", "o"), filepath.Join(root, "data"))
}

// TestDanglingLinks gives a link that points nowhere as -out, as -dir and
// as their parent: the run uses its target (under a missing parent),
// creates both, and removes both when stopped, but never the link.
func TestDanglingLinks(t *testing.T) {
	for _, c := range []struct{ name, out, dir, want string }{
		{"out", "L", "data", "m/t"},
		{"dir", "out", "L", "m/t"},
		{"out parent", "L/o", "data", "m/t/o"},
		{"dir parent", "out", "L/d", "m/t/d"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := realTempDir(t)
			l, target := filepath.Join(root, "L"), filepath.Join(root, "m", "t")
			symlink(t, target, l)
			out, dir := filepath.Join(root, c.out), filepath.Join(root, c.dir)
			p := out
			if strings.HasPrefix(c.name, "dir") {
				p = dir
			}
			if got, err := resolvePath(p); got != filepath.Join(root, c.want) || err != nil {
				t.Errorf("resolvePath(%s) = %s, %v; want %s", p, got, err, c.want)
			}
			if err := runStopped(t, out, dir); !errors.Is(err, errStopped) {
				t.Fatalf("%v, want errStopped", err)
			}
			keepsLink(t, l, target)
			absent(t, filepath.Join(root, "m"), filepath.Join(root, "out"), filepath.Join(root, "data"))
		})
	}
}

// TestRefusesBadPaths checks that a cycle of links and a file where a
// directory must be are refused with the package's errors, and that
// nothing is created for the other directory.
func TestRefusesBadPaths(t *testing.T) {
	root := realTempDir(t)
	loop, file := filepath.Join(root, "loop"), filepath.Join(root, "file")
	symlink(t, loop, loop)
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(root, "fresh", "x")
	for _, c := range [][3]string{
		{filepath.Join(loop, "o"), fresh, "symbolic links"},
		{fresh, filepath.Join(file, "d"), "not a directory"},
		{file, fresh, "not a directory"},
	} {
		err := runRefused(t, c[0], c[1])
		if !strings.HasPrefix(err.Error(), "workload: ") || !strings.Contains(err.Error(), c[2]) {
			t.Errorf("-out %s -dir %s: %q, want a workload error saying %q", c[0], c[1], err, c[2])
		}
		absent(t, filepath.Join(root, "fresh"))
		keepsLink(t, loop, loop)
	}
}

// TestRefusesTempOutInsideDir checks that a new temporary report directory
// counts in the nesting check: with TMPDIR the (empty) data directory,
// the data directory's cleanup would delete the report.
func TestRefusesTempOutInsideDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	if err := runRefused(t, "", dir); !errors.Is(err, errNested) {
		t.Fatalf("%v, want errNested", err)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("the data directory holds %d entries, %v; want it left empty", len(ents), err)
	}
}

// TestCleanupRemovesParents checks that the cleanup of a directory the run
// created removes the parents it created for it, and only those.
func TestCleanupRemovesParents(t *testing.T) {
	root := realTempDir(t)
	dir := filepath.Join(root, "p", "q", "r")
	s, err := checkDir(dir, "x", errDirNotEmpty)
	if err != nil {
		t.Fatal(err)
	}
	got, cleanup, err := s.create()
	if err != nil || got != dir {
		t.Fatalf("create: %q, %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cleanup()
	absent(t, filepath.Join(root, "p"))
	if _, err := os.Stat(root); err != nil {
		t.Errorf("the existing parent was removed: %v", err)
	}
}

// TestCleanupKeepsSharedParent checks that a parent created for the report
// directory and shared with the data directory is neither removed with the
// data directory nor left behind by the report's cleanup that follows.
func TestCleanupKeepsSharedParent(t *testing.T) {
	root := realTempDir(t)
	n := filepath.Join(root, "n")
	o, d, err := checkDirs(filepath.Join(n, "out"), filepath.Join(n, "data"))
	if err != nil {
		t.Fatal(err)
	}
	_, outCleanup, err := o.create()
	if err != nil {
		t.Fatal(err)
	}
	_, cleanup, err := d.create()
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	if _, err := os.Stat(filepath.Join(n, "out")); err != nil {
		t.Fatalf("the data directory's cleanup removed the report directory: %v", err)
	}
	outCleanup()
	absent(t, n)
}

// TestEmptyDirKept checks that an existing empty data directory is emptied
// again, not removed.
func TestEmptyDirKept(t *testing.T) {
	dir := t.TempDir()
	s, err := checkDir(dir, "x", errDirNotEmpty)
	if err != nil {
		t.Fatal(err)
	}
	_, cleanup, err := s.create()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "made-by-run"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cleanup()
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 0 {
		t.Fatalf("after cleanup: %v entries, err %v", len(ents), err)
	}
}
