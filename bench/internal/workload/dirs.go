package workload

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// errNested is returned when the report and the data directories are the
// same or one lies inside the other: the cleanup of the data directory
// would delete the report, or the report would be written among the
// databases.
var errNested = errors.New("workload: the report directory (-out) and the data directory (-dir) must be apart")

// maxLinks bounds the symbolic links resolvePath follows, as Linux bounds
// them (ELOOP): a cycle of links is refused, not followed forever.
const maxLinks = 40

// dirSpec is a directory a run will use, resolved and checked before
// anything is created.
type dirSpec struct {
	path    string   // absolute, with no symbolic link, "." or ".." in it
	pattern string   // a new temporary directory's name pattern; path is then pattern+"*" in os.TempDir()
	missing []string // the directories to create, outermost first and path last; nil: path exists and is empty
}

// checkDirs checks the report directory out and the data directory dir
// (each absent or empty, "" for a new temporary one) and that they are
// apart once resolved. It creates nothing.
func checkDirs(out, dir string) (o, d dirSpec, err error) {
	if o, err = checkDir(out, "pebble-workload-report-", errOutNotEmpty); err != nil {
		return o, d, err
	}
	if d, err = checkDir(dir, "pebble-workload-", errDirNotEmpty); err != nil {
		return o, d, err
	}
	if err = checkApart(o.path, d.path); err != nil {
		return o, d, fmt.Errorf("%w (-out %q, -dir %q)", err, out, dir)
	}
	return o, d, nil
}

// checkDir resolves dir and checks that it is an empty directory or
// absent (else notEmpty), creating nothing; dir "" stands for a new
// temporary directory named after pattern.
func checkDir(dir, pattern string, notEmpty error) (dirSpec, error) {
	if dir == "" {
		tmp, err := resolvePath(os.TempDir())
		if err != nil {
			return dirSpec{}, err
		}
		return dirSpec{path: filepath.Join(tmp, pattern+"*"), pattern: pattern}, nil
	}
	p, err := resolvePath(dir)
	if err != nil {
		return dirSpec{}, err
	}
	ents, err := os.ReadDir(p)
	switch {
	case err == nil && len(ents) > 0:
		return dirSpec{}, fmt.Errorf("%w: %s holds %d entries; give an empty or absent directory", notEmpty, dir, len(ents))
	case err == nil:
		return dirSpec{path: p}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return dirSpec{}, fmt.Errorf("workload: %s: %w", dir, err)
	}
	s := dirSpec{path: p}
	for d := p; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return dirSpec{}, fmt.Errorf("workload: %s: %w", dir, err)
		}
		s.missing = append(s.missing, d)
	}
	slices.Reverse(s.missing)
	return s, nil
}

// create makes s's directory. It returns the directory and a function that
// removes what the run put in it (the directory was empty or absent, so
// everything in it is the run's) and then each directory create made,
// innermost first, if empty; a directory create did not make, or one
// holding anything else, is never removed.
func (s dirSpec) create() (string, func(), error) {
	var made []string
	removeMade := func() {
		for _, d := range slices.Backward(made) {
			os.Remove(d)
		}
	}
	path := s.path
	if s.pattern != "" {
		d, err := os.MkdirTemp(filepath.Dir(s.path), s.pattern)
		if err != nil {
			return "", nil, fmt.Errorf("workload: %w", err)
		}
		path, made = d, []string{d}
	}
	for i, d := range s.missing {
		err := os.Mkdir(d, 0o755)
		if err != nil && i < len(s.missing)-1 && errors.Is(err, fs.ErrExist) && isDir(d) {
			continue // made since the check, for the other directory: not this one's to remove
		}
		if err != nil {
			removeMade()
			return "", nil, fmt.Errorf("workload: %w", err)
		}
		made = append(made, d)
	}
	return path, func() {
		ents, _ := os.ReadDir(path)
		for _, e := range ents {
			os.RemoveAll(filepath.Join(path, e.Name()))
		}
		removeMade()
	}, nil
}

// isDir says whether p is a directory itself, not a link to one.
func isDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

// checkApart refuses resolved paths o and d that are the same directory
// or nested.
func checkApart(o, d string) error {
	switch {
	case o == d:
		return fmt.Errorf("%w: both are %s", errNested, o)
	case within(o, d):
		return fmt.Errorf("%w: %s lies inside %s", errNested, o, d)
	case within(d, o):
		return fmt.Errorf("%w: %s lies inside %s", errNested, d, o)
	}
	return nil
}

// resolvePath is p made absolute with every symbolic link in it replaced
// by its target, dangling links included, and "." and ".." applied in
// order as the kernel applies them: a ".." after a link leaves the link's
// target, not the link's directory. The names past the longest existing
// prefix are directories to create: a ".." among them drops the one before
// it, which is then not created.
func resolvePath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("workload: %w", err)
		}
		p = wd + string(filepath.Separator) + p // not filepath.Join: it would apply ".." before the links
	}
	cur, todo := splitAbs(p)
	for links := 0; len(todo) > 0; {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return "", fmt.Errorf("workload: resolving %s: %w", p, err)
		case fi.Mode()&fs.ModeSymlink != 0:
			if links++; links > maxLinks {
				return "", fmt.Errorf("workload: resolving %s: more than %d symbolic links", p, maxLinks)
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", fmt.Errorf("workload: resolving %s: %w", p, err)
			}
			var names []string
			if filepath.IsAbs(target) {
				cur, names = splitAbs(target)
			} else {
				names = splitNames(target)
			}
			todo = append(names, todo...)
			continue
		}
		cur = next
	}
	return cur, nil
}

// splitAbs splits the absolute path p into its root and its names.
func splitAbs(p string) (root string, names []string) {
	vol := filepath.VolumeName(p)
	return vol + string(filepath.Separator), splitNames(p[len(vol):])
}

// splitNames is the names of the path p, empty ones dropped.
func splitNames(p string) []string {
	return strings.FieldsFunc(filepath.ToSlash(p), func(r rune) bool { return r == '/' })
}

// within says whether path p lies strictly inside directory d (both clean
// and absolute).
func within(p, d string) bool {
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// checkWritable creates and removes a file in dir.
func checkWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".workload-write-check-*")
	if err != nil {
		return fmt.Errorf("workload: report directory not writable: %w", err)
	}
	f.Close()
	return os.Remove(f.Name())
}
