//go:build unix

package whatif

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// openLock opens the database's LOCK file read-only for lockShared. It
// returns a nil file and no error when there is none: a directory without
// LOCK (a checkpoint, a copy) needs no lock. O_NONBLOCK: opening a named pipe
// does not wait for a writer, and the file is refused unless it is regular.
func openLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("whatif: %w", err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("whatif: %w", err)
		}
		return nil, notRegular(path, st.Mode())
	}
	return f, nil
}

var kept struct {
	sync.Mutex
	files []*os.File
}

// keepOpen keeps f, and so its descriptor, open until the process exits:
// closing a descriptor of a file drops every fcntl lock the process holds on
// it.
func keepOpen(f *os.File) {
	kept.Lock()
	defer kept.Unlock()
	kept.files = append(kept.files, f)
}
