package whatif

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// errNotRegular reports a file of the database that is not a regular file:
// a named pipe, a socket or a device. whatif opens none of them, since
// opening a named pipe for reading waits for a writer that may never come.
var errNotRegular = errors.New("whatif: not a regular file")

// checkFiles returns an error naming the first entry of dir that is neither
// a regular file nor a directory, symbolic links followed. Pebble opens the
// MANIFEST, OPTIONS, WAL and table files of the directory, and whatif its
// LOCK and tables: all must be regular files.
func checkFiles(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("whatif: %w", err)
	}
	for _, e := range ents {
		if e.Type().IsRegular() || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("whatif: %w", err)
		}
		if !st.Mode().IsRegular() && !st.IsDir() {
			return notRegular(path, st.Mode())
		}
	}
	return nil
}

// notRegular returns the errNotRegular error for path.
func notRegular(path string, m fs.FileMode) error {
	kind := "an irregular file"
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Errorf("%w: %s is %s", errNotRegular, path, kind)
}
