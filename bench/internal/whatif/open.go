package whatif

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/cockroachkvs"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Comparers are the comparer names Config.Comparer accepts.
var Comparers = []string{"default", "cockroach"}

// errReadOnly is what the file system under Analyze returns to any attempt
// to create, change or remove a file: Analyze never writes to the database.
var errReadOnly = errors.New("whatif: the database is opened read-only; refusing to write")

// errInUse reports a database that a running Pebble holds open.
var errInUse = errors.New("whatif: the database is in use (a running Pebble holds its LOCK file); run whatif on a checkpoint or a copy")

// errNotDB reports a directory that holds no Pebble database.
var errNotDB = errors.New("whatif: not a Pebble database")

// comparerOptions returns Pebble options for the named comparer.
func comparerOptions(name string) (*pebble.Options, error) {
	o := &pebble.Options{}
	switch name {
	case "", "default":
		o.Comparer = pebble.DefaultComparer
	case "cockroach":
		o.Comparer = &cockroachkvs.Comparer
		o.KeySchema = cockroachkvs.KeySchema.Name
		o.KeySchemas = sstable.MakeKeySchemas(&cockroachkvs.KeySchema)
	default:
		return nil, fmt.Errorf("whatif: unknown comparer %q (known: %s)", name, strings.Join(Comparers, ", "))
	}
	return o, nil
}

// readOnlyFS passes reads to the wrapped file system and refuses every call
// that could create, modify or remove a file. Lock returns a no-op closer:
// Analyze checks and holds the database lock itself, without writing. Open
// refuses what is neither a regular file nor a directory (errNotRegular)
// instead of waiting on a named pipe.
type readOnlyFS struct {
	vfs.FS
}

func (fs readOnlyFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	// A file that cannot be stat'ed is left to Open, whose error Pebble
	// expects (a file that does not exist, for one).
	if st, err := os.Stat(name); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		return nil, notRegular(name, st.Mode())
	}
	return fs.FS.Open(name, opts...)
}

func (readOnlyFS) Create(name string, _ vfs.DiskWriteCategory) (vfs.File, error) {
	return nil, fmt.Errorf("create %s: %w", name, errReadOnly)
}

func (readOnlyFS) Link(oldname, newname string) error {
	return fmt.Errorf("link %s: %w", newname, errReadOnly)
}

func (readOnlyFS) OpenReadWrite(name string, _ vfs.DiskWriteCategory, _ ...vfs.OpenOption) (vfs.File, error) {
	return nil, fmt.Errorf("open %s for writing: %w", name, errReadOnly)
}

func (readOnlyFS) Remove(name string) error { return fmt.Errorf("remove %s: %w", name, errReadOnly) }

func (readOnlyFS) RemoveAll(name string) error {
	return fmt.Errorf("remove %s: %w", name, errReadOnly)
}

func (readOnlyFS) Rename(oldname, newname string) error {
	return fmt.Errorf("rename %s: %w", oldname, errReadOnly)
}

func (readOnlyFS) ReuseForWrite(oldname, newname string, _ vfs.DiskWriteCategory) (vfs.File, error) {
	return nil, fmt.Errorf("reuse %s: %w", oldname, errReadOnly)
}

func (readOnlyFS) MkdirAll(dir string, _ os.FileMode) error {
	return fmt.Errorf("mkdir %s: %w", dir, errReadOnly)
}

func (readOnlyFS) Lock(string) (io.Closer, error) { return nopCloser{}, nil }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// optionsNames returns the comparer and merger names that the database's
// newest OPTIONS file records ("" where it records none).
func optionsNames(fs vfs.FS, path string) (comparer, merger string, err error) {
	f, err := fs.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return "", "", err
	}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = line[1 : len(line)-1]
			continue
		}
		if section != "Options" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "comparer":
			comparer = strings.TrimSpace(v)
		case "merger":
			merger = strings.TrimSpace(v)
		}
	}
	return comparer, merger, sc.Err()
}

// openReadOnly opens the database in dir without writing to it: it checks
// that dir holds a Pebble database of regular files that no process has
// open, that its
// comparer is the one asked for, takes a shared lock on its LOCK file (so
// that no Pebble opens it meanwhile) and opens it with Options.ReadOnly
// through a file system that refuses writes. The returned function closes
// the database and releases the lock; given an error that holds a fatal
// error, it releases the lock only and leaves the database to the process's
// exit (see catch).
func openReadOnly(dir, comparerName string) (*pebble.DB, *pebble.Options, vfs.FS, func(error) error, error) {
	o, err := comparerOptions(comparerName)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	fs := readOnlyFS{vfs.Default}
	if st, err := os.Stat(dir); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("whatif: %w", err)
	} else if !st.IsDir() {
		return nil, nil, nil, nil, fmt.Errorf("%w: %s is not a directory", errNotDB, dir)
	}
	if err := checkFiles(dir); err != nil {
		return nil, nil, nil, nil, err
	}
	desc, err := pebble.Peek(dir, fs)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("%w: %s: %v", errNotDB, dir, err)
	}
	if !desc.Exists {
		return nil, nil, nil, nil, fmt.Errorf("%w: %s has no MANIFEST", errNotDB, dir)
	}
	if desc.OptionsFilename != "" {
		cmpName, mergerName, err := optionsNames(fs, desc.OptionsFilename)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("whatif: reading %s: %w", desc.OptionsFilename, err)
		}
		if cmpName != "" && cmpName != o.Comparer.Name {
			return nil, nil, nil, nil, fmt.Errorf("whatif: the database's comparer is %q (%s), -comparer %s is %q",
				cmpName, desc.OptionsFilename, orDefault(comparerName), o.Comparer.Name)
		}
		// whatif never merges values; the name only has to match for Open.
		if mergerName != "" && mergerName != "nullptr" && mergerName != pebble.DefaultMerger.Name {
			m := *pebble.DefaultMerger
			m.Name = mergerName
			o.Merger = &m
		}
	}
	unlock, err := lockShared(fs.PathJoin(dir, "LOCK"))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	o.FS = fs
	o.ReadOnly = true
	// The measurement through Pebble reads the filters whatif reads; no
	// Pebble read comes before listTables has checked every block.
	o.Filters = maps.Clone(readers)
	o.Logger = logger{}
	o.EventListener = events()
	o.DisableAutomaticCompactions = true
	var db *pebble.DB
	err = catch(func() (err error) {
		db, err = pebble.Open(dir, o)
		return err
	})
	if err != nil {
		_ = unlock()
		return nil, nil, nil, nil, fmt.Errorf("whatif: opening %s read-only: %w", dir, namePath(err))
	}
	closeAll := func(cause error) error {
		var f fatal
		if errors.As(cause, &f) {
			return unlock()
		}
		return errors.Join(db.Close(), unlock())
	}
	return db, o, fs, closeAll, nil
}

func orDefault(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

// namePath returns err, led by the path of the file it reports corrupt when
// Pebble's message does not name it.
func namePath(err error) error {
	info := pebble.ExtractDataCorruptionInfo(err)
	if info == nil || info.Path == "" || strings.Contains(err.Error(), info.Path) {
		return err
	}
	return fmt.Errorf("%s: %w", info.Path, err)
}
