package whatif

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// lockShared takes a shared open-file-description lock on the database's
// LOCK file, opened read-only, and returns the function that releases it.
// Pebble holds an exclusive fcntl lock on LOCK while the database is open;
// an OFD lock conflicts with it even within one process, so a held database
// is reported as errInUse, and while whatif holds its shared lock no Pebble
// can open the database. A directory without LOCK (a checkpoint, a copy)
// needs no lock. Nothing is written: the file is opened O_RDONLY and locks
// change neither its bytes nor its times.
//
// Closing a descriptor of the file drops every fcntl lock this process holds
// on it. So when the lock is refused, which is also what happens when this
// very process has the database open, the descriptor is kept open for the
// life of the process instead of being closed: one descriptor, and the
// process keeps its lock.
func lockShared(path string) (func() error, error) {
	f, err := openLock(path)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return func() error { return nil }, nil
	}
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		keepOpen(f)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return nil, errInUse
		}
		return nil, fmt.Errorf("whatif: locking %s: %w", path, err)
	}
	return f.Close, nil
}
